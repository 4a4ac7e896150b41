import type { Logger } from 'pino';
import type { Drivers } from '../kinds/build.js';
import { shiftDriverTimes } from '../runtime/clock.js';
import type { Sampler } from '../runtime/sampler.js';
import type { RunningLoop } from './loop-factory.js';

export interface ClockStepTargets {
  sampler: Sampler;
  drivers: Drivers;
  loops: ReadonlyMap<string, RunningLoop>;
  logger: Logger;
  /** The desired store: started profiles and manual changes move with the step (issue 13). */
  schedules?: { rebaseSchedules(stepMs: number): void };
}

/**
 * The wall clock stepped by `deltaMs` (NTP, `date -s`): every remembered time — loop memory,
 * readings, drivers' and simulated plants' times — moves by the same amount, so no duration
 * counts the step (a forward step is not hours of heating without effect, a step back does
 * not hold minimum times for hours). Records already written keep their times. Called from
 * inside a clock read: only moves times here; the loops run afterwards, to re-plan their
 * wake-ups on the new time.
 */
export function shiftRunningTimes(
  deltaMs: number,
  { sampler, drivers, loops, logger, schedules }: ClockStepTargets,
): void {
  sampler.shiftTimes(deltaMs);
  try {
    // Stored desired state, committed before the loops run on the new time: a profile's step
    // is neither skipped (forward) nor repeated (back), a manual hold keeps its length.
    schedules?.rebaseSchedules(deltaMs);
  } catch (error) {
    // The store reports it (health); the profile then counts the step, the loop regulates on.
    logger.error({ err: error }, 'could not move started profiles with the clock step');
  }
  for (const plant of drivers.plants.values()) plant.shiftTimes(deltaMs);
  for (const driver of drivers.actuators.values()) shiftDriverTimes(driver, deltaMs);
  for (const loop of loops.values()) {
    loop.cycle.shiftTimes(deltaMs);
    loop.runner.shiftTimes(deltaMs);
  }
  logger.warn(
    { deltaMs },
    `wall clock stepped ${deltaMs > 0 ? 'forward' : 'back'} by ${Math.abs(deltaMs) / 1000} s; ` +
      'timers and durations are unaffected',
  );
  queueMicrotask(() => {
    for (const loop of loops.values()) loop.runner.trigger('clock step');
  });
}
