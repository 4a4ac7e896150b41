/**
 * Sensor noise from a short record taken with the output held steady, pure.
 *
 * The plant may drift while the output is held (it was regulating, a relay is held off, the
 * dead time is still passing), and over a dozen readings that drift is no straight line. So the
 * readings are fitted by a least-squares parabola in time and σ² is the residual sum of squares
 * over n − 3 degrees of freedom: a trend with constant curvature is removed exactly, and for
 * independent noise that estimate of σ² is unbiased with n − 3 degrees of freedom, the most a
 * record of n readings holds once a parabola is taken out.
 *
 * Why not second differences (the earlier estimator, d = y[i+1] − 2y[i] + y[i−1], Var(d) = 6σ²,
 * the smaller half of d² kept): neighbouring d share readings (correlation −2/3 and 1/6), and
 * keeping half of 10 of them leaves about 3 degrees of freedom. Measured over 2,000 seeds of 12
 * readings: its σ ranged 0.44–2.07 × the true one (5–95 %, median 1.08), within ±30 % on 47 % of
 * seeds; the parabola's ranges 0.61–1.37 (median 0.97), within ±30 % on 79 %, at every σ from
 * 0.05 to 0.5 with or without 0.0625 quantisation. A single run reading 2× (seed 1 of the
 * autotune's tests: 1.9× at σ 0.05, over the "too noisy" limit at σ 0.3) was that spread, not a
 * wrong scale. Any trend the parabola does not hold only adds to the residuals: E[RSS] =
 * (n − 3)σ² + the unfitted part of the trend, so a mild one makes the estimate err high, towards
 * a wider band. A strong one (a dead time ending inside the record: the kettle read every 15 s
 * drops 15 °C in its last 3 readings) would make it read "too noisy"; when the parabola reads
 * TREND_LEFT_RATIO × the local estimate (the earlier second differences, robust to a kink but
 * with about 3 degrees of freedom) or more, the local one is taken.
 *
 * Quantisation is not subtracted (no Sheppard correction, σ² − q²/12): the relay sees the
 * quantised readings, their rounding error is noise to it, and the band's floor of one quantum
 * covers a σ under q/3 (3σ < q).
 *
 * `sigmaUpper`: a one-sided 95 % upper bound on σ from the same residuals (χ² with n − 3
 * degrees of freedom, Wilson–Hilferty), for a band that must not fall under 3σ_true: from 12
 * readings it is 1.64 × the estimate. Any unbiased σ is under the truth on about half the runs,
 * so a band of 3σ is narrower than 3σ_true on about half (measured: 42 % of runs had it wide
 * enough; on 3 · sigmaUpper, 97 %). The relay then crosses its band on noise when two readings
 * differ by 6 × the estimate, ~1 % a reading at the estimate's 5 % low point (0.6σ).
 *
 * The quantum is the smallest step between consecutive distinct readings: a DS18B20 reads in
 * 0.0625 °C steps, and with σ near the quantum a dozen readings show at least one single step.
 */

import type { Sample } from './relay-experiment.js';

export interface SensorNoise {
  /** Standard deviation of the readings around their trend (a parabola), unit of the value. */
  sigma: number;
  /** One-sided 95 % upper confidence bound on sigma, unit of the value. */
  sigmaUpper: number;
  /** Smallest step between readings (0 when every reading was the same). */
  quantum: number;
}

/** Standard normal quantile of the upper bound's confidence: P(Z < −1.645) = 5 %. */
const UPPER_Z = -1.6449;

export function estimateNoise(samples: readonly Sample[]): SensorNoise {
  if (samples.length < 4) throw new RangeError('estimateNoise: needs at least 4 readings');
  const n = samples.length;
  const degrees = n - 3;
  let smallestStep = Number.POSITIVE_INFINITY;
  for (let i = 1; i < n; i++) {
    const step = Math.abs(samples[i]!.value - samples[i - 1]!.value);
    if (step > 1e-9) smallestStep = Math.min(smallestStep, step);
  }
  const quantum = Number.isFinite(smallestStep) ? smallestStep : 0;
  const parabola = Math.sqrt(parabolaResidualSquares(samples) / degrees);
  const local = trimmedSecondDifferences(samples);
  let sigma = parabola;
  let upperFactor = Math.sqrt(degrees / chiSquareQuantile(degrees, UPPER_Z));
  if (parabola > TREND_LEFT_RATIO * Math.max(local, quantum / 2)) {
    // A trend the parabola cannot hold (a kink: a dead time ending inside the record) fills its
    // residuals; the local estimate ignores it, on fewer degrees of freedom.
    sigma = local;
    upperFactor = Math.sqrt(TRIMMED_DEGREES / chiSquareQuantile(TRIMMED_DEGREES, UPPER_Z));
  }
  return {
    sigma,
    sigmaUpper: sigma * upperFactor,
    quantum,
  };
}

