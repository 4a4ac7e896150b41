/**
 * Effect watch with a latched fault, after Marlin's thermal protection ("watch": heating must
 * raise the temperature by a minimum amount within a period) and Klipper's `verify_heater`.
 * Scaled to rooms, chambers and tanks: minutes, not seconds.
 *
 * While the controller drives a direction at full output and the value is still on the far
 * side of the setpoint, it must move at least `minChange` (loop unit) that way within
 * `periodMs`. If it does not — a heater that fell off its wire, a relay welded open, a probe
 * that slipped out of the tank — the loop latches a fault: every actuator goes to its safe
 * state and stays there until someone resets the fault (MQTT `<loop>/fault/reset`, the Home
 * Assistant button). A latched fault survives restarts (it is part of the loop's memory).
 */
import { FULL_OUTPUT, roundHundredths } from './numbers.js';
import { isAheadOfNow, wholeSeconds } from './time.js';

export interface EffectWatchSpec {
  /** How long full output may go without effect, ms. */
  periodMs: number;
  /** The least change (loop unit) full output must achieve within periodMs. */
  minChange: number;
}

/** A running watch: since when full output has been applied one way, from which value. */
export interface EffectWatchMemory {
  direction: 1 | -1;
  sinceMs: number;
  fromValue: number;
}

/** A fault that holds the loop safe until reset: from this watch or a safety monitor. */
export interface LatchedFault {
  reason:
    | 'HeatingIneffective'
    | 'CoolingIneffective'
    /** The safety monitors' (monitors/*.ts: each one's `reasons`). */
    | 'AboveCutoff'
    | 'BelowCutoff'
    | 'StuckOn'
    | 'Runaway'
    | 'MaxOnTime';
  message: string;
  atMs: number;
}

/**
 * One step of the watch for a regulating loop. Returns the new watch (undefined when not at
 * full output or already at the setpoint) and a fault to latch, if the period elapsed without
 * effect. `output` is the signed controller output; `measured` the reading used.
 */
export function watchEffect(
  spec: EffectWatchSpec,
  watch: EffectWatchMemory | undefined,
  output: number,
  measured: number,
  setpoint: number,
  nowMs: number,
  unit: 'temperature' | 'other',
): { watch: EffectWatchMemory | undefined; fault?: LatchedFault } {
  const direction: 1 | -1 | 0 = output >= FULL_OUTPUT ? 1 : output <= -FULL_OUTPUT ? -1 : 0;
  // Nothing to watch: not at full output, or already within minChange of the setpoint.
  if (direction === 0 || (setpoint - measured) * direction <= spec.minChange) return { watch: undefined };
  // A watch that started "later" (the clock went back) starts again from now.
  if (!watch || watch.direction !== direction || isAheadOfNow(watch.sinceMs, nowMs)) {
    return { watch: { direction, sinceMs: nowMs, fromValue: measured } };
  }
  if (nowMs - watch.sinceMs < spec.periodMs) return { watch };
  const change = (measured - watch.fromValue) * direction;
  if (change >= spec.minChange) {
    // Effective: watch the next period from here.
    return { watch: { direction, sinceMs: nowMs, fromValue: measured } };
  }
  const heating = direction === 1;
  const verb = unit === 'temperature' ? (heating ? 'heating' : 'cooling') : heating ? 'raising' : 'lowering';
  return {
    watch: undefined,
    fault: {
      reason: heating ? 'HeatingIneffective' : 'CoolingIneffective',
      message: `full ${verb} for ${wholeSeconds(nowMs - watch.sinceMs)} s changed the value by ${roundHundredths(
        change,
      )} (at least ${spec.minChange} expected): check the actuator and the sensor, then reset the fault`,
      atMs: nowMs,
    },
  };
}
