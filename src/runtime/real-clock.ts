import { performance } from 'node:perf_hooks';
import { type Clock, StepListeners, type TimerHandle } from '../time/clock.js';

/** Node clamps larger `setTimeout` delays to 1 ms, so longer timers are chained in steps of this. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * A change of (wall − monotonic) larger than this between two reads is a step of the wall
 * clock, ms. NTP slews small errors at most 0.5 ms/s, and both clocks tick together through
 * event-loop stalls, so 1 s is never reached without a step; steps are what NTP does to a Pi
 * that booted hours off, and what `date -s` does.
 */
export const STEP_THRESHOLD_MS = 1_000;

export interface RealClockOptions {
  /** Wall time, ms since the epoch. Default `Date.now`; tests inject their own. */
  wallMs?: () => number;
  /** A monotonic time, ms from any origin. Default `performance.now`; tests inject their own. */
  monotonicMs?: () => number;
  /** See {@link STEP_THRESHOLD_MS}. */
  stepThresholdMs?: number;
}

/**
 * Wall-clock time: `Date.now()` and `setTimeout` (which runs on the monotonic clock, so timers
 * never see a step). Only the composition root builds one. Timers are not `unref()`'d: a
 * pending loop timer keeps the daemon alive, which is what we want.
 *
 * Every `nowMs()` also reads the monotonic clock and keeps the offset between the two; when
 * the offset moves by more than the threshold, wall time stepped, and `onStep` listeners hear
 * by how much before the new time is returned.
 */
export class RealClock implements Clock {
  #nextId = 1;
  readonly #timeouts = new Map<number, NodeJS.Timeout>();
  readonly #wallMs: () => number;
  readonly #monotonicMs: () => number;
  readonly #stepThresholdMs: number;
  readonly #stepListeners = new StepListeners();
  /** Wall minus monotonic at the last read. */
  #offsetMs: number;

  constructor(opts: RealClockOptions = {}) {
    this.#wallMs = opts.wallMs ?? Date.now;
    this.#monotonicMs = opts.monotonicMs ?? (() => performance.now());
    this.#stepThresholdMs = opts.stepThresholdMs ?? STEP_THRESHOLD_MS;
    this.#offsetMs = this.#wallMs() - this.#monotonicMs();
  }

  nowMs(): number {
    const wallMs = this.#wallMs();
    const offsetMs = wallMs - this.#monotonicMs();
    const deltaMs = offsetMs - this.#offsetMs;
    // Small drifts are absorbed (the offset follows them read by read); only a jump is a step.
    this.#offsetMs = offsetMs;
    if (Math.abs(deltaMs) > this.#stepThresholdMs) this.#stepListeners.emit(Math.round(deltaMs));
    return wallMs;
  }

  monotonicMs(): number {
    return this.#monotonicMs();
  }

  onStep(listener: (deltaMs: number) => void): () => void {
    return this.#stepListeners.add(listener);
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
