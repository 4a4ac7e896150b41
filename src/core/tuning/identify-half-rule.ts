import { type FopdtIdentification, identifyFopdt } from './identify-fopdt.js';
import { jackknifeError } from './least-squares.js';
import type { OscillationAnalysis } from './relay-analysis.js';
import type { RelayExperiment } from './relay-experiment.js';
import { type Fit, fitModel } from './sopdt-fit.js';

/**
 * FOPDT model by Skogestad's half rule from a fitted second-order-plus-dead-time model, pure.
 *
 *   SOPDT:  τ1 ≥ τ2,  y = A + K · lag(τ1) · lag(τ2) · u(t − θ0)
 *   FOPDT:  τ = τ1 + τ2/2,  θ = θ0 + τ2/2          (Skogestad 2003, the "half rule")
 *
 * Why not the FOPDT fit alone (identify-fopdt.ts): a plant with a second lag is not in its
 * model class, and the best FOPDT depends on the excitation. Measured on the second-order plant
 * of the benchmark (τ 600, θ 30, second lag 150 s; half rule τ 675, θ 105): from a short step near
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
  const fromMs = atRest ? undefined : freeFromMs(experiment, analysis, first.model.deadTimeS, floorMs);
  const all = experiment.samples.map((sample) => fromMs === undefined || sample.tMs >= fromMs);
  const fitted = all.filter(Boolean).length;
  if (fitted < MIN_FIT_SAMPLES) {
    throw new RangeError(
      `identifyHalfRule: only ${fitted} samples after the start's transient (at least ${MIN_FIT_SAMPLES})`,
    );
  }
  const fit = (e: RelayExperiment, m: readonly boolean[], t1: number, t2: number, th: number) =>
    fitModel(e, m, t1, t2, th, fromMs);
  const { chosen, scaleS } = search(experiment, analysis, all, first.model, atRest, fit);
  const jackknife = analysis.cycles.map((c) => {
    const mask = experiment.samples.map((s, i) => all[i]! && (s.tMs < c.startMs || s.tMs >= c.endMs));
    return reduce(refine(experiment, mask, chosen, scaleS, fit));
  });
  const model = reduce(chosen);
  // Along the ridge K and τ move together (relative error of one ≈ the other's).
  const ridge = ridgeError(experiment, all, chosen, scaleS, fit, fitted);
  return {
    model,
    standardError: {
      gain: larger(jackknifeError(jackknife.map((m) => m.gain)), ridge * Math.abs(model.gain)),
      timeConstantS: larger(
        jackknifeError(jackknife.map((m) => m.timeConstantS)),
        ridge * model.timeConstantS,
      ),
      deadTimeS: jackknifeError(jackknife.map((m) => m.deadTimeS)),
    },
    rmsResidual: Math.sqrt(chosen.sse / Math.max(1, fitted)),
    secondLagS: Math.min(chosen.tau1S, chosen.tau2S),
  };
}

/**
 * Not at rest: the record is fitted from when the past before it has passed through the dead
 * time (1.2 × the FOPDT fit's, which is θ0 + τ2/2 ≥ θ0), with the lags' state then free. That θ
 * is capped at half the relay's period, the longest a dead time under a relay can be: a start
 * that was not at rest (a PI still settling) once gave θ far beyond it, the fit then began near
 * the record's end and a handful of samples "fitted" K 10⁶.
 */
function freeFromMs(
  experiment: RelayExperiment,
  analysis: OscillationAnalysis,
  deadTimeS: number,
  floorMs: number | undefined,
): number {
  const t0 = experiment.samples[0]!.tMs;
  const transientS = Math.min(
    deadTimeS,
    Number.isFinite(analysis.periodS) ? analysis.periodS / 2 : deadTimeS,
  );
  return Math.max(floorMs ?? Number.NEGATIVE_INFINITY, t0 + 1.2 * transientS * 1000);
}

