import type { Logger } from 'pino';
import { readCappedFile } from '../capped-file.js';
import { type Config, mqttOf, usesMqtt } from '../config/schema.js';
import type { DesiredCommands } from '../control/desired-commands.js';
import type { DesiredStore } from '../store/desired-store.js';
import type { Clock } from '../time/clock.js';
import { homeostatVersion } from '../version.js';
import { type LoopControl, MqttBridge } from './bridge.js';
import { MqttConnection, type MqttConnectionOptions, type MqttSettings } from './client.js';
import { topicsFor } from './topics.js';

/**
 * The broker settings from the config (and `--mqtt-url`), reading the password and TLS files.
 * Returns undefined when no broker is configured; throws a message naming the file to fix.
 */
export function mqttSettings(
  config: Config,
  urlOverride: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): MqttSettings | undefined {
  const mqtt = mqttOf(config);
  const url = urlOverride ?? config.mqtt?.url;
  if (!url) return undefined;
  const password = mqtt.passwordFile
    ? readCappedFile(mqtt.passwordFile, 'mqtt: cannot read the password file', MAX_SECRET_FILE_BYTES)
        .toString('utf8')
        .trim()
    : env.HOMEOSTAT_MQTT_PASSWORD;
  const read = (file: string, what: string) =>
    readCappedFile(file, `mqtt: cannot read the ${what}`, MAX_TLS_FILE_BYTES);
  return {
    url,
    clientId: mqtt.clientId,
    protocolVersion: mqtt.protocolVersion,
    baseTopic: topicsFor(mqtt.baseTopic, config.node.id).base,
    ...(mqtt.username ? { username: mqtt.username } : {}),
    ...(password ? { password } : {}),
    ...(mqtt.tls?.caFile ? { ca: read(mqtt.tls.caFile, 'CA file') } : {}),
    ...(mqtt.tls?.certFile ? { cert: read(mqtt.tls.certFile, 'client certificate') } : {}),
    ...(mqtt.tls?.keyFile ? { key: read(mqtt.tls.keyFile, 'client key') } : {}),
  };
}

/** Largest password file accepted, bytes: a password is a line, not a file's worth. */
export const MAX_SECRET_FILE_BYTES = 4_096;
/** Largest TLS file accepted (CA bundle, certificate, key), bytes: a full CA bundle is ~220 KB. */
export const MAX_TLS_FILE_BYTES = 1_048_576;

/**
 * The node's one MQTT connection (not started): the node builds it before the drivers, which
 * share it with the bridge, and the bridge starts it.
 */
export function createMqttConnection(
  settings: MqttSettings,
  logger: Logger,
  options?: MqttConnectionOptions,
): MqttConnection {
  return new MqttConnection(settings, logger.child({ component: 'mqtt' }), options);
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
 * MQTT drivers use it too); without it, a connection is made from `settings` (with
 * `connectionOptions`: tests shorten the reconnect delays). `control`: the daemon, which the
 * bridge reads and drives; the bridge hears of statuses through the daemon's event sink.
 */
export function createMqttBridge(opts: {
  settings: MqttSettings;
  connection?: MqttConnection;
  connectionOptions?: MqttConnectionOptions;
  control: LoopControl;
  desired: DesiredStore;
  clock: Clock;
  /** Real time for the guards against floods (see MqttBridgeOptions.guardClock); default `clock`. */
  guardClock?: Clock;
  logger: Logger;
  /** The command path shared with the HTTP API (one change budget per loop); default its own. */
  commands?: DesiredCommands;
}): MqttBridge {
  const { settings, control } = opts;
  const config = control.currentConfig();
  const logger = opts.logger.child({ component: 'mqtt' });
  return new MqttBridge({
    connection: opts.connection ?? new MqttConnection(settings, logger, opts.connectionOptions),
    topics: topicsFor(mqttOf(config).baseTopic, config.node.id),
    control,
    desired: opts.desired,
    clock: opts.clock,
    ...(opts.guardClock ? { guardClock: opts.guardClock } : {}),
    logger,
    version: homeostatVersion(),
    heartbeatMs: mqttOf(config).heartbeatS * 1000,
    ...(opts.commands ? { commands: opts.commands } : {}),
  });
}
