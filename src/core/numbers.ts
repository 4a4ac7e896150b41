/** Small numeric helpers and thresholds shared by the pure core. */

export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** A duty or output as a fraction 0..1. */
export function clampFraction(value: number): number {
  return clamp(value, 0, 1);
}

/** Rounded to hundredths, for messages. */
export function roundHundredths(value: number): number {
  return Math.round(value * 100) / 100;
}

/** A fraction 0..1 (or −1..1) as a percentage with one decimal, for people: 0.4567 → "45.7 %". */
export function formatPercent(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10} %`;
}

/**
 * Output at or beyond this fraction of full counts as full (saturated): the effect watch and the
 * runaway watch both ask whether the controller is pushing as hard as it can.
 */
export const FULL_OUTPUT = 0.99;

/** An actuator level above 0: on, or running at some power. */
export function isOn(level: number | undefined): boolean {
  return (level ?? 0) > 0;
}
