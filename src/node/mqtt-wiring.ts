/**
 * The node's MQTT side: the broker settings and the one connection, made before the drivers
 * (MQTT sensors and actuators share it with the bridge), then the bridge on the daemon and the
 * watch for another process with this node id, started before or after regulation (see
 * Node.start) and stopped after the daemon.
 */
import os from 'node:os';
import type { Logger } from 'pino';
import { type Config, mqttOf } from '../config/schema.js';
import type { DesiredCommands } from '../control/desired-commands.js';
import type { Daemon } from '../daemon/daemon.js';
import { type MqttTransport, offlineTransport } from '../drivers/mqtt/transport.js';
import type { MqttBridge } from '../mqtt/bridge.js';
import type { MqttConnection, MqttConnectionOptions, MqttSettings } from '../mqtt/client.js';
import { NodePresence, newInstanceRecord } from '../mqtt/presence.js';
import {
  configUsesMqtt,
  createMqttBridge,
  createMqttConnection,
  mqttSettings,
  waitForConnection,
} from '../mqtt/setup.js';
import { topicsFor } from '../mqtt/topics.js';
import type { StoreSupervisor } from '../store/supervisor.js';
import type { Clock } from '../time/clock.js';

/**
 * With MQTT sensors or actuators, regulation starts once the broker is connected or after
 * this long, ms: their first cycle would otherwise fail its writes. Never longer: the other
 * loops must not wait for a broker that is down.
 */
export const MQTT_START_WAIT_MS = 5_000;

/** The broker settings and connection (none without a broker), and what the drivers talk to. */
export interface NodeConnection {
  settings: MqttSettings | undefined;
  connection: MqttConnection | undefined;
  /** The connection, or a stand-in that says why there is none. */
  transport: MqttTransport;
}

/**
 * MQTT is optional and never blocks regulation: a bad password file disables it, loudly.
 * The connection is made, not started (the bridge starts it).
 */
export function openMqtt(
  config: Config,
  opts: { mqttUrl?: string | undefined; env?: NodeJS.ProcessEnv; mqttConnection?: MqttConnectionOptions },
  logger: Logger,
): NodeConnection {
  let settings: MqttSettings | undefined;
  let problem: string | undefined;
  try {
    settings = mqttSettings(config, opts.mqttUrl, opts.env);
  } catch (error) {
    problem = (error as Error).message;
    logger.error(`${problem}; regulating without MQTT`);
  }
  const connection = settings ? createMqttConnection(settings, logger, opts.mqttConnection) : undefined;
  const transport =
    connection ?? offlineTransport(problem ? `MQTT disabled (${problem})` : 'no MQTT broker configured');
  return { settings, connection, transport };
}

/** What the bridge and the presence watch are built on. */
export interface NodeBridgeParts {
  settings: MqttSettings | undefined;
  connection: MqttConnection | undefined;
  config: Config;
  daemon: Daemon;
  store: StoreSupervisor;
  commands: DesiredCommands;
  clock: Clock;
  /** See Node.guardClock. */
  guardClock: Clock;
  logger: Logger;
}

/**
 * The bridge on the daemon's control port, subscribed to its statuses and applied configs, and
 * the presence watch beside it; neither without a broker. Built with the node, started by it.
 */
export class NodeBridge {
  private bridgeInUse: MqttBridge | undefined;
  /** Notices another process with this node id on the broker (with the bridge). */
  private presence: NodePresence | undefined;
  private unsubscribeBridge: (() => void) | undefined;
  private readonly connection: MqttConnection | undefined;
  private readonly logger: Logger;
  /** With MQTT drivers the bridge starts before regulation (see `connect`). */
  readonly startsFirst: boolean;

  constructor(parts: NodeBridgeParts) {
    const { settings, connection, daemon } = parts;
    this.connection = connection;
    this.logger = parts.logger;
    if (settings && connection) {
      const bridge = createMqttBridge({
        settings,
        connection,
        control: daemon,
        desired: parts.store.desired,
        clock: parts.clock,
        guardClock: parts.guardClock,
        logger: parts.logger,
        commands: parts.commands,
      });
      this.unsubscribeBridge = daemon.subscribe({
        status: (status) => bridge.publishStatus(status),
        configApplied: (_config, removed) => bridge.configChanged(removed),
      });
      this.presence = buildPresence(parts, settings, connection);
      this.bridgeInUse = bridge;
    }
    this.startsFirst = configUsesMqtt(parts.config) && this.bridgeInUse !== undefined;
  }

  /** The bridge while it runs (none without a broker, or when it could not start). */
  get bridge(): MqttBridge | undefined {
    return this.bridgeInUse;
  }

  /** Starts the presence watch and the bridge (which starts the connection); a failure is logged. */
  start(): void {
    try {
      // Before the bridge starts the connection: its subscription goes out with the first connect.
      this.presence?.start();
      this.bridgeInUse?.start();
    } catch (error) {
      this.logger.error({ err: error }, 'MQTT could not start; regulating without it');
      this.presence?.stop();
      this.presence = undefined;
      this.unsubscribeBridge?.();
      this.bridgeInUse = undefined;
    }
  }

  /** Starts the bridge and waits (boundedly) for the broker before regulation starts. */
  async connect(): Promise<void> {
    this.start();
    if (!this.bridgeInUse || !this.connection) return;
    if (!(await waitForConnection(this.connection, MQTT_START_WAIT_MS))) {
      this.logger.warn(
        `MQTT broker not connected within ${MQTT_START_WAIT_MS / 1000} s; regulating anyway (MQTT devices unknown until it is)`,
      );
    }
  }

  /** After the daemon stopped: the presence watch, then the bridge (its goodbye, the connection). */
  async stop(): Promise<void> {
    this.presence?.stop();
    await this.bridgeInUse?.stop();
  }
}

/** Same node id on the broker twice: logged with the fix and recorded as an event. */
function buildPresence(
  { config, store, daemon, logger }: NodeBridgeParts,
  settings: MqttSettings,
  connection: MqttConnection,
): NodePresence {
  const mqtt = mqttOf(config);
  return new NodePresence({
    connection,
    topic: topicsFor(mqtt.baseTopic, config.node.id).instance,
    nodeId: config.node.id,
    clientId: settings.clientId,
    // Wall-clock start time: a person compares it with the other host's.
    self: newInstanceRecord(os.hostname(), Date.now()),
    logger: logger.child({ component: 'mqtt' }),
    republishEveryMs: mqtt.heartbeatS * 1000,
    onClash: (clash) => {
      store.desired.recordEvent({
        kind: 'node-id-clash',
        message: clash.message,
        data: { sign: clash.sign, ...(clash.other ? { other: clash.other } : {}) },
      });
      daemon.setNodeCondition('NodeIdUnique', {
        healthy: false,
        reason: 'NodeIdClash',
        message: clash.message,
      });
    },
    onClear: () =>
      daemon.setNodeCondition('NodeIdUnique', {
        healthy: true,
        reason: 'Unique',
        message: 'no other process with this node id seen on the broker lately',
      }),
  });
}
