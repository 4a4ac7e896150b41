import type { Clock, TimerHandle } from './clock.js';

/** Node clamps larger `setTimeout` delays to 1 ms, so longer timers are chained in steps of this. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * Wall-clock time: `Date.now()` and `setTimeout`. Only the composition root builds one.
 * Timers are not `unref()`'d: a pending loop timer keeps the daemon alive, which is what we want.
 */
export class RealClock implements Clock {
  #nextId = 1;
  readonly #timeouts = new Map<number, NodeJS.Timeout>();

  nowMs(): number {
    return Date.now();
  }

  /** Negative or non-finite delays fire as soon as possible. */
  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const id = this.#nextId++;
    const arm = (remainingMs: number): void => {
      if (remainingMs > MAX_TIMEOUT_MS) {
        this.#timeouts.set(
          id,
          setTimeout(() => arm(remainingMs - MAX_TIMEOUT_MS), MAX_TIMEOUT_MS),
        );
        return;
      }
      this.#timeouts.set(
        id,
        setTimeout(() => {
          this.#timeouts.delete(id);
          fn();
        }, remainingMs),
      );
    };
    arm(Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0);
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    clearTimeout(this.#timeouts.get(handle.id));
    this.#timeouts.delete(handle.id);
  }
}
