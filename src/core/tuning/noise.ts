/**
 * Sensor noise from a short record taken with the output held steady, pure.
 *
 * The plant may drift while the output is held (it was regulating, a relay is held off, the
 * dead time is still passing), and over a dozen readings that drift is no straight line. So σ
 * comes from second differences, d = y[i+1] − 2y[i] + y[i−1]: a smooth trend cancels in them
 * (its curvature times the sampling interval squared), while independent noise gives
 * Var(d) = 6σ². The quantum is the smallest step between consecutive distinct readings: a
 * DS18B20 reads in 0.0625 °C steps, and with σ near the quantum a dozen readings show at least
 * one single step.
 */

import type { Sample } from './relay-experiment.js';

export interface SensorNoise {
  /** Standard deviation of the readings around their trend, unit of the value. */
  sigma: number;
  /** Smallest step between readings (0 when every reading was the same). */
  quantum: number;
}

/**
 * The smaller half of the squared second differences is kept: where the plant turns quickly
 * (a kettle's dead time ending within the dozen readings) a few differences carry curvature,
 * not noise. For Gaussian d, the mean of d² over its smaller half is 0.1426 × Var(d)
 * (E[x² | |x| < 0.6745] for a standard normal).
 */
const TRIMMED_FRACTION_OF_VARIANCE = 0.1426;

export function estimateNoise(samples: readonly Sample[]): SensorNoise {
  if (samples.length < 4) throw new RangeError('estimateNoise: needs at least 4 readings');
  const values = samples.map((s) => s.value);
  const squares: number[] = [];
  for (let i = 1; i + 1 < values.length; i++) {
    squares.push((values[i + 1]! - 2 * values[i]! + values[i - 1]!) ** 2);
  }
  squares.sort((a, b) => a - b);
  const kept = squares.slice(0, Math.max(1, Math.ceil(squares.length / 2)));
  let quantum = Number.POSITIVE_INFINITY;
  for (let i = 1; i < values.length; i++) {
    const step = Math.abs(values[i]! - values[i - 1]!);
    if (step > 1e-9) quantum = Math.min(quantum, step);
  }
  return {
    sigma: Math.sqrt(
      kept.reduce((sum, d2) => sum + d2, 0) / kept.length / (6 * TRIMMED_FRACTION_OF_VARIANCE),
    ),
    quantum: Number.isFinite(quantum) ? quantum : 0,
  };
}
