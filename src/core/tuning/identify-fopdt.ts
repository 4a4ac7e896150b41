import { jackknifeError, leastSquares } from './least-squares.js';
import type { OscillationAnalysis } from './relay-analysis.js';
import { type RelayExperiment, replayDelayed } from './relay-experiment.js';

/**
 * Identifies a first-order-plus-dead-time model from a relay experiment, pure.
 *
 *   τ·dy/dt = −y + A + K·u(t − θ)      (A: the value with the output at 0, the ambient)
 *
 * Rather than the describing function (an approximation that assumes a sinusoid, 10–30 % off
 * on lag- or dead-time-dominated plants), the model is fitted to the whole record: for a given
 * τ and θ the exact response to the recorded, piecewise-constant relay output is linear in A and
 * K, so those come from linear least squares; τ and θ from a grid, then a compass search. The
 * open-loop step at the start (plant at rest with `initialLevel`) carries the static gain, which
 * the oscillation alone barely shows (a nearly integrating plant oscillates the same for any
 * large τ/K pair).
 *
 * The uncertainty is a jackknife over the cycles of the analysis: each cycle's samples are left
 * out in turn and the fit redone; the spread of those fits is the standard error.
 */

export interface FopdtModel {
  /** Static gain per unit of output (°C at full output for a heater; negative for a cooler). */
  gain: number;
  timeConstantS: number;
  deadTimeS: number;
  /** Steady value with the output at 0. */
  ambient: number;
}

export interface FopdtIdentification {
  model: FopdtModel;
  /** Jackknife standard errors, same units as the model; NaN with fewer than 2 cycles. */
  standardError: { gain: number; timeConstantS: number; deadTimeS: number };
  /** Root-mean-square difference between the record and the model, in the value's unit. */
  rmsResidual: number;
}

export interface IdentifyOptions {
  /**
   * The plant is at rest with `initialLevel` when the record starts (default true): its first
   * value is then the model's own steady state. When false a free decaying term is fitted too.
   */
  startsAtRest?: boolean;
}

interface Fit {
  timeConstantS: number;
  deadTimeS: number;
  gain: number;
  ambient: number;
  sse: number;
}

const GRID_POINTS = 40;

export function identifyFopdt(
  experiment: RelayExperiment,
  analysis: OscillationAnalysis,
  options: IdentifyOptions = {},
): FopdtIdentification {
  const { samples } = experiment;
  if (samples.length < 10 || experiment.switches.length < 2) {
    throw new RangeError('identifyFopdt: needs at least 10 samples and 2 relay switches');
  }
  const atRest = options.startsAtRest ?? true;
  const periodS = Number.isFinite(analysis.periodS) ? analysis.periodS : recordSpanS(experiment) / 4;
  const all = samples.map(() => true);
  const best = refine(experiment, atRest, all, gridSearch(experiment, atRest, all, periodS), periodS);
  const jackknife = analysis.cycles.map((c) => {
    const mask = samples.map((s) => s.tMs < c.startMs || s.tMs >= c.endMs);
    return refine(experiment, atRest, mask, best, periodS);
  });
  return {
    model: {
      gain: best.gain,
      timeConstantS: best.timeConstantS,
      deadTimeS: best.deadTimeS,
      ambient: best.ambient,
    },
    standardError: {
      gain: jackknifeError(jackknife.map((f) => f.gain)),
      timeConstantS: jackknifeError(jackknife.map((f) => f.timeConstantS)),
      deadTimeS: jackknifeError(jackknife.map((f) => f.deadTimeS)),
    },
    rmsResidual: Math.sqrt(best.sse / samples.length),
  };
}

function recordSpanS(experiment: RelayExperiment): number {
  const { samples } = experiment;
  return (samples[samples.length - 1]!.tMs - samples[0]!.tMs) / 1000;
}

/** θ on a linear grid 0..period/2 (the dead time never exceeds half a relay period), τ on a log grid. */
function gridSearch(
  experiment: RelayExperiment,
  atRest: boolean,
  mask: readonly boolean[],
  periodS: number,
): Fit {
  let best: Fit | undefined;
  const tauMinS = periodS / 50;
  const tauMaxS = Math.max(periodS * 500, recordSpanS(experiment) * 10);
  for (let i = 0; i < GRID_POINTS; i++) {
    const tauS = tauMinS * (tauMaxS / tauMinS) ** (i / (GRID_POINTS - 1));
    for (let j = 0; j < GRID_POINTS; j++) {
      const fit = fitLinear(experiment, atRest, mask, tauS, ((periodS / 2) * j) / (GRID_POINTS - 1));
      if (best === undefined || fit.sse < best.sse) best = fit;
    }
  }
  return best!;
}

/** Compass search in (ln τ, θ) from `start`, halving the steps until they are negligible. */
function refine(
  experiment: RelayExperiment,
  atRest: boolean,
  mask: readonly boolean[],
  start: Fit,
  periodS: number,
): Fit {
  let best = fitLinear(experiment, atRest, mask, start.timeConstantS, start.deadTimeS);
  let stepLnTau = 0.2;
  let stepThetaS = periodS / 20;
  while (stepLnTau > 1e-4 || stepThetaS > 0.05) {
    let improved = false;
    for (const [dLn, dTheta] of [
      [stepLnTau, 0],
      [-stepLnTau, 0],
      [0, stepThetaS],
      [0, -stepThetaS],
    ] as const) {
      const thetaS = best.deadTimeS + dTheta;
      if (thetaS < 0) continue;
      const fit = fitLinear(experiment, atRest, mask, best.timeConstantS * Math.exp(dLn), thetaS);
      if (fit.sse < best.sse) {
        best = fit;
        improved = true;
      }
    }
    if (!improved) {
      stepLnTau /= 2;
      stepThetaS /= 2;
    }
  }
  return best;
}

/**
 * For fixed τ and θ: z(t), the unit-gain lag of the delayed relay output at each sample, then
 * y ≈ A + K·z (+ C·e^{−t/τ} when not at rest) by least squares over the masked samples.
 */
function fitLinear(
  experiment: RelayExperiment,
  atRest: boolean,
  mask: readonly boolean[],
  timeConstantS: number,
  deadTimeS: number,
): Fit {
  const { samples } = experiment;
  const t0 = samples[0]!.tMs;
  const delayMs = deadTimeS * 1000;
  const tauMs = timeConstantS * 1000;
  let z = experiment.initialLevel;
  let atMs = t0;
  const columns: number[][] = [];
  const values: number[] = [];
  const advance = (toMs: number, level: number) => {
    if (toMs > atMs) {
      z = level + (z - level) * Math.exp(-(toMs - atMs) / tauMs);
      atMs = toMs;
    }
  };
  replayDelayed(experiment, delayMs, advance, (i) => {
    if (!mask[i]) return;
    const sample = samples[i]!;
    columns.push(atRest ? [1, z] : [1, z, Math.exp(-(sample.tMs - t0) / tauMs)]);
    values.push(sample.value);
  });
  const coefficients = leastSquares(columns, values);
  let sse = 0;
  for (let i = 0; i < values.length; i++) {
    const row = columns[i]!;
    let predicted = 0;
    for (let k = 0; k < row.length; k++) predicted += row[k]! * coefficients[k]!;
    sse += (values[i]! - predicted) ** 2;
  }
  return { timeConstantS, deadTimeS, ambient: coefficients[0]!, gain: coefficients[1]!, sse };
}