/**
 * Parabola over local estimate above which a trend is taken to be left in the parabola's
 * residuals (the local one taken as at least half a quantum: steady quantised readings give
 * d = 0). With noise alone the ratio is 0.88 at the median, over 2.8 on 1 % of 12-reading
 * records and over 4 on 0.2 % (20,000 seeds); a kink that moves the value by many σ puts it far
 * above. Between, a milder trend only makes the parabola read high: a wider band, not narrower.
 */
const TREND_LEFT_RATIO = 4;

/**
 * The fallback, the earlier estimator: second differences d = y[i+1] − 2y[i] + y[i−1] (a smooth
 * trend cancels in them, a kink touches two), Var(d) = 6σ², the smaller half of d² kept (where
 * the plant turns quickly a few differences carry curvature, not noise). For Gaussian d the mean
 * of d² over its smaller half is 0.1426 × Var(d) (E[x² | |x| < 0.6745], a standard normal).
 */
const TRIMMED_FRACTION_OF_VARIANCE = 0.1426;
/**
 * Its degrees of freedom for the upper bound: 5 correlated d² of 10 (measured: 5–95 % of its σ
 * 0.44–2.07 ×, about χ²'s with 4); 3 errs wide (the bound 2.9 × the estimate).
 */
const TRIMMED_DEGREES = 3;

function trimmedSecondDifferences(samples: readonly Sample[]): number {
  const values = samples.map((s) => s.value);
  const squares: number[] = [];
  for (let i = 1; i + 1 < values.length; i++) {
    squares.push((values[i + 1]! - 2 * values[i]! + values[i - 1]!) ** 2);
  }
  squares.sort((a, b) => a - b);
  const kept = squares.slice(0, Math.max(1, Math.ceil(squares.length / 2)));
  return Math.sqrt(kept.reduce((sum, d2) => sum + d2, 0) / kept.length / (6 * TRIMMED_FRACTION_OF_VARIANCE));
}

/**
 * Residual sum of squares of the least-squares parabola through the readings. Time is centred
 * and scaled to −1..1 so the normal equations stay well conditioned for any clock (ms since
 * 1970, or since the start); readings are centred on their mean for the same reason.
 */
function parabolaResidualSquares(samples: readonly Sample[]): number {
  const n = samples.length;
  const t0 = samples[0]!.tMs;
  const spanMs = samples[n - 1]!.tMs - t0;
  const mid = t0 + spanMs / 2;
  const half = spanMs > 0 ? spanMs / 2 : 1;
  let mean = 0;
  for (const s of samples) mean += s.value / n;
  const x = samples.map((s) => (s.tMs - mid) / half);
  const y = samples.map((s) => s.value - mean);
  // Normal equations for y ≈ a + b·x + c·x²: a 3×4 augmented matrix, row-major.
  const m = new Float64Array(12);
  for (let i = 0; i < n; i++) {
    const basis = [1, x[i]!, x[i]! ** 2];
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c < 3; c++) m[4 * r + c] = m[4 * r + c]! + basis[r]! * basis[c]!;
      m[4 * r + 3] = m[4 * r + 3]! + basis[r]! * y[i]!;
    }
  }
  const coef = solve3(m);
  // Fewer than 3 distinct times: no parabola; the spread around the mean.
  const residuals = y.map((v, i) =>
    coef === undefined ? v : v - (coef[0] + coef[1] * x[i]! + coef[2] * x[i]! ** 2),
  );
  let rss = 0;
  for (let i = 0; i < n; i++) rss += residuals[i]! ** 2;
  return rss;
}

/** Gauss–Jordan elimination with partial pivoting on a 3×4 augmented matrix; undefined if singular. */
function solve3(m: Float64Array): [number, number, number] | undefined {
  const at = (r: number, c: number) => m[4 * r + c]!;
  for (let col = 0; col < 3; col++) {
    let pivot = col;
    for (let r = col + 1; r < 3; r++) if (Math.abs(at(r, col)) > Math.abs(at(pivot, col))) pivot = r;
    if (!(Math.abs(at(pivot, col)) > 1e-12)) return undefined;
    for (let c = 0; c < 4; c++) {
      const held = at(col, c);
      m[4 * col + c] = at(pivot, c);
      m[4 * pivot + c] = held;
    }
    for (let r = 0; r < 3; r++) {
      if (r === col) continue;
      const factor = at(r, col) / at(col, col);
      for (let c = col; c < 4; c++) m[4 * r + c] = at(r, c) - factor * at(col, c);
    }
  }
  return [at(0, 3) / at(0, 0), at(1, 3) / at(1, 1), at(2, 3) / at(2, 2)];
}

/**
 * χ² quantile with k degrees of freedom at the standard normal quantile z (Wilson–Hilferty:
 * within 1 % of the exact 3.325 for k 9 at 5 %); floored so a tiny k gives a large, finite bound.
 */
function chiSquareQuantile(k: number, z: number): number {
  const a = 2 / (9 * k);
  return Math.max(k * (1 - a + z * Math.sqrt(a)) ** 3, 1e-3 * k);
}