/** The best fit from a few starting splits of the FOPDT seed's dead time into θ0 and τ2. */
function search(
  experiment: RelayExperiment,
  analysis: OscillationAnalysis,
  mask: readonly boolean[],
  seed: FopdtIdentification['model'],
  atRest: boolean,
  fit: FitFn,
): { chosen: Fit; scaleS: number } {
  const { timeConstantS, deadTimeS } = seed;
  const periodS = Number.isFinite(analysis.periodS) ? analysis.periodS : Number.POSITIVE_INFINITY;
  // The search's step for τ2 and θ0: a FOPDT seed whose τ slid up the ridge (10⁷ s from a start
  // that was not at rest) must not make it 10⁶ s.
  const scaleS = Math.max(deadTimeS, Math.min(timeConstantS, 10 * periodS) / 20, 1);
  // Not at rest, the FOPDT seed itself may lie far up the ridge: the search also starts from
  // slow lags of one and four relay periods (a lag-dominated plant's τ is a few periods).
  const slowSeeds =
    atRest || !Number.isFinite(periodS) ? [timeConstantS] : [timeConstantS, periodS, 4 * periodS];
  let best: Fit | undefined;
  for (const slowS of slowSeeds) {
    for (const fraction of [0, 0.5, 1, 1.5]) {
      const tau2S = fraction * deadTimeS;
      const start = fit(experiment, mask, Math.max(slowS - tau2S / 2, 1), tau2S, deadTimeS - tau2S / 2);
      const refined = refine(experiment, mask, start, scaleS, fit);
      if (best === undefined || refined.sse < best.sse) best = refined;
    }
  }
  return { chosen: best!, scaleS };
}

/** The larger of two errors; the jackknife's is NaN with fewer than 2 cycles, the profile's is not. */
function larger(jackknife: number, profile: number): number {
  return Number.isFinite(jackknife) ? Math.max(jackknife, profile) : profile;
}

/** Fewest samples a fit may rest on: 7 unknowns at most, and a cycle's worth of readings. */
export const MIN_FIT_SAMPLES = 30;
/** How far the profile moves the slow lag: ±20 % (the identification target). */
const RIDGE_FACTOR = 1.2;

/**
 * The relative standard error of the slow lag from the fit's profile. Near its
 * setpoint a relay record shows K/τ (the slopes) and θ, but K and τ apart only through the
 * curvature of the first step and the rest the record starts from; the jackknife over cycles
 * leaves that step in every fit and misses it (a kettle 32 % off had a jackknife error of
 * 1 %). So: the slow lag held RIDGE_FACTOR off either way, everything else refitted; the sum of
 * squares' curvature along ln τ, against the residual variance, gives the standard error of
 * ln τ (the profile likelihood's, Gaussian noise); no curvature (a flat ridge): infinite.
 */
function ridgeError(
  experiment: RelayExperiment,
  mask: readonly boolean[],
  chosen: Fit,
  scaleS: number,
  fit: FitFn,
  fitted: number,
): number {
  // The two lags are interchangeable in the fit: the slow one is τ1 for the profile.
  const slow =
    chosen.tau1S >= chosen.tau2S ? chosen : { ...chosen, tau1S: chosen.tau2S, tau2S: chosen.tau1S };
  const variance = chosen.sse / Math.max(1, fitted - 6);
  if (!(variance > 0)) return 0;
  const [up, down] = [RIDGE_FACTOR, 1 / RIDGE_FACTOR].map((factor) => {
    const start = fit(experiment, mask, slow.tau1S * factor, slow.tau2S, slow.theta0S);
    return refine(experiment, mask, start, scaleS, fit, true).sse;
  });
  // The profile's curvature in ln τ from the three points (the chosen fit need not be its exact
  // minimum: a flat ridge has points as good 20 % away): SSE ≈ c + a·x², se(ln τ) = √(s²/a).
  const step = Math.log(RIDGE_FACTOR);
  const curvature = (up! + down! - 2 * chosen.sse) / (2 * step * step);
  return curvature > 0 ? Math.sqrt(variance / curvature) : Number.POSITIVE_INFINITY;
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
  holdTau1 = false,
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
      if (holdTau1 && dLn !== 0) continue;
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
