import type { Clock, TimerHandle } from './clock.js';
import { RealClock } from './real-clock.js';

/**
 * A clock that runs `speed` times faster than its base (`--speed N` on the simulated plant).
 * Simulated time starts at the base's time when constructed, so timestamps stay plausible
 * dates; a timer of `delayMs` simulated ms fires after `delayMs / speed` base ms.
 */
export class ScaledClock implements Clock {
  readonly #speed: number;
  readonly #base: Clock;
  /** Base time at construction: simulated and base time coincide there. */
  readonly #originMs: number;

  /**
   * @param speed simulated ms per base ms; any finite number > 0 (1 = real time).
   * @param base the clock being scaled; default a `RealClock` (tests pass a `ManualClock`).
   */
  constructor(speed: number, base: Clock = new RealClock()) {
    if (!Number.isFinite(speed) || speed <= 0) {
      throw new RangeError(`clock speed must be a finite number > 0, got ${speed}`);
    }
    this.#speed = speed;
    this.#base = base;
    this.#originMs = base.nowMs();
  }

  nowMs(): number {
    return this.#originMs + (this.#base.nowMs() - this.#originMs) * this.#speed;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    return this.#base.setTimer(fn, delayMs / this.#speed);
  }

  clearTimer(handle: TimerHandle): void {
    this.#base.clearTimer(handle);
  }
}
