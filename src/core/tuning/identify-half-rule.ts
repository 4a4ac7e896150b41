import { type FopdtIdentification, identifyFopdt } from './identify-fopdt.js';
import { jackknifeError, solveNormal } from './least-squares.js';
import type { OscillationAnalysis } from './relay-analysis.js';
import type { RelayExperiment } from './relay-experiment.js';

/**
 * FOPDT model by Skogestad's half rule from a fitted second-order-plus-dead-time model, pure.
 *
 *   SOPDT:  τ1 ≥ τ2,  y = A + K · lag(τ1) · lag(τ2) · u(t − θ0)
 *   FOPDT:  τ = τ1 + τ2/2,  θ = θ0 + τ2/2          (Skogestad 2003, the "half rule")
 *
 * Why not the FOPDT fit alone (identify-fopdt.ts): a plant with a second lag is not in its
 * model class, and the best FOPDT depends on the excitation. Measured on the second-order plant
 * of issue 12 (τ 600, θ 30, second lag 150 s; half rule τ 675, θ 105): from a short step near
 * the setpoint the FOPDT fit gives τ 56–66 % high (the relay oscillation, near the ultimate
 * frequency, dominates the samples); from ambient, θ 21 % high. Fitting the richer model and
 * reducing it by the half rule gives the same FOPDT whatever the excitation, and the one SIMC's
 * rules were derived for. On a FOPDT plant τ2 goes to 0 and the result is the FOPDT fit.
 *
 * Search: from the FOPDT fit, a few starting splits of its dead time into θ0 and τ2, each
 * refined by a compass search in (ln τ1, τ2, θ0); K and A by linear least squares as in the
 * FOPDT fit. Uncertainty: the jackknife over the analysis' cycles, on the reduced parameters.
 */

export interface HalfRuleIdentification extends FopdtIdentification {
  /** The fitted second lag τ2, s (0: a first-order plant). */
  secondLagS: number;
}

interface Fit {
  tau1S: number;
  tau2S: number;
  theta0S: number;
  gain: number;
  ambient: number;
  sse: number;
}

export interface HalfRuleOptions {
  /**
   * The plant is at rest with `initialLevel` when the record starts (default true). When false
   * (a loop that was regulating: a relay's ripple, a duty that was not yet steady) the fit
   * starts 1.2 dead times into the record, with the lags' state then free (a decaying term per
   * lag): what the output did before the record has passed the dead time by then. The output
   * must be steady from the record's start (the autotune holds it for the noise phase).
   */
  startsAtRest?: boolean;
  /**
   * Not at rest: the fit starts no earlier than this (ms, the record's clock). The autotune
   * gives where a regulating relay's value turned under the held low level: before it, a
   * window's pulses from before the start may still be arriving through the dead time. The
   * first FOPDT fit (which sizes the dead time) starts there too.
   */
  fitFromMs?: number;
}

export function identifyHalfRule(
  experiment: RelayExperiment,
  analysis: OscillationAnalysis,
  options: HalfRuleOptions = {},
): HalfRuleIdentification {
  const atRest = options.startsAtRest ?? true;
  const floorMs = atRest ? undefined : options.fitFromMs;
  const seed =
    floorMs === undefined
      ? experiment
      : { ...experiment, samples: experiment.samples.filter((sample) => sample.tMs >= floorMs) };
  const first = identifyFopdt(seed, analysis, { startsAtRest: atRest });
  const { timeConstantS, deadTimeS } = first.model;
  // Not at rest: the record is fitted from when the past before it has passed through the dead
  // time (1.2 × the FOPDT fit's, which is θ0 + τ2/2 ≥ θ0), with the lags' state then free.
  const t0 = experiment.samples[0]!.tMs;
  const fromMs = atRest
    ? Number.NEGATIVE_INFINITY
    : Math.max(floorMs ?? Number.NEGATIVE_INFINITY, t0 + 1.2 * deadTimeS * 1000);
  const all = experiment.samples.map((sample) => sample.tMs >= fromMs);
  const fit = (e: RelayExperiment, m: readonly boolean[], t1: number, t2: number, th: number) =>
    fitModel(e, m, t1, t2, th, atRest ? undefined : fromMs);
  const scaleS = Math.max(deadTimeS, timeConstantS / 20, 1);
  let best: Fit | undefined;
  for (const fraction of [0, 0.5, 1, 1.5]) {
    const tau2S = fraction * deadTimeS;
    const start = fit(experiment, all, timeConstantS - tau2S / 2, tau2S, deadTimeS - tau2S / 2);
    const refined = refine(experiment, all, start, scaleS, fit);
    if (best === undefined || refined.sse < best.sse) best = refined;
  }
  const chosen = best!;
  const jackknife = analysis.cycles.map((c) => {
    const mask = experiment.samples.map((s, i) => all[i]! && (s.tMs < c.startMs || s.tMs >= c.endMs));
    return reduce(refine(experiment, mask, chosen, scaleS, fit));
  });
  const model = reduce(chosen);
  return {
    model,
    standardError: {
      gain: jackknifeError(jackknife.map((m) => m.gain)),
      timeConstantS: jackknifeError(jackknife.map((m) => m.timeConstantS)),
      deadTimeS: jackknifeError(jackknife.map((m) => m.deadTimeS)),
    },
    rmsResidual: Math.sqrt(chosen.sse / Math.max(1, all.filter(Boolean).length)),
    secondLagS: Math.min(chosen.tau1S, chosen.tau2S),
  };
}

