import type { Logger } from 'pino';
import type { RebaseScope } from '../store/desired-store.js';
import type { RunningLoop } from './loop-factory.js';

/** What moves stored schedules with a clock step. */
export interface ScheduleRebase {
  /** The desired store: started profiles and manual changes move with the step. */
  store: {
    rebaseSchedules(stepMs: number, scope: RebaseScope): void;
    allDesired(): readonly { loop: string; generation: number }[];
  };
  /**
   * This process's start as a reading of the wall clock, on the clock's current frame: the
   * daemon sets it once, and shiftRunningTimes moves it by every step the process survives.
   */
  processStart: { ms: number };
  /** The clock; read only from the queued rebase, never from inside the step's clock read. */
  nowMs(): number;
}

export interface ClockStepTargets {
  loops: ReadonlyMap<string, RunningLoop>;
  logger: Logger;
  schedules?: ScheduleRebase;
}

/**
 * The wall clock stepped by `deltaMs` (NTP, `date -s`): every remembered wall time — loop
 * memory, stored schedules — moves by the same amount, so no duration counts the step (a
 * forward step is not hours of heating without effect, a step back does not hold minimum
 * times for hours). Drivers and the sampler keep their times on the monotonic clock (a
 * DS18B20's rate limit, a pulse window, the simulated plants, the stamps of readings and of
 * what MQTT devices send: time/stamps.ts) and need nothing here. Records already written keep
 * their times. Called from inside a clock read: only moves times here; the loops run
 * afterwards, to re-plan their wake-ups on the new time.
 */
export function shiftRunningTimes(deltaMs: number, { loops, logger, schedules }: ClockStepTargets): void {
  if (schedules) queueScheduleRebase(deltaMs, schedules, logger);
  for (const loop of loops.values()) loop.cycle.shiftTimes(deltaMs);
  logger.warn(
    { deltaMs },
    `wall clock stepped ${deltaMs > 0 ? 'forward' : 'back'} by ${Math.abs(deltaMs) / 1000} s; ` +
      'timers and durations are unaffected',
  );
  // Queued after the rebase: the loops run on the moved profile times.
  queueMicrotask(() => {
    for (const loop of loops.values()) loop.runner.trigger('clock step');
  });
}

/**
 * Moves the stored schedule times this process recorded under the old clock, in a microtask
 * (queued before the loops' trigger): never from inside the clock read that noticed the step,
 * which may lie inside one of the store's transactions. Run there, the rebase nested in it and
 * the outer transaction then wrote back the row it had read before, undoing the rebase on disk
 * and in memory while the log said it succeeded.
 *
 * Only times in [the process's start, now], both on the old clock, move (RebaseScope): a Pi
 * without a real-time clock boots with a wrong clock, and NTP's step at boot must not move a
 * profile started days before under a correct one (the restart rule: progress is wall-clock
 * time since the start). The old clock's now is the current reading minus every step since
 * this one (the start has moved by them all).
 */
function queueScheduleRebase(deltaMs: number, schedules: ScheduleRebase, logger: Logger): void {
  const { store, processStart } = schedules;
  const fromMs = processStart.ms;
  processStart.ms += deltaMs;
  // Memory only (no SQL inside the clock read): the generations as last committed.
  const generations = new Map(store.allDesired().map((row) => [row.loop, row.generation]));
  queueMicrotask(() => {
    try {
      const nowMs = schedules.nowMs();
      const toMs = nowMs - (processStart.ms - fromMs);
      store.rebaseSchedules(deltaMs, { fromMs, toMs, generations });
    } catch (error) {
      // The store reports it (health); the profile then counts the step, the loop regulates on.
      logger.error({ err: error }, 'could not move started profiles with the clock step');
    }
  });
}
