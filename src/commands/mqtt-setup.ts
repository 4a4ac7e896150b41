import fs from 'node:fs';
import type { Logger } from 'pino';
import { type Config, usesMqtt } from '../config/schema.js';
import type { Daemon } from '../daemon.js';
import { MqttBridge } from '../mqtt/bridge.js';
import { MqttConnection, type MqttSettings } from '../mqtt/client.js';
import { topicsFor } from '../mqtt/topics.js';
import type { Clock } from '../runtime/clock.js';
import type { DesiredStore } from '../store/desired-store.js';
import { homeostatVersion } from '../version.js';

/**
 * The broker settings from the config (and `--mqtt-url`), reading the password and TLS files.
 * Returns undefined when no broker is configured; throws a message naming the file to fix.
 */
export function mqttSettings(
  config: Config,
  urlOverride: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): MqttSettings | undefined {
  const mqtt = config.mqtt;
  const url = urlOverride ?? mqtt?.url;
  if (!url) return undefined;
  const read = (file: string, what: string) => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new Error(`mqtt: cannot read the ${what} ${file}: ${(error as Error).message}`);
    }
  };
  const password = mqtt?.passwordFile
    ? read(mqtt.passwordFile, 'password file').toString('utf8').trim()
    : env.HOMEOSTAT_MQTT_PASSWORD;
  return {
    url,
    clientId: mqtt?.clientId ?? `homeostat-${config.node.id}`,
    protocolVersion: mqtt?.protocolVersion ?? 5,
    baseTopic: topicsFor(mqtt?.baseTopic ?? 'homeostat', config.node.id).base,
    ...(mqtt?.username ? { username: mqtt.username } : {}),
    ...(password ? { password } : {}),
    ...(mqtt?.tls?.caFile ? { ca: read(mqtt.tls.caFile, 'CA file') } : {}),
    ...(mqtt?.tls?.certFile ? { cert: read(mqtt.tls.certFile, 'client certificate') } : {}),
    ...(mqtt?.tls?.keyFile ? { key: read(mqtt.tls.keyFile, 'client key') } : {}),
  };
}

/**
 * The node's one MQTT connection (not started): `homeostat run` builds it before the drivers,
 * which share it with the bridge, and the bridge starts it.
 */
export function createMqttConnection(settings: MqttSettings, logger: Logger): MqttConnection {
  return new MqttConnection(settings, logger.child({ component: 'mqtt' }));
}

/** Whether any sensor or actuator of the config talks to the broker. */
export function configUsesMqtt(config: Config): boolean {
  return [...Object.values(config.sensors), ...Object.values(config.actuators)].some(usesMqtt);
}

/**
 * Resolves true once `connection` is up, or false after `timeoutMs` (wall clock: the broker
 * lives in real time). For a bounded wait before regulation starts, never an unbounded one.
 */
export function waitForConnection(
  connection: Pick<MqttConnection, 'connected' | 'onConnect'>,
  timeoutMs: number,
): Promise<boolean> {
  if (connection.connected) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    let settled = false;
    const settle = (up: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(up);
    };
    const timer = setTimeout(() => settle(false), timeoutMs);
    // onConnect listeners cannot be removed: this one does nothing once settled.
    connection.onConnect(() => settle(true));
  });
}

/**
 * Builds the MQTT bridge for a daemon (not started). `connection`: the node's shared one (the
 * MQTT drivers use it too); without it, a connection is made from `settings`.
 */
export function createMqttBridge(opts: {
  settings: MqttSettings;
  connection?: MqttConnection;
  config: Config;
  daemon: () => Daemon;
  desired: DesiredStore;
  clock: Clock;
  logger: Logger;
}): MqttBridge {
  const { settings, config } = opts;
  const logger = opts.logger.child({ component: 'mqtt' });
  return new MqttBridge({
    connection: opts.connection ?? new MqttConnection(settings, logger),
    topics: topicsFor(config.mqtt?.baseTopic ?? 'homeostat', config.node.id),
    config: () => opts.daemon().currentConfig(),
    desired: opts.desired,
    statuses: () => opts.daemon().statuses(),
    triggerLoop: (loop, reason) => opts.daemon().triggerLoop(loop, reason),
    resetFault: (loop, requestedAtMs) => opts.daemon().resetFault(loop, 'mqtt', requestedAtMs),
    clock: opts.clock,
    logger,
    version: homeostatVersion(),
    heartbeatMs: (config.mqtt?.heartbeatS ?? 60) * 1000,
  });
}
