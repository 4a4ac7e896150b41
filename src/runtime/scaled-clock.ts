import { type Clock, StepListeners, type TimerHandle } from '../time/clock.js';
import { RealClock } from './real-clock.js';

/**
 * A clock that runs `speed` times faster than its base (`--speed N` on the simulated plant).
 * Simulated time starts at the base's time when constructed (or where the caller says), so
 * timestamps stay plausible dates; a timer of `delayMs` simulated ms fires after `delayMs / speed` base ms.
 *
 * A step of the base's wall clock is not scaled: simulated time steps by the same amount
 * (records stay near wall time) and the step is passed on to `onStep` listeners, so nothing
 * counts it as elapsed simulated time.
 */
export class ScaledClock implements Clock {
  readonly #speed: number;
  readonly #base: Clock;
  /** Base time at construction. */
  readonly #originMs: number;
  /** Simulated time at construction: the base's, unless the caller starts it elsewhere. */
  readonly #startMs: number;
  /** The base's monotonic time at construction: scaled from there. */
  readonly #originMonotonicMs: number;
  /** Sum of the base's wall-clock steps: taken out of the scaled part, added back once. */
  #stepsMs = 0;
  readonly #stepListeners = new StepListeners();

  /**
   * @param speed simulated ms per base ms; any finite number > 0 (1 = real time).
   * @param base the clock being scaled; default a `RealClock` (tests pass a `ManualClock`).
   * @param startMs simulated time at construction; default the base's (a demo restarted on its
   *   database passes where that database's simulated time got to, so runs never interleave).
   */
  constructor(speed: number, base: Clock = new RealClock(), startMs?: number) {
    if (!Number.isFinite(speed) || speed <= 0) {
      throw new RangeError(`clock speed must be a finite number > 0, got ${speed}`);
    }
    this.#speed = speed;
    this.#base = base;
    this.#originMs = base.nowMs();
    this.#startMs = startMs ?? this.#originMs;
    this.#originMonotonicMs = base.monotonicMs();
    base.onStep?.((deltaMs) => {
      this.#stepsMs += deltaMs;
      this.#stepListeners.emit(deltaMs);
    });
  }

  nowMs(): number {
    // The base is read first: a step it notices is counted in #stepsMs before the sum below.
    const baseMs = this.#base.nowMs();
    return this.#startMs + (baseMs - this.#stepsMs - this.#originMs) * this.#speed + this.#stepsMs;
  }

  monotonicMs(): number {
    return this.#originMonotonicMs + (this.#base.monotonicMs() - this.#originMonotonicMs) * this.#speed;
  }

  onStep(listener: (deltaMs: number) => void): () => void {
    return this.#stepListeners.add(listener);
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    return this.#base.setTimer(fn, delayMs / this.#speed);
  }

  clearTimer(handle: TimerHandle): void {
    this.#base.clearTimer(handle);
  }
}
