/**
 * The only source of time in homeostat. Core functions take `nowMs` from it; the runtime
 * schedules with it. Tests use a manual clock; `--speed N` uses a scaled one.
 */
export interface Clock {
  /** Milliseconds since the epoch, in (possibly scaled) simulated time. */
  nowMs(): number;
  /** Calls `fn` after `delayMs` of clock time. */
  setTimer(fn: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}
