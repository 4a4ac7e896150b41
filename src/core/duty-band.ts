/**
 * Duty band ("PI-centred duty hysteresis") for relays: the relay switches on when the PID duty
 * rises above 0.5 + h and off when it falls below 0.5 − h, and keeps its state in between.
 *
 *   d = clamp(duty, 0, 1);  h = clamp(halfBand, 0, 0.49)
 *   on  if d > 0.5 + h
 *   off if d < 0.5 − h
 *   otherwise: unchanged; then minimum on/off times (holdForMinimumTimes) have the last word.
 *
 * As h < 0.5, duty 1 is always on and duty 0 always off: saturation is steady, as with
 * time-proportioning (a heater at full power never clicks, zero output always stops).
 *
 * Why: the relay's ripple feeds back through the PID. Its integral term moves the switching
 * centre until the ripple's mean sits on the setpoint (no offset, unlike plain hysteresis on
 * the measurement), and its proportional term turns a band of h in duty into a band of
 * h / kp in the loop's unit, which sets the switching period. Time-proportioning instead
 * spreads the duty over fixed windows, so between window starts the relay ignores what the
 * loop does: it switches at a predictable rate but regulates loosely.
 * Measured (`npm run bench:control`, SIMC PI, band h = kp · 0.25 °C, min on/off 30 s):
 * room relay plant step IAE 6941 °C·s at 22 switches/h, against 11419 at 12 for 600 s
 * time-proportioning; on a −5 °C load disturbance it beats Home Assistant's hysteresis
 * (tolerances 0.3 °C) on IAE with no more switches on both relay plants (room 4960 vs 5360
 * at 16.5 vs 18 /h, slow 4012 vs 4134 at 3.5 /h each). Windows keep their place where a fixed
 * rate is wanted, and on the slow plant they regulate closer, at three times the switching
 * (disturbance IAE 1284 at 12 /h).
 *
 * The band is given in duty units; config gives it in the loop's unit (`band`) and the spec
 * builder multiplies by kp. h stays below 0.5 so both thresholds lie inside 0..1.
 * Pure, like the rest of src/core: the clock comes in as `nowMs`.
 */
import { clamp, clampFraction } from './numbers.js';
import { holdForMinimumTimes, type TimeProportioningMemory } from './time-proportioning.js';

export interface DutyBandParams {
  /** Half width of the band around duty 0.5, duty units (kp · band); clamped to 0..0.49. */
  halfBand: number;
  /** Shortest allowed on time, ms (0 = none). */
  minOnMs: number;
  /** Shortest allowed off time, ms (0 = none). A compressor wants minutes. */
  minOffMs: number;
}

/** What the band needs to remember of a relay: its state and last switch (for minimum times). */
export type DutyBandMemory = Pick<TimeProportioningMemory, 'isOn' | 'lastSwitchMs'>;

export interface DutyBandResult<M extends DutyBandMemory> {
  on: boolean;
  /** The memory given, with `isOn` and `lastSwitchMs` updated (other fields kept). */
  memory: M;
  /**
   * When a wanted switch held back by a minimum time becomes allowed, ms; undefined when
   * nothing changes by itself (the duty only moves on new readings).
   */
  nextChangeMs?: number;
}

/** Largest half band: keeps 0.5 + h below 1 and 0.5 − h above 0. */
export const MAX_HALF_BAND = 0.49;

export function dutyBand<M extends DutyBandMemory>(
  duty: number,
  memory: M,
  nowMs: number,
  params: DutyBandParams,
): DutyBandResult<M> {
  const d = clampFraction(duty);
  const h = clamp(params.halfBand, 0, MAX_HALF_BAND);
  let wantOn = memory.isOn;
  if (d > 0.5 + h) wantOn = true;
  if (d < 0.5 - h) wantOn = false;

  const held = holdForMinimumTimes(wantOn, memory.isOn, memory.lastSwitchMs, nowMs, params);
  const next = held.on === memory.isOn ? memory : { ...memory, isOn: held.on, lastSwitchMs: nowMs };
  return { on: held.on, memory: next, ...(held.untilMs === undefined ? {} : { nextChangeMs: held.untilMs }) };
}
