import { loadConfigFile, loadConfigFileOffThread } from '../config/load.js';
import { Daemon } from '../daemon.js';
import { buildDrivers, speedProblem } from '../drivers/build.js';
import { offlineTransport } from '../drivers/mqtt/transport.js';
import { createLogger, type LogFormat } from '../logger.js';
import type { MqttBridge } from '../mqtt/bridge.js';
import type { MqttConnection, MqttSettings } from '../mqtt/client.js';
import { redactUrl } from '../redact.js';
import type { Clock } from '../runtime/clock.js';
import { ConfigWatcher } from '../runtime/config-watcher.js';
import { RealClock } from '../runtime/real-clock.js';
import { ScaledClock } from '../runtime/scaled-clock.js';
import { StoreSupervisor } from '../store/supervisor.js';
import { createNotifier, NOTIFY_UNAVAILABLE_EXIT_CODE, type Notifier } from '../systemd/notify.js';
import { monotonicClock, systemdStatusLine, WatchdogGate } from '../systemd/watchdog.js';
import {
  configUsesMqtt,
  createMqttBridge,
  createMqttConnection,
  mqttSettings,
  waitForConnection,
} from './mqtt-setup.js';

/**
 * With MQTT sensors or actuators, regulation starts once the broker is connected or after
 * this long, ms: their first cycle would otherwise fail its writes. Never longer: the other
 * loops must not wait for a broker that is down.
 */
const MQTT_START_WAIT_MS = 5_000;

export interface RunOptions {
  configPath: string;
  dbPath: string;
  /** --db was given (it then wins over the config's storage.path). */
  dbPathGiven?: boolean;
  mqttUrl?: string | undefined;
  speed?: number | undefined;
  logFormat?: LogFormat | undefined;
}

/**
 * `homeostat run`: validates the config, builds the daemon and runs it until SIGINT/SIGTERM,
 * which drive every actuator to its safe state before exiting 0.
 */
