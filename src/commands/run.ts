import { loadConfigFile } from '../config/load.js';
import { Daemon } from '../daemon.js';
import { buildDrivers, speedProblem } from '../drivers/build.js';
import { createLogger, type LogFormat } from '../logger.js';
import type { Clock } from '../runtime/clock.js';
import { RealClock } from '../runtime/real-clock.js';
import { ScaledClock } from '../runtime/scaled-clock.js';

export interface RunOptions {
  configPath: string;
  dbPath: string;
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
  const loaded = loadConfigFile(options.configPath);
  if (!loaded.ok) {
    for (const line of loaded.errors) logger.error(`config: ${line}`);
    return 1;
  }
  const config = loaded.config;
  const speed = options.speed ?? 1;
  const clock: Clock = speed === 1 ? new RealClock() : new ScaledClock(speed);
  const drivers = buildDrivers(config, () => clock.nowMs());
  if (speed !== 1) {
    const problem = speedProblem(drivers);
    if (problem) {
      logger.error(problem);
      return 1;
    }
  }
  const mqttUrl = options.mqttUrl ?? config.mqtt?.url;
  logger.info(
    { config: options.configPath, db: options.dbPath, mqttUrl, speed },
    `starting homeostat (node ${config.node.id})${speed !== 1 ? ` at ${speed}× speed` : ''}`,
  );
  if (mqttUrl) logger.warn('MQTT is not implemented yet in this version: regulating locally only');
  logger.warn('persistence is not implemented yet: loop state lives in memory only and is lost on exit');

  const daemon = new Daemon({
    config,
    clock,
    logger,
    drivers,
    statusEveryMs: 60_000 * Math.max(1, Math.min(speed, 5)),
  });
  await daemon.start();

  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, `${signal}: driving actuators to their safe state`);
      daemon.stop(signal).then(
        () => resolve(0),
        (error) => {
          logger.error({ err: error }, 'error while stopping');
          resolve(1);
        },
      );
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  });
}
