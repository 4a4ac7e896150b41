import { type Clock, StepListeners, type TimerHandle } from '../time/clock.js';

interface ManualTimer {
  dueMs: number;
  fn: () => void;
}

/** Timers fired by one `advance()` before it assumes a timer keeps rescheduling itself at delay 0. */
const MAX_TIMERS_PER_ADVANCE = 10_000;

/** Macrotask turns to yield after each timer; each turn drains every pending microtask chain. */
const SETTLE_TURNS = 5;

async function settle(): Promise<void> {
  for (let i = 0; i < SETTLE_TURNS; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * A clock that only moves when a test says so. `advance(ms)` fires due timers in time order
 * (ties in the order they were set), each seeing `nowMs()` equal to its due time, and lets
 * async work started by a timer settle before the next one fires.
 *
 * Like the real clock it has two times: monotonic time, which `advance` moves and timers run
 * on, and wall time (`nowMs()`), which is monotonic time plus an offset that `stepWall` changes
 * the way NTP or `date -s` would, telling `onStep` listeners.
 */
export class ManualClock implements Clock {
  /** Monotonic time; timers are due on it. Starts equal to wall time. */
  #nowMs: number;
  /** Wall time minus monotonic time, changed only by `stepWall`. */
  #wallOffsetMs = 0;
  #nextId = 1;
  /** Map keeps insertion order, which breaks ties between timers due at the same ms. */
  readonly #timers = new Map<number, ManualTimer>();
  readonly #stepListeners = new StepListeners();

  /** @param startMs the initial `nowMs()`; default 0. */
  constructor(startMs = 0) {
    this.#nowMs = startMs;
  }

  nowMs(): number {
    return this.#nowMs + this.#wallOffsetMs;
  }

  /** Moved by `advance` only (a `stepWall` leaves it). */
  monotonicMs(): number {
    return this.#nowMs;
  }

  onStep(listener: (deltaMs: number) => void): () => void {
    return this.#stepListeners.add(listener);
  }

  /**
   * Steps wall time by `deltaMs` (negative: back) without moving monotonic time: pending timers
   * fire after the same delays as before, and `onStep` listeners are told at once.
   */
  stepWall(deltaMs: number): void {
    if (!Number.isFinite(deltaMs)) throw new RangeError(`stepWall: deltaMs must be finite, got ${deltaMs}`);
    if (deltaMs === 0) return;
    this.#wallOffsetMs += deltaMs;
    this.#stepListeners.emit(deltaMs);
  }

  /** Negative or non-finite delays are due now (fire on the next `advance`, even `advance(0)`). */
  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const id = this.#nextId++;
    const safeDelayMs = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
    this.#timers.set(id, { dueMs: this.#nowMs + safeDelayMs, fn });
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers.delete(handle.id);
  }

  /** Number of timers set and neither fired nor cleared. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  /**
   * Moves time forward by `ms` (>= 0), firing every timer due up to the new time, including
   * timers set by earlier callbacks. Throws if one advance fires more than 10 000 timers.
   */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0) || !Number.isFinite(ms)) {
      throw new RangeError(`advance: ms must be a finite number >= 0, got ${ms}`);
    }
    const targetMs = this.#nowMs + ms;
    await settle();
    for (let fired = 0; ; fired++) {
      const next = this.#earliestDue(targetMs);
      if (next === undefined) break;
      if (fired >= MAX_TIMERS_PER_ADVANCE) {
        throw new Error(`advance: fired ${fired} timers; is a timer rescheduling itself at delay 0?`);
      }
      const [id, timer] = next;
      this.#timers.delete(id);
      this.#nowMs = timer.dueMs;
      timer.fn();
      await settle();
    }
    this.#nowMs = targetMs;
  }

  #earliestDue(limitMs: number): [number, ManualTimer] | undefined {
    let best: [number, ManualTimer] | undefined;
    for (const entry of this.#timers) {
      if (entry[1].dueMs <= limitMs && (best === undefined || entry[1].dueMs < best[1].dueMs)) {
        best = entry;
      }
    }
    return best;
  }
}
