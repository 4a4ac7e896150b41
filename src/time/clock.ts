/**
 * The only source of time in homeostat. Core functions take `nowMs` from it; the runtime
 * schedules with it. Tests use a manual clock; `--speed N` uses a scaled one.
 *
 * `nowMs()` is wall time (records, history and status carry it), and wall time can step: NTP
 * correcting a Raspberry Pi that booted without a real-time clock, a person setting the date.
 * On monotonic time, which never sees a step: timers, the loops' due times and retry backoff,
 * what drivers measure of themselves (rate limits, pulse windows, the simulated plants) and the
 * stamps they keep of what arrives (time/stamps.ts). A clock that can tell when its wall time
 * stepped reports it through `onStep`, and the daemon moves the wall times it still remembers
 * (loop memory, the latest readings, stored schedules) by the same amount, so no duration
 * (minimum on/off times, effect watch, staleness) counts the step.
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