function reduce(f: Fit): FopdtIdentification['model'] {
  const slow = Math.max(f.tau1S, f.tau2S);
  const fast = Math.min(f.tau1S, f.tau2S);
  return {
    gain: f.gain,
    ambient: f.ambient,
    timeConstantS: slow + fast / 2,
    deadTimeS: f.theta0S + fast / 2,
  };
}

type FitFn = (
  e: RelayExperiment,
  mask: readonly boolean[],
  tau1S: number,
  tau2S: number,
  theta0S: number,
) => Fit;

function refine(
  experiment: RelayExperiment,
  mask: readonly boolean[],
  start: Fit,
  scaleS: number,
  fit: FitFn,
): Fit {
  let best = fit(experiment, mask, start.tau1S, start.tau2S, start.theta0S);
  let stepLn = 0.2;
  let stepS = scaleS / 4;
  while (stepLn > 1e-3 || stepS > 0.5) {
    let improved = false;
    for (const [dLn, dTau2, dTheta] of [
      [stepLn, 0, 0],
      [-stepLn, 0, 0],
      [0, stepS, 0],
      [0, -stepS, 0],
      [0, 0, stepS],
      [0, 0, -stepS],
      // Along the half rule's ridge: τ2 traded for θ0 at a constant apparent dead time.
      [0, stepS, -stepS / 2],
      [0, -stepS, stepS / 2],
    ] as const) {
      const tau2S = best.tau2S + dTau2;
      const theta0S = best.theta0S + dTheta;
      if (tau2S < 0 || theta0S < 0) continue;
      const next = fit(experiment, mask, best.tau1S * Math.exp(dLn), tau2S, theta0S);
      if (next.sse < best.sse) {
        best = next;
        improved = true;
      }
    }
    if (!improved) {
      stepLn /= 2;
      stepS /= 2;
    }
  }
  return best;
}

/**
 * For fixed τ1, τ2, θ0: the unit-gain response z of the two lags in series to the delayed,
 * piecewise-constant output (exact between switches), then y ≈ A + K·z by least squares; with
 * `freeFromMs`, + C1·e^{−(t−from)/τ1} + C2·e^{−(t−from)/τ2} (the lags' free state then).
 */
function fitModel(
  experiment: RelayExperiment,
  mask: readonly boolean[],
  tau1S: number,
  tau2S: number,
  theta0S: number,
  freeFromMs: number | undefined,
): Fit {
  const { samples, switches } = experiment;
  const t1 = Math.max(tau1S, 1e-3) * 1000;
  // Equal lags make the exact formula 0/0: a hair apart is the same response.
  let t2 = tau2S * 1000;
  if (Math.abs(t1 - t2) < 1e-6 * t1) t2 = t1 * (1 - 1e-6);
  const delayMs = theta0S * 1000;
  let level = experiment.initialLevel;
  let z1 = level;
  let z2 = level;
  let atMs = samples[0]!.tMs;
  let next = 0;
  const advance = (toMs: number) => {
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
  const free = freeFromMs !== undefined;
  const columns = t2 > 0 ? 4 : 3;
  const normal = free ? Array.from({ length: columns }, () => new Array<number>(columns + 1).fill(0)) : [];
  const row = new Array<number>(columns).fill(0);
  let n = 0;
  let sz = 0;
  let szz = 0;
  let sy = 0;
  let szy = 0;
  let syy = 0;
  for (let i = 0; i < samples.length; i++) {
    const sample = samples[i]!;
    for (; next < switches.length && switches[next]!.tMs + delayMs <= sample.tMs; next++) {
      advance(switches[next]!.tMs + delayMs);
      level = switches[next]!.level;
    }
    advance(sample.tMs);
    if (!mask[i]) continue;
    if (free) {
      const ageMs = sample.tMs - freeFromMs;
      row[0] = 1;
      row[1] = z2;
      row[2] = Math.exp(-ageMs / t1);
      if (columns === 4) row[3] = Math.exp(-ageMs / t2);
      for (let a = 0; a < columns; a++) {
        for (let b = 0; b < columns; b++) normal[a]![b]! += row[a]! * row[b]!;
        normal[a]![columns]! += row[a]! * sample.value;
      }
      syy += sample.value * sample.value;
      continue;
    }
    n++;
    sz += z2;
    szz += z2 * z2;
    sy += sample.value;
    szy += z2 * sample.value;
    syy += sample.value * sample.value;
  }
  if (free) {
    // Σ(y − Xc)² = Σy² − cᵀXᵀy at the least-squares solution.
    const rhs = normal.map((r) => r[columns]!);
    const c = solveNormal(normal);
    const sse = Math.max(0, syy - c.reduce((sum, ck, k) => sum + ck * rhs[k]!, 0));
    const ok = c.every(Number.isFinite);
    return { tau1S, tau2S, theta0S, ambient: c[0]!, gain: c[1]!, sse: ok ? sse : Number.POSITIVE_INFINITY };
  }
  const det = n * szz - sz * sz;
  const gain = Math.abs(det) < 1e-300 ? 0 : (n * szy - sz * sy) / det;
  const ambient = (sy - gain * sz) / n;
  // Σ(y − A − K z)² expanded with the normal equations' solution.
  const sse = Math.max(0, syy - ambient * sy - gain * szy);
  return { tau1S, tau2S, theta0S, gain, ambient, sse };
}
