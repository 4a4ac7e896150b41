import { solveNormal } from './least-squares.js';
import { type RelayExperiment, replayDelayed } from './relay-experiment.js';

/**
 * One evaluation of the half rule's search (identify-half-rule.ts), pure: for fixed lags τ1, τ2
 * and dead time θ0, the second-order response to the record's output and the linear least
 * squares for the rest (ambient A, gain K, and the free start's terms). Apart from the search:
 * it is the search's inner step, with numerics of its own (equal lags, sums that cancel).
 */

/** A fitted second-order-plus-dead-time model and its sum of squared residuals. */
export interface Fit {
  tau1S: number;
  tau2S: number;
  theta0S: number;
  gain: number;
  ambient: number;
  sse: number;
}

/**
 * For fixed τ1, τ2, θ0: the unit-gain response z of the two lags in series to the delayed,
 * piecewise-constant output (exact between switches), then y ≈ A + K·z by least squares; with
 * `freeFromMs`, + C1·e^{−(t−from)/τ1} + C2·e^{−(t−from)/τ2} (the lags' free state then).
 */
export function fitModel(
  experiment: RelayExperiment,
  mask: readonly boolean[],
  tau1S: number,
  tau2S: number,
  theta0S: number,
  freeFromMs: number | undefined,
): Fit {
  const lags = lagTimesMs(tau1S, tau2S);
  const z = lagResponse(experiment, lags, theta0S * 1000);
  const free = freeFromMs !== undefined;
  const columns = free ? (lags.t2 > 0 ? 4 : 3) : 2;
  const { kept, rows } = regressionRows(experiment.samples, mask, z, columns, lags, freeFromMs);
  const solved = free ? solveFree(kept, rows, columns) : solveAtRest(kept, rows);
  return { tau1S, tau2S, theta0S, ...solved };
}

/** The two lags' time constants, ms (t2 0: a single lag). */
interface LagsMs {
  t1: number;
  t2: number;
}

function lagTimesMs(tau1S: number, tau2S: number): LagsMs {
  const t1 = Math.max(tau1S, 1e-3) * 1000;
  // Equal lags make the exact formula 0/0: a hair apart is the same response.
  let t2 = tau2S * 1000;
  if (Math.abs(t1 - t2) < 1e-6 * t1) t2 = t1 * (1 - 1e-6);
  return { t1, t2 };
}

/**
 * z at each sample (masked or not): the two lags in series, started at rest at the initial
 * level, driven by the switches delayed by `delayMs`, advanced exactly from one time to the next.
 */
function lagResponse(experiment: RelayExperiment, { t1, t2 }: LagsMs, delayMs: number): Float64Array {
  const { samples } = experiment;
  let z1 = experiment.initialLevel;
  let z2 = z1;
  let atMs = samples[0]!.tMs;
  const advance = (toMs: number, level: number) => {
    const dt = toMs - atMs;
    if (dt <= 0) return;
    const e1 = Math.exp(-dt / t1);
    if (t2 <= 0) {
      z1 = level + (z1 - level) * e1;
      z2 = z1;
    } else {
      const e2 = Math.exp(-dt / t2);
      z2 = level + (z2 - level) * e2 + ((z1 - level) * t1 * (e1 - e2)) / (t1 - t2);
      z1 = level + (z1 - level) * e1;
    }
    atMs = toMs;
  };
  const z = new Float64Array(samples.length);
  replayDelayed(experiment, delayMs, advance, (i) => {
    z[i] = z2;
  });
  return z;
}

/**
 * Each masked sample's row for the least squares, `columns + 1` wide: 1, z, the free terms
 * (with `freeFromMs`: e^{−age/τ1}, and e^{−age/τ2} when there are 4 columns), then the value.
 */
function regressionRows(
  samples: RelayExperiment['samples'],
  mask: readonly boolean[],
  z: Float64Array,
  columns: number,
  { t1, t2 }: LagsMs,
  freeFromMs: number | undefined,
): { kept: Float64Array; rows: number } {
  const width = columns + 1;
  const kept = new Float64Array(samples.length * width);
  let rows = 0;
  for (let i = 0; i < samples.length; i++) {
    if (!mask[i]) continue;
    const sample = samples[i]!;
    const at = rows * width;
    kept[at] = 1;
    kept[at + 1] = z[i]!;
    if (freeFromMs !== undefined) {
      const ageMs = sample.tMs - freeFromMs;
      kept[at + 2] = Math.exp(-ageMs / t1);
      if (columns === 4) kept[at + 3] = Math.exp(-ageMs / t2);
    }
    kept[at + columns] = sample.value;
    rows++;
  }
  return { kept, rows };
}

type Solution = Pick<Fit, 'ambient' | 'gain' | 'sse'>;

/**
 * y ≈ A + K·z: the closed form. The sum of squares from the residuals themselves, not the
 * expansion Σy² − A·Σy − K·Σzy, which cancels (see solveFree).
 */
function solveAtRest(kept: Float64Array, rows: number): Solution {
  let sz = 0;
  let szz = 0;
  let sy = 0;
  let szy = 0;
  for (let r = 0; r < rows; r++) {
    const z = kept[r * 3 + 1]!;
    const y = kept[r * 3 + 2]!;
    sz += z;
    szz += z * z;
    sy += y;
    szy += z * y;
  }
  const det = rows * szz - sz * sz;
  const gain = Math.abs(det) < 1e-300 ? 0 : (rows * szy - sz * sy) / det;
  const ambient = (sy - gain * sz) / rows;
  let sse = 0;
  for (let r = 0; r < rows; r++) sse += (kept[r * 3 + 2]! - ambient - gain * kept[r * 3 + 1]!) ** 2;
  return { gain, ambient, sse: Number.isFinite(sse) ? sse : Number.POSITIVE_INFINITY };
}

/**
 * y ≈ A + K·z + C1·e^(−t/τ1) (+ C2·e^(−t/τ2)) by the normal equations; Σ(y − Xc)² from the
 * residuals themselves, not Σy² − cᵀXᵀy: with a slow lag of 10⁷ s its free term is the constant
 * column to 10 digits, the coefficients are 10⁸ and that difference cancelled to 0, so the search
 * took the absurd fit as a perfect one (K 5.5·10⁵, τ 9.4·10⁶ s on a second-order plant
 * started while settling).
 */
function solveFree(kept: Float64Array, rows: number, columns: number): Solution {
  const width = columns + 1;
  const normal = Array.from({ length: columns }, () => new Array<number>(width).fill(0));
  for (let r = 0; r < rows; r++) {
    for (let a = 0; a < columns; a++) {
      for (let b = 0; b <= columns; b++) normal[a]![b]! += kept[r * width + a]! * kept[r * width + b]!;
    }
  }
  const c = solveNormal(normal);
  let sse = 0;
  for (let r = 0; r < rows; r++) {
    let predicted = 0;
    for (let k = 0; k < columns; k++) predicted += kept[r * width + k]! * c[k]!;
    sse += (kept[r * width + columns]! - predicted) ** 2;
  }
  const ok = c.every(Number.isFinite) && Number.isFinite(sse);
  return { ambient: c[0]!, gain: c[1]!, sse: ok ? sse : Number.POSITIVE_INFINITY };
}
