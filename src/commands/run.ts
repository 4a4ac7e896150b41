import type { Logger } from 'pino';
import { loadConfigFile } from '../config/load.js';
import { formatElapsed } from '../core/time.js';
import { createLogger, type LogFormat } from '../logger.js';
import { DatabaseInUseError, Node, NodeSetupError } from '../node.js';
import { RealClock } from '../runtime/real-clock.js';
import { ScaledClock } from '../runtime/scaled-clock.js';
import { latestRecordedMs } from '../store/latest-time.js';
import { createNotifier, NOTIFY_UNAVAILABLE_EXIT_CODE, type Notifier } from '../systemd/notify.js';

/**
 * `homeostat run` found another daemon on its database (EX_TEMPFAIL: try again later). Not in
 * the unit's RestartPreventExitStatus: systemd retries every RestartSec, and the start succeeds
 * once the other one is gone.
 */
export const DATABASE_IN_USE_EXIT_CODE = 75;

export interface RunOptions {
  configPath: string;
  dbPath: string;
  /** --db was given (it then wins over the config's storage.path). */
  dbPathGiven?: boolean;
  mqttUrl?: string | undefined;
  speed?: number | undefined;
  logFormat?: LogFormat | undefined;
  /** `--http-port`: another port for the API (0: any free one), or false for none. */
  http?: { port: number } | false;
}

/**
 * `homeostat run`: validates the config, builds the node (src/node.ts: store, MQTT, drivers,
 * daemon…) and runs it until SIGINT/SIGTERM, which drive every actuator to its safe state
 * before exiting 0. Here: the options, the systemd notifier and the process's signals.
 */
export async function runCommand(options: RunOptions): Promise<number> {
  const logger = createLogger({ format: options.logFormat });
  const notifier = openNotifier(logger);
  if (notifier === undefined) return NOTIFY_UNAVAILABLE_EXIT_CODE;
  const loaded = loadConfigFile(options.configPath);
  if (!loaded.ok) {
    for (const line of loaded.errors) logger.error(`config: ${line}`);
    notifier.close();
    return 1;
  }
  for (const warning of loaded.warnings) logger.warn(`config: ${warning}`);
  const speed = options.speed ?? 1;
  // --db wins over storage.path: the command line is the more specific intent.
  const dbPath = options.dbPathGiven ? options.dbPath : (loaded.config.storage.path ?? options.dbPath);
  let node: Node;
  try {
    node = new Node({
      configPath: options.configPath,
      loaded,
      dbPath,
      clock: speed === 1 ? new RealClock() : simulatedClock(speed, dbPath, logger),
      logger,
      notifier,
      mqttUrl: options.mqttUrl,
      speed,
      ...(options.http === undefined ? {} : { http: options.http }),
    });
  } catch (error) {
    if (!(error instanceof NodeSetupError)) throw error;
    logger.error(error.message);
    notifier.close();
    return error instanceof DatabaseInUseError ? DATABASE_IN_USE_EXIT_CODE : 1;
  }
  return runUntilStopped(node, logger);
}

/**
 * `--speed N`: simulated time runs N times real time, from now, or on a database a simulation
 * already ran ahead on, from just after its latest record: restarting the demo must not write
 * an hour that interleaves with one stored before (its charts would scramble).
 */
function simulatedClock(speed: number, dbPath: string, logger: Logger): ScaledClock {
  const latestMs = latestRecordedMs(dbPath);
  const nowMs = Date.now();
  if (latestMs === undefined || latestMs < nowMs) return new ScaledClock(speed);
  const startMs = latestMs + 1_000;
  const clock = new ScaledClock(speed, new RealClock(), startMs);
  // Logged after the clock exists: the line's time is the wall time its start maps to (tests
  // that map simulated back to wall time read simulatedStartMs from it).
  logger.info(
    { simulatedStartMs: startMs },
    `--speed ${speed}: simulated time goes on from ${new Date(startMs).toISOString()}, where ${dbPath} got to (${formatElapsed(startMs - nowMs)} ahead of the wall clock)`,
  );
  return clock;
}

/**
 * The systemd notifier, or undefined when it cannot be used. First of all: under a watchdog, a
 * notify socket we cannot use means systemd would kill us every WatchdogSec. Exit at once
 * instead (the unit does not restart after this exit code).
 */
function openNotifier(logger: Logger): Notifier | undefined {
  let notifier: Notifier;
  try {
    notifier = createNotifier(process.env, {
      onSendError: (error, message) =>
        logger.warn({ err: error }, `systemd notify: could not send ${message}`),
    });
  } catch (error) {
    logger.fatal((error as Error).message);
    return undefined;
  }
  if (notifier.problem) logger.warn(notifier.problem);
  else if (notifier.enabled) {
    logger.info({ watchdogPingMs: notifier.watchdogIntervalMs }, 'systemd notify enabled');
  }
  return notifier;
}

/** Starts the node and resolves with the exit code once a signal (or a defect) stopped it. */
function runUntilStopped(node: Node, logger: Logger): Promise<number> {
  const started = node.start();
  // Handlers are installed before the start completes: a SIGTERM during start-up still ends
  // with every actuator at its safe state and the database closed.
  return new Promise<number>((resolve) => {
    let stopping = false;
    // `reason` is a signal's name, or what failed: the log and the stop event say which.
    const shutdown = (reason: string, exitCode = 0) => {
      if (stopping) return;
      stopping = true;
      const fields = reason.startsWith('SIG') ? { signal: reason } : { reason };
      logger.info(fields, `${reason}: driving actuators to their safe state`);
      node.stop(reason).then(
        () => resolve(exitCode),
        (error) => {
          logger.error({ err: error }, 'error while stopping');
          resolve(1);
        },
      );
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.on('SIGHUP', () => void node.reload('SIGHUP'));
    // A defect that escapes every handler: drive the actuators safe before the process ends,
    // rather than die with a relay on (systemd's ExecStopPost `homeostat safe` is the next line
    // of defence, for what even this cannot reach).
    const fatal = (what: string) => (error: unknown) => {
      logger.fatal({ err: error }, `${what}: driving actuators to their safe state and exiting`);
      shutdown(what, 1);
    };
    process.on('uncaughtException', fatal('uncaught exception'));
    process.on('unhandledRejection', fatal('unhandled rejection'));
    // No signal came: the stop says the start failed (and the line above says what failed).
    started.catch((error) => {
      logger.error({ err: error }, 'start failed');
      shutdown('start failed', 1);
    });
  });
}