export async function runCommand(options: RunOptions): Promise<number> {
  const logger = createLogger({ format: options.logFormat });
  // First of all: under a watchdog, a notify socket we cannot use means systemd would kill us
  // every WatchdogSec. Exit at once instead (the unit does not restart after this exit code).
  let notifier: Notifier;
  try {
    notifier = createNotifier(process.env, {
      onSendError: (error, message) =>
        logger.warn({ err: error }, `systemd notify: could not send ${message}`),
    });
  } catch (error) {
    logger.fatal((error as Error).message);
    return NOTIFY_UNAVAILABLE_EXIT_CODE;
  }
  if (notifier.problem) logger.warn(notifier.problem);
  else if (notifier.enabled) {
    logger.info({ watchdogPingMs: notifier.watchdogIntervalMs }, 'systemd notify enabled');
  }
  const loaded = loadConfigFile(options.configPath);
  if (!loaded.ok) {
    for (const line of loaded.errors) logger.error(`config: ${line}`);
    notifier.close();
    return 1;
  }
  const config = loaded.config;
  const speed = options.speed ?? 1;
  const clock: Clock = speed === 1 ? new RealClock() : new ScaledClock(speed);

  // MQTT is optional and never blocks regulation: a bad password file disables it, loudly.
  // One connection per node, made before the drivers: MQTT sensors and actuators share it
  // with the bridge (which starts it).
  let settings: MqttSettings | undefined;
  let mqttProblem: string | undefined;
  try {
    settings = mqttSettings(config, options.mqttUrl);
  } catch (error) {
    mqttProblem = (error as Error).message;
    logger.error(`${mqttProblem}; regulating without MQTT`);
  }
  const connection: MqttConnection | undefined = settings
    ? createMqttConnection(settings, logger)
    : undefined;
  const drivers = buildDrivers(config, () => clock.nowMs(), {
    mqtt:
      connection ??
      offlineTransport(mqttProblem ? `MQTT disabled (${mqttProblem})` : 'no MQTT broker configured'),
    logger: logger.child({ component: 'drivers' }),
  });
  if (speed !== 1) {
    const problem = speedProblem(drivers);
    if (problem) {
      logger.error(problem);
      notifier.close();
      return 1;
    }
  }
  const rawMqttUrl = options.mqttUrl ?? config.mqtt?.url;
  const mqttUrl = rawMqttUrl === undefined ? undefined : redactUrl(rawMqttUrl);
  logger.info(
    { config: options.configPath, mqttUrl, speed },
    `starting homeostat (node ${config.node.id})${speed !== 1 ? ` at ${speed}× speed` : ''}`,
  );

  // --db wins over storage.path: the command line is the more specific intent.
  const dbPath = options.dbPathGiven ? options.dbPath : (config.storage.path ?? options.dbPath);
  // Never stops the start: a file that cannot be opened (full disk, unwritable directory) is
  // replaced by an in-memory stand-in and retried; see StoreSupervisor.
  const store = new StoreSupervisor({
    path: dbPath,
    clock,
    logger: logger.child({ component: 'store' }),
    retention: config.storage,
  });
  logger.info(
    { db: dbPath },
    `state in ${dbPath}${store.onStandIn ? ' (not open yet: regulating from memory)' : ''}`,
  );

  let bridge: MqttBridge | undefined;
  // READY=1 once every loop has cycled; WATCHDOG=1 only while every loop keeps cycling.
  const gate = new WatchdogGate({
    clock: monotonicClock,
    notifier,
    pingEveryMs: notifier.watchdogIntervalMs,
    summary: () =>
      systemdStatusLine(daemon.statuses(), (loop) => daemon.currentConfig().loops[loop]?.unit ?? ''),
    onWithheld: (silent) =>
      logger.error(
        { silent },
        `watchdog ping withheld: no successful cycle from ${silent.map((l) => l.name).join(', ')}; systemd will restart homeostat`,
      ),
  });
  const daemon: Daemon = new Daemon({
    liveness: gate,
    config,
    configText: loaded.text,
    clock,
    logger,
    drivers,
    store,
    statusEveryMs: 60_000 * Math.max(1, Math.min(speed, 5)),
    onStatus: (status) => bridge?.publishStatus(status),
    onConfigApplied: (_config, removed) => bridge?.configChanged(removed),
  });
  if (settings && connection) {
    bridge = createMqttBridge({
      settings,
      connection,
      config,
      daemon: () => daemon,
      desired: store.desired,
      clock,
      logger,
    });
  }
  const startBridge = () => {
    try {
      bridge?.start();
    } catch (error) {
      logger.error({ err: error }, 'MQTT could not start; regulating without it');
      bridge = undefined;
    }
  };
  // Without MQTT drivers the bridge starts after the daemon, as the status it publishes exists
  // by then. With them, it starts first and regulation waits (boundedly) for the broker.
  const brokerFirst = configUsesMqtt(config) && bridge !== undefined;
  const connected = async () => {
    startBridge();
    if (!bridge || !connection) return;
    if (!(await waitForConnection(connection, MQTT_START_WAIT_MS))) {
      logger.warn(
        `MQTT broker not connected within ${MQTT_START_WAIT_MS / 1000} s; regulating anyway (MQTT devices unknown until it is)`,
      );
    }
  };
  // Hot reload: SIGHUP or an edit of the file. Reloads never overlap and never run before the
  // start finished (`pending` chains them); a stop waits for both. A reload that fails never
  // breaks the chain (later edits still apply); one the database refused is retried by the
  // daemon with backoff.
  let pending: Promise<unknown> = (brokerFirst ? connected() : Promise.resolve())
    .then(() => daemon.start())
    .then(() => {
      started = true;
      gate.start();
      if (!brokerFirst) startBridge();
    });
  let started = false;
  const reload = (why: string) => {
    pending = pending
      .then(async () => {
        if (!started) return;
        logger.info(`${why}: reloading ${options.configPath}`);
        // Off the event loop: a file at the size cap takes long to parse (config/load.ts).
        await daemon.reload(await loadConfigFileOffThread(options.configPath));
      })
      .catch((error) => logger.error({ err: error }, 'reload failed'));
  };
  const watcher = new ConfigWatcher(options.configPath, () => reload('config file changed'), logger);

  // Handlers are installed before the start completes: a SIGTERM during start-up still ends
  // with every actuator at its safe state and the database closed.
  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: string, exitCode = 0) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, `${signal}: driving actuators to their safe state`);
      gate.stop();
      // A last ping: the watchdog cannot fire during the stop (TimeoutStopSec=30 < WatchdogSec=60).
      notifier.watchdog();
      notifier.stopping();
      notifier.status(`${signal}: driving actuators to their safe state`);
      watcher.stop();
      pending
        .catch(() => undefined)
        .then(() => daemon.stop(signal))
        .then(() => bridge?.stop())
        .then(
          () => {
            store.close();
            notifier.close();
            resolve(exitCode);
          },
          (error) => {
            logger.error({ err: error }, 'error while stopping');
            notifier.close();
            resolve(1);
          },
        );
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.on('SIGHUP', () => reload('SIGHUP'));
    // A defect that escapes every handler: drive the actuators safe before the process ends,
    // rather than die with a relay on (systemd's ExecStopPost `homeostat safe` is the next line
    // of defence, for what even this cannot reach).
    const fatal = (what: string) => (error: unknown) => {
      logger.fatal({ err: error }, `${what}: driving actuators to their safe state and exiting`);
      shutdown(what, 1);
    };
    process.on('uncaughtException', fatal('uncaught exception'));
    process.on('unhandledRejection', fatal('unhandled rejection'));
    pending.then(
      () => {
        if (!stopping) watcher.start();
      },
      (error) => {
        logger.error({ err: error }, 'start failed');
        shutdown('SIGTERM', 1);
      },
    );
  });
}
