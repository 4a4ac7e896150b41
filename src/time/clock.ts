/**
 * The only source of time in homeostat. Core functions take `nowMs` from it; the runtime
 * schedules with it. Tests use a manual clock; `--speed N` uses a scaled one.
 *
 * `nowMs()` is wall time (records, history and status carry it), and wall time can step: NTP
 * correcting a Raspberry Pi that booted without a real-time clock, a person setting the date.
 * Timers run on monotonic time and never see a step. A clock that can tell when its wall time
 * stepped reports it through `onStep`, and the daemon moves every remembered time by the same
 * amount, so no duration (minimum on/off times, effect watch, staleness) counts the step.
 */
export interface Clock {
  /** Milliseconds since the epoch, in (possibly scaled) simulated time. */
  nowMs(): number;
  /**
   * Milliseconds from an arbitrary origin that never step (in scaled simulated time, like
   * `nowMs()`): what timers run on, and what control measures durations and deadlines with.
   * Never stored or shown: it means nothing outside this process.
   */
  monotonicMs(): number;
  /** Calls `fn` after `delayMs` of clock time (monotonic: a wall-clock step does not move it). */
  setTimer(fn: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
  /**
   * Calls `listener(deltaMs)` when wall time stepped by `deltaMs` (positive: forward) relative
   * to monotonic time. Called synchronously, from inside the `nowMs()` call that noticed the
   * step (or from a test's `stepWall`), before that call returns the new time: a listener must
   * only move stored times, never read the clock again. Returns a function that unsubscribes.
   */
  onStep?(listener: (deltaMs: number) => void): () => void;
}

export interface TimerHandle {
  readonly id: number;
}

/** Something that keeps absolute times and can move them when the wall clock steps. */
export interface TimeShiftable {
  /** Adds `deltaMs` to every absolute time kept (not to records of when things happened). */
  shiftTimes(deltaMs: number): void;
}

/**
 * Moves the times a driver keeps (a push sensor's arrival stamp, a pulse counter's pulses, a
 * simulated plant's integration time), if it keeps any. Drivers opt in by having `shiftTimes`.
 */
export function shiftDriverTimes(driver: object, deltaMs: number): void {
  const shiftable = driver as Partial<TimeShiftable>;
  if (typeof shiftable.shiftTimes === 'function') shiftable.shiftTimes(deltaMs);
}

/** A set of step listeners, for clocks to share. */
export class StepListeners {
  readonly #listeners = new Set<(deltaMs: number) => void>();

  add(listener: (deltaMs: number) => void): () => void {
    const entry = (deltaMs: number) => listener(deltaMs);
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }

  /**
   * Tells every listener. Reading the time must never fail, so an error from a listener is
   * dropped here: listeners catch and log their own.
   */
  emit(deltaMs: number): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(deltaMs);
      } catch {
        // see above
      }
    }
  }
}
