import { freshnessOf } from './liveness.js';
import type { LoopSpec } from './loop-spec.js';
import { stampedInFuture, wholeSeconds } from './time.js';
import type { Reading } from './types.js';

/**
 * Interlocks pause a loop: a window or door open, a float switch protecting a pump. While one
 * is tripped every actuator of the loop is at its safe state. A switch that gives no fresh
 * reading counts as tripped: a broken wire must not let a heater run with the window open.
 *
 * A GPIO contact (gpio_input) and an MQTT one (mqtt_binary) are judged alike: 0/1, 1 = open,
 * stale by the one rule of core/liveness.ts. An MQTT contact reports only on change, so its
 * device's liveness (an availability topic saying online) keeps a closed window in force up to
 * its maxQuietMs; a device that says it is offline, or a payload that is not a state, trips it.
 */
export interface InterlockSpec {
  sensorId: string;
  /** The loop pauses while the sensor reads this value (0/1 inputs: 1 = open). */
  pauseWhen: number;
  /** A reading older than this (ms) counts as missing, i.e. tripped (unless kept by its device's liveness). */
  staleAfterMs: number;
}

/** Why an interlock pauses the loop: its switch reads pauseWhen, or gives no trustworthy reading. */
export type InterlockReason = 'Reads' | 'Missing' | 'Stale' | 'Offline' | 'NotFinite';

/** A tripped interlock: which, why, and the message the status shows. */
export interface TrippedInterlock {
  sensorId: string;
  reason: InterlockReason;
  message: string;
}

/** The first tripped interlock and why, or undefined when the loop may regulate. */
export function trippedInterlock(
  spec: Pick<LoopSpec, 'interlocks'>,
  readings: Record<string, Reading | undefined> | undefined,
  nowMs: number,
): TrippedInterlock | undefined {
  for (const interlock of spec.interlocks ?? []) {
    const tripped = judgeInterlock(interlock, readings?.[interlock.sensorId], nowMs);
    if (tripped) return tripped;
  }
  return undefined;
}

/**
 * One interlock at `nowMs`. Order: missing, then a device that says it is offline (its value is
 * void whatever it is), then a value that is not a number (garbage: what the device sent), then
 * staleness, then the value itself.
 */
function judgeInterlock(
  interlock: InterlockSpec,
  reading: Reading | undefined,
  nowMs: number,
): TrippedInterlock | undefined {
  const trip = (reason: InterlockReason, why: string): TrippedInterlock => ({
    sensorId: interlock.sensorId,
    reason,
    message: `interlock ${interlock.sensorId}: ${why}`,
  });
  if (reading === undefined) return trip('Missing', 'no reading yet');
  if (stampedInFuture(reading.atMs, nowMs)) {
    // The clock went back: the reading's real age is unknown (as for a loop's own sensor).
    return trip('Stale', `last reading is stamped ${wholeSeconds(reading.atMs - nowMs)} s in the future`);
  }
  const freshness = freshnessOf(reading, nowMs, interlock.staleAfterMs);
  if (!freshness.fresh && freshness.reason === 'Offline') return trip('Offline', freshness.message);
  if (!Number.isFinite(reading.value)) {
    return trip('NotFinite', reading.whyNotANumber ?? `reads ${reading.value}, not a number`);
  }
  if (!freshness.fresh) {
    const failed = reading.lastError === undefined ? '' : `; last read failed: ${reading.lastError}`;
    return trip('Stale', `${freshness.message}${failed}`);
  }
  // Inputs are 0/1; half a unit of tolerance keeps a float from missing the value.
  if (Math.abs(reading.value - interlock.pauseWhen) < 0.5) {
    return {
      sensorId: interlock.sensorId,
      reason: 'Reads',
      message: `interlock ${interlock.sensorId} reads ${reading.value}`,
    };
  }
  return undefined;
}
