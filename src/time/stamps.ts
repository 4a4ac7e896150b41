/**
 * Arrival stamps kept on monotonic time and shown as wall time.
 *
 * A driver that stamps what arrives (an MQTT value, an availability message, a heartbeat, a
 * plug's reported state) keeps each stamp on the monotonic clock, which a wall-clock step (NTP
 * correcting a Raspberry Pi that booted without a real-time clock, a person setting the date)
 * does not move. A stamp becomes wall time only when it leaves the driver, in a reading or a
 * status: the wall time that is its real age before now. So a step moves what the driver
 * shows by the step while nothing the driver keeps is moved, and no age it measures itself
 * (a plug's state going stale) counts the step.
 */
import type { Clock } from './clock.js';

/**
 * The daemon's two times, or a function alone: a test's time that never steps, whose wall and
 * monotonic times are the same.
 */
export type ClockTimes = Pick<Clock, 'nowMs' | 'monotonicMs'> | (() => number);

/** Both times as functions (a function alone stands for both). */
export function timesOf(time: ClockTimes): { nowMs: () => number; monotonicMs: () => number } {
  if (typeof time === 'function') return { nowMs: time, monotonicMs: time };
  return { nowMs: () => time.nowMs(), monotonicMs: () => time.monotonicMs() };
}

/** Takes stamps on monotonic time and converts them to and from wall time, now. */
export class StampClock {
  readonly nowMs: () => number;
  readonly #monotonicMs: () => number;

  /** `monotonicMs` omitted: stamps are on `nowMs` (a clock that never steps). */
  constructor(nowMs: () => number, monotonicMs: () => number = nowMs) {
    this.nowMs = nowMs;
    this.#monotonicMs = monotonicMs;
  }

  /** A clock given as a StampClock or as a time that never steps. */
  static of(time: StampClock | (() => number)): StampClock {
    return typeof time === 'function' ? new StampClock(time) : time;
  }

  /** A stamp of this moment, ms (monotonic: meaningless outside this process). */
  stamp(): number {
    return this.#monotonicMs();
  }

  /**
   * The wall time of `stampMs` as of now: now minus the stamp's age, in whole ms since the
   * epoch (monotonic time has fractions of a ms; records and statuses carry whole ones).
   */
  wallOf(stampMs: number): number {
    return Math.round(this.nowMs() - (this.#monotonicMs() - stampMs));
  }

  /** The stamp of a wall time someone else reported (a device's `last_seen`), as of now. */
  stampOf(wallMs: number): number {
    return this.#monotonicMs() - (this.nowMs() - wallMs);
  }

  /**
   * Converts wall times taken in this moment's frame to stamps, later too: a read in flight
   * when the wall clock steps was stamped by its driver in the frame it started in.
   */
  stampsOfFrameNow(): (wallMs: number) => number {
    const wallMinusStampMs = this.nowMs() - this.#monotonicMs();
    return (wallMs) => wallMs - wallMinusStampMs;
  }

  /** How long ago `stampMs` was, ms. */
  ageOf(stampMs: number): number {
    return this.#monotonicMs() - stampMs;
  }
}
