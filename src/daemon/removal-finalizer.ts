import type { Logger } from 'pino';
import { parseConfigText } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { toLoopSpec } from '../config/to-loop-spec.js';
import { buildDrivers, type Drivers } from '../kinds/build.js';
import { driveSafe, type SafeTarget } from '../runtime/drive-safe.js';
import type { DaemonStore } from './store.js';

/**
 * The newest stored config that still defines `loop` — the one whose drivers its finalizer
 * must use. Not simply the previous config: after a crash between applying a config and
 * finalizing, the latest stored config is already the one without the loop.
 */
export function lastConfigDefining(store: DaemonStore, loop: string, known?: Config): Config | undefined {
  // The config the daemon ran before a reload is in memory: no need to read the database.
  if (known?.loops[loop]) return known;
  for (const { text } of store.desired.configsNewestFirst()) {
    const parsed = parseConfigText(text);
    if (parsed.ok && parsed.config.loops[loop]) return parsed.config;
  }
  return undefined;
}

/**
 * The finalizer of loops removed from the config: drives their actuators to the safe state
 * (with the drivers of the last config that had them), records it, and forgets the loop.
 * Runs for loops removed now and for removals a crash interrupted earlier.
 */
export async function finalizeRemovedLoops(
  store: DaemonStore,
  removed: string[],
  current: Drivers,
  nowMs: () => number,
  logger: Logger,
  previousConfig?: Config,
): Promise<void> {
  for (const loop of removed) {
    let oldConfig: Config | undefined;
    try {
      oldConfig = lastConfigDefining(store, loop, previousConfig);
    } catch (error) {
      // The database cannot say: the removal stays pending, finalized at the next reload or start.
      logger.error(
        { err: error, loop },
        `loop ${loop} removed: its last config cannot be read now; will retry`,
      );
      continue;
    }
    if (!oldConfig) {
      logger.warn({ loop }, `loop ${loop} was removed, but no stored config describes its actuators`);
      markFinalized(store, loop, logger);
      continue;
    }
    await finalizeRemovedLoop(store, loop, oldConfig, current, nowMs, logger);
  }
}

/** One removed loop whose last config is known: its actuators safe, then forgotten. */
async function finalizeRemovedLoop(
  store: DaemonStore,
  loop: string,
  oldConfig: Config,
  current: Drivers,
  nowMs: () => number,
  logger: Logger,
): Promise<void> {
  const spec = toLoopSpec(oldConfig, loop);
  let oldDrivers: Drivers | undefined;
  const targets: SafeTarget[] = [];
  for (const actuator of [spec.raise, spec.lower]) {
    if (!actuator) continue;
    let driver = current.actuators.get(actuator.id);
    if (!driver) {
      // Gone from the running config: the last config that had it says how to reach it.
      try {
        oldDrivers ??= buildDrivers(oldConfig, nowMs, { mqtt: current.mqtt });
        driver = oldDrivers.actuators.get(actuator.id);
        await driver?.start?.();
      } catch (error) {
        logger.error({ err: error, loop, actuator: actuator.id }, `finalizer: ${actuator.id}: no driver`);
        driver = undefined; // reported by driveSafe as not confirmed safe
      }
    }
    targets.push({ id: actuator.id, safeLevel: actuator.safeLevel, driver });
  }
  // All at once, one log line per actuator, one 'loop-removed-safe' event (runtime/drive-safe.ts).
  await driveSafe(targets, {
    reason: `loop ${loop} removed`,
    logger: logger.child({ loop }),
    loop,
    recordEvent: (event) => store.desired.recordEvent(event),
    eventKind: 'loop-removed-safe',
    eventSource: 'file',
  });
  for (const driver of oldDrivers?.actuators.values() ?? []) await driver.stop?.();
  markFinalized(store, loop, logger);
}

/**
 * Forgets a finalized loop in the store. A storage failure leaves the removal pending: the
 * finalizer runs again at the next reload or start (driving safe again is harmless).
 */
function markFinalized(store: DaemonStore, loop: string, logger: Logger): void {
  try {
    store.desired.markRemovalFinalized(loop);
  } catch (error) {
    logger.error(
      { err: error, loop },
      `loop ${loop} finalized, but the database could not record it; will retry`,
    );
  }
}
