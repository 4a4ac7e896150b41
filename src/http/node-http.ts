import type { Logger } from 'pino';
import { mqttOf } from '../config/schema.js';
import type { DesiredCommands } from '../control/desired-commands.js';
import type { Daemon } from '../daemon/daemon.js';
import type { MqttConnection } from '../mqtt/client.js';
import { FleetCollector } from '../mqtt/fleet.js';
import type { StoreSupervisor } from '../store/supervisor.js';
import type { WatchdogGate } from '../systemd/watchdog.js';
import type { Clock } from '../time/clock.js';
import type { AlertChannelFigures } from './alert-metrics.js';
import type { ApiDeps } from './api-deps.js';
import { NodeMetrics, UNKNOWN_LOOP_LABEL } from './metrics.js';
import { nodeApiDeps } from './node-api.js';
import { HttpServer } from './server.js';
import { type HttpSettings, httpSettings } from './settings.js';

/** The parts of a node (src/node.ts) that the metrics and the API read. */
export interface NodeHttpParts {
  daemon: Daemon;
  store: StoreSupervisor;
  gate: WatchdogGate;
  connection: MqttConnection | undefined;
  commands: DesiredCommands;
  logger: Logger;
  /** The node's alerts: each channel's figures for /metrics, and the test alert. */
  alerts?: NonNullable<ApiDeps['alerts']> & { figures(): AlertChannelFigures[] };
}

/** Prometheus metrics: fed by the daemon's events and the command path, read at scrape time. */
export function buildNodeMetrics({
  daemon,
  store,
  connection,
  commands,
  logger,
  alerts,
}: NodeHttpParts): NodeMetrics {
  const metrics = new NodeMetrics({
    nodeId: daemon.currentConfig().node.id,
    unitOf: (loop) => daemon.currentConfig().loops[loop]?.unit ?? '',
    logger,
  });
  metrics.setCollectors({
    storageFailedOperations: () => store.failedOperations,
    storageHealthy: () => store.health().healthy,
    recordedValues: () => daemon.recordedValues.current(),
    ...(alerts ? { alerts: () => alerts.figures() } : {}),
    ...(connection ? { mqttConnected: () => connection.connected } : {}),
  });
  daemon.subscribe({
    status: (status) => metrics.loopStatus(status),
    cycleDuration: (loop, durationMs) => metrics.cycleDuration(loop, durationMs),
    configApplied: (_config, removed) => {
      for (const loop of removed) metrics.removeLoop(loop);
    },
  });
  commands.onAnswer((request, answer) =>
    metrics.command(
      request.source,
      answer.known ? request.loop : UNKNOWN_LOOP_LABEL,
      answer.outcome.accepted,
    ),
  );
  return metrics;
}

/**
 * The HTTP API and dashboard, unless the config turns it off. A token file that cannot be read
 * keeps it off, loudly (ApiServing False on every loop): a server off loopback must never run
 * without its token. Its state is shown on every loop as the ApiServing condition. The metrics
 * are built with it (they are served nowhere else).
 */
export function buildHttpServer(
  parts: NodeHttpParts & {
    clock: Clock;
    /** Overrides the config's http.host/port (`run --http-port`, tests), and the retry interval. */
    listen?: { host?: string; port?: number; retryEveryMs?: number };
  },
): HttpServer | undefined {
  const { daemon, logger } = parts;
  const { http } = daemon.currentConfig();
  if (!http.enabled) return undefined;
  let settings: HttpSettings;
  try {
    settings = httpSettings(http, parts.listen ?? {});
  } catch (error) {
    const message = (error as Error).message;
    logger.error(`${message}; regulation goes on`);
    daemon.setNodeCondition('ApiServing', { healthy: false, reason: 'TokenUnreadable', message });
    return undefined;
  }
  const retryEveryMs = parts.listen?.retryEveryMs;
  // The fleet view reads the other nodes' retained states through this node's connection.
  const fleet = parts.connection
    ? new FleetCollector({
        connection: parts.connection,
        baseTopic: mqttOf(daemon.currentConfig()).baseTopic,
        logger: logger.child({ component: 'fleet' }),
      })
    : undefined;
  fleet?.start();
  const metrics = buildNodeMetrics(parts);
  const server = new HttpServer({
    settings,
    ...(retryEveryMs === undefined ? {} : { retryEveryMs }),
    logger: logger.child({ component: 'http' }),
    api: nodeApiDeps({
      ...parts,
      metrics,
      ...(fleet ? { fleet } : {}),
      submit: (command) => parts.commands.submit(command),
      startedAtMs: parts.clock.nowMs(),
    }),
    onServing: (state) =>
      daemon.setNodeCondition(
        'ApiServing',
        state.serving
          ? { healthy: true, reason: 'Listening', message: `dashboard and API at ${state.url}` }
          : { healthy: false, reason: state.reason, message: state.message },
      ),
  });
  metrics.setCollectors({
    httpAuthFailures: () => server.throttle.failures,
    httpAuthThrottled: () => server.throttle.throttled,
    httpLockedOutAddresses: () => server.throttle.lockedOut(),
    httpConnectionsEvicted: () => server.connections.evicted,
    httpConnectionsRefused: () => server.connections.refused,
  });
  return server;
}
