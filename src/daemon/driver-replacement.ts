import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { safeLevelOf } from '../config/to-loop-spec.js';
import { createActuatorDriver, createSensorDriver, type Drivers } from '../kinds/build.js';
import { driverKey } from '../kinds/registry.js';
import { driveSafe, type SafeStateEvent } from '../runtime/drive-safe.js';
import type { Clock } from '../time/clock.js';

export interface DriverReplacementOptions {
  /** The running drivers: replaced, added and removed in place. */
  drivers: Drivers;
  clock: Clock;
  logger: Logger;
  /** Records the one event of each drive to the safe state. */
  recordSafeEvent: (event: SafeStateEvent) => void;
}

/**
 * Drivers whose own settings changed are replaced (the old actuator first driven to the safe
 * state); drivers that only changed loop-level settings (timing, safe state) keep running.
 */
export async function replaceChangedDrivers(
  before: Config,
  next: Config,
  opts: DriverReplacementOptions,
): Promise<void> {
  const replaced = Object.entries(next.actuators)
    .filter(([id, section]) => {
      const old = before.actuators[id];
      return !(old && driverKey(old) === driverKey(section) && opts.drivers.actuators.has(id));
    })
    .map(([id]) => id);
  await driveOldActuatorsSafe(before, next, replaced, opts);
  await restartActuatorDrivers(before, next, replaced, opts);
  await stopRemovedDrivers(opts.drivers.actuators, before.actuators, next.actuators);
  await replaceSensorDrivers(before, next, opts);
  await stopRemovedDrivers(opts.drivers.sensors, before.sensors, next.sensors);
}

/** The drivers of sections the new config no longer has stop and are forgotten. */
async function stopRemovedDrivers(
  running: Map<string, { stop?(): Promise<void> }>,
  before: Record<string, unknown>,
  next: Record<string, unknown>,
): Promise<void> {
  for (const id of Object.keys(before)) {
    if (next[id]) continue;
    await running.get(id)?.stop?.();
    running.delete(id);
  }
}

/**
 * Actuators no loop drives any more (deleted, or a loop now uses another one) would stay
 * where they were — a heater on; those whose driver is replaced are left safe by the old
 * driver. Both first and all at once: a device that cannot be reached delays no other and
 * does not abort the reload (a new driver is commanded by its loop's next cycle).
 */
async function driveOldActuatorsSafe(
  before: Config,
  next: Config,
  replaced: string[],
  { drivers, logger, recordSafeEvent }: DriverReplacementOptions,
): Promise<void> {
  const stillDriven = drivenActuators(next);
  const hasOldDriver = (id: string) => before.actuators[id] !== undefined && drivers.actuators.has(id);
  const target = (id: string) => ({
    id,
    safeLevel: safeLevelOf(before.actuators[id]!),
    driver: drivers.actuators.get(id),
  });
  const orphaned = [...drivenActuators(before)].filter((id) => !stillDriven.has(id) && hasOldDriver(id));
  const event = { recordEvent: recordSafeEvent, eventSource: 'file' };
  await Promise.all([
    driveSafe(orphaned.map(target), { reason: 'no loop drives it any more', logger, ...event }),
    driveSafe(replaced.filter((id) => hasOldDriver(id) && !orphaned.includes(id)).map(target), {
      reason: 'driver replaced on reload',
      logger,
      ...event,
    }),
  ]);
}

/** The old driver of each replaced actuator stops, then its new one starts. */
async function restartActuatorDrivers(
  before: Config,
  next: Config,
  replaced: string[],
  { drivers, clock, logger }: DriverReplacementOptions,
): Promise<void> {
  for (const id of replaced) {
    const previous = drivers.actuators.get(id);
    if (previous && before.actuators[id]) {
      await previous
        .stop?.()
        .catch((error) => logger.error({ err: error, actuator: id }, `${id}: old driver did not stop`));
    }
    // One that cannot start: its loop's writes fail ("no driver") and are reported; the others regulate.
    await startNewDriver(drivers.actuators, 'actuator', id, logger, () =>
      createActuatorDriver(next, id, drivers, clock),
    );
  }
}

/** Sensors whose driver settings changed (or that are new) get a new driver. */
async function replaceSensorDrivers(
  before: Config,
  next: Config,
  { drivers, clock, logger }: DriverReplacementOptions,
): Promise<void> {
  for (const [id, section] of Object.entries(next.sensors)) {
    const old = before.sensors[id];
    if (old && driverKey(old) === driverKey(section) && drivers.sensors.has(id)) continue;
    await drivers.sensors.get(id)?.stop?.();
    // One that cannot start gives no reading: its loops go safe (missing reading) and say why.
    await startNewDriver(drivers.sensors, 'sensor', id, logger, () =>
      createSensorDriver(next, id, drivers, clock),
    );
  }
}

/**
 * Creates and starts the new driver of `id` and puts it in `running`; a driver that cannot be
 * created or started leaves `id` without one, logged.
 */
async function startNewDriver<Driver extends { start?(): Promise<void> }>(
  running: Map<string, Driver>,
  what: 'sensor' | 'actuator',
  id: string,
  logger: Logger,
  create: () => Driver,
): Promise<void> {
  try {
    const driver = create();
    await driver.start?.();
    running.set(id, driver);
  } catch (error) {
    running.delete(id);
    logger.error({ err: error, [what]: id }, `${id}: driver could not start on reload`);
  }
}

/** The actuators some loop of `config` drives (raise or lower). */
function drivenActuators(config: Config): Set<string> {
  return new Set(
    Object.values(config.loops).flatMap((loop) => [loop.raise, loop.lower].filter((id) => id !== undefined)),
  );
}
