import type { LoopSpec } from './loop-spec.js';
import { stampedInFuture } from './time.js';
import type { Reading } from './types.js';

/**
 * Interlocks pause a loop: a window or door open, a float switch protecting a pump. While one
 * is tripped every actuator of the loop is at its safe state. A switch that gives no fresh
 * reading counts as tripped: a broken wire must not let a heater run with the window open.
 */
export interface InterlockSpec {
  sensorId: string;
  /** The loop pauses while the sensor reads this value (0/1 inputs: 1 = open). */
  pauseWhen: number;
  /** A reading older than this (ms) counts as missing, i.e. tripped. */
  staleAfterMs: number;
}

/** The first tripped interlock and why, or undefined when the loop may regulate. */
export function trippedInterlock(
  spec: Pick<LoopSpec, 'interlocks'>,
  readings: Record<string, Reading | undefined> | undefined,
  nowMs: number,
): { sensorId: string; message: string } | undefined {
  for (const interlock of spec.interlocks ?? []) {
    const reading = readings?.[interlock.sensorId];
    const age = reading === undefined ? undefined : nowMs - reading.atMs;
    if (
      reading === undefined ||
      !Number.isFinite(reading.value) ||
      age! > interlock.staleAfterMs ||
      stampedInFuture(reading.atMs, nowMs)
    ) {
      return {
        sensorId: interlock.sensorId,
        message: `interlock ${interlock.sensorId} has no fresh reading`,
      };
    }
    // Inputs are 0/1; half a unit of tolerance keeps a float from missing the value.
    if (Math.abs(reading.value - interlock.pauseWhen) < 0.5) {
      return {
        sensorId: interlock.sensorId,
        message: `interlock ${interlock.sensorId} reads ${reading.value}`,
      };
    }
  }
  return undefined;
}
