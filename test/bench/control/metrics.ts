/**
 * Control-quality metrics over a uniformly sampled trace (one value per `stepS`), pure.
 * `values` are the plant's true values; `levels` the actuator level applied over each step.
 */

/** Integral of |setpoint − value| dt, unit·s, by the trapezoidal rule. */
export function integralAbsoluteError(values: ArrayLike<number>, setpoint: number, stepS: number): number {
  let sum = 0;
  for (let i = 1; i < values.length; i++) {
    sum += (Math.abs(setpoint - values[i - 1]!) + Math.abs(setpoint - values[i]!)) / 2;
  }
  return sum * stepS;
}

/** How far the value went above the setpoint, ≥ 0 (0 when it never did). */
export function overshoot(values: ArrayLike<number>, setpoint: number): number {
  let peak = 0;
  for (let i = 0; i < values.length; i++) peak = Math.max(peak, values[i]! - setpoint);
  return peak;
}

/**
 * Time from the start of the trace after which |setpoint − value| stays within `bandC`, s.
 * `undefined` when the last value is still outside the band (not settled within the trace).
 */
export function settlingTimeS(
  values: ArrayLike<number>,
  setpoint: number,
  bandC: number,
  stepS: number,
): number | undefined {
  for (let i = values.length - 1; i >= 0; i--) {
    if (Math.abs(setpoint - values[i]!) > bandC) {
      return i === values.length - 1 ? undefined : (i + 1) * stepS;
    }
  }
  return 0;
}

/** Σ|Δu| over the trace, starting from `levelBefore` (the level just before the trace). */
export function totalVariation(levels: ArrayLike<number>, levelBefore: number): number {
  let sum = 0;
  let previous = levelBefore;
  for (let i = 0; i < levels.length; i++) {
    sum += Math.abs(levels[i]! - previous);
    previous = levels[i]!;
  }
  return sum;
}

/** Relay switches (on↔off, a level above or below 0.5) per hour of trace, from `levelBefore`. */
export function switchesPerHour(levels: ArrayLike<number>, levelBefore: number, stepS: number): number {
  if (levels.length === 0) return 0;
  let switches = 0;
  let wasOn = levelBefore > 0.5;
  for (let i = 0; i < levels.length; i++) {
    const isOn = levels[i]! > 0.5;
    if (isOn !== wasOn) switches++;
    wasOn = isOn;
  }
  return switches / ((levels.length * stepS) / 3600);
}

/** All metrics of one run, over the window that starts at the scenario's event. */
export interface RunMetrics {
  /** °C·s */
  iae: number;
  /** °C */
  overshootC: number;
  /** s; null when not settled by the end of the window. */
  settlingS: number | null;
  /** Σ|Δu|, output fractions. */
  totalVariation: number;
  /** Relay runs only (null for a continuous actuator, and for the bound, which holds a level). */
  switchesPerHour: number | null;
}

export function runMetrics(
  values: ArrayLike<number>,
  levels: ArrayLike<number>,
  levelBefore: number,
  setpoint: number,
  bandC: number,
  stepS: number,
  relay: boolean,
): RunMetrics {
  return {
    iae: integralAbsoluteError(values, setpoint, stepS),
    overshootC: overshoot(values, setpoint),
    settlingS: settlingTimeS(values, setpoint, bandC, stepS) ?? null,
    totalVariation: totalVariation(levels, levelBefore),
    switchesPerHour: relay ? switchesPerHour(levels, levelBefore, stepS) : null,
  };
}

/** Below this a reference counts as zero (a bound's overshoot of 1e-12 °C is no overshoot). */
const NEGLIGIBLE = 1e-6;

/** value / reference, or null when the reference is (practically) 0 or either is missing. */
export function ratio(value: number | null, reference: number | null): number | null {
  if (value === null || reference === null || Math.abs(reference) < NEGLIGIBLE) return null;
  return value / reference;
}
