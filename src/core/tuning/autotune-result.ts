import type { AutotuneMemory } from './autotune-memory.js';
import type { FopdtIdentification } from './identify-fopdt.js';
import { identifyRecord } from './identify-start.js';
import { type ModulationSuggestion, suggestModulation } from './modulation.js';
import type { OscillationAnalysis } from './relay-analysis.js';
import type { RelayExperiment } from './relay-experiment.js';
import { judgeModel, type ModelVerdict } from './reliability.js';
import { type SimcGains, simcGains } from './simc.js';

/**
 * A finished relay record to a result, pure: the model (identify-start.ts: the start at rest or
 * free), its verdict (reliability.ts: a refused model ends the run), SIMC gains with the
 * setpoint weight for the loop's reading period, and the relay modulation. autotune.ts turns an
 * error into the run's abort reason.
 */

export interface AutotuneResult {
  identification: FopdtIdentification;
  /**
   * The model's verdict (reliability.ts): sound, or flagged with the reasons (K or τ not
   * determined within 20 %: stored, never auto-applied). A refused model ends the run as aborted.
   * Absent in a result from an older build.
   */
  reliability?: ModelVerdict;
  /** SIMC PI gains for the identified model with `closedLoopS`. */
  gains: SimcGains;
  closedLoopS: number;
  modulation: ModulationSuggestion;
  /** Mean period and peak-to-peak of the last cycles. */
  periodS: number;
  peakToPeak: number;
  /** Full relay cycles, the first (step) included. */
  cycles: number;
  durationMs: number;
}

export type RunResult = { ok: true; result: AutotuneResult } | { ok: false; reason: string };

export function resultOfRun(
  memory: AutotuneMemory,
  experiment: RelayExperiment,
  analysis: OscillationAnalysis,
  nowMs: number,
): RunResult {
  let identification: FopdtIdentification & { secondLagS: number };
  try {
    const fitFromMs = memory.turn?.fitFromMs;
    identification = identifyRecord(experiment, analysis, {
      startsAtRest: memory.startsAtRest,
      ...(memory.restCandidate ? { restCandidate: true } : {}),
      ...(fitFromMs === undefined ? {} : { fitFromMs: memory.startedAtMs + fitFromMs }),
    });
  } catch (error) {
    return { ok: false, reason: `the record did not fit a model: ${(error as Error).message}` };
  }
  const { model } = identification;
  const signOk = memory.side === 'raise' ? model.gain > 0 : model.gain < 0;
  if (!signOk || !(model.timeConstantS > 0) || !Number.isFinite(model.gain)) {
    const what = `gain ${round(model.gain)}, τ ${Math.round(model.timeConstantS)} s`;
    return { ok: false, reason: `the identified model makes no sense (${what})` };
  }
  const reliability = judgeModel(identification, {
    durationS: (nowMs - memory.startedAtMs) / 1000,
    periodS: analysis.periodS,
    ...(memory.noise ? { noiseSigma: memory.noise.sigma, noiseQuantum: memory.noise.quantum } : {}),
  });
  if (reliability.verdict === 'refused') {
    return { ok: false, reason: `the identified model is not reliable: ${reliability.reasons.join('; ')}` };
  }
  const closedLoopS = memory.closedLoopS ?? model.deadTimeS;
  let gains: SimcGains;
  try {
    // The second lag the fit found: SIMC's PID when it dominates what is left of the dead time.
    gains = simcGains(
      { ...model, secondLagS: identification.secondLagS },
      { closedLoopS, samplePeriodS: readingPeriodS(memory) },
    );
  } catch (error) {
    return { ok: false, reason: `no SIMC gains for the model: ${(error as Error).message}` };
  }
  return {
    ok: true,
    result: {
      identification,
      reliability,
      gains,
      closedLoopS,
      modulation: suggestModulation(model, gains.kp, memory.hysteresis!),
      periodS: analysis.periodS,
      peakToPeak: analysis.peakToPeak,
      cycles: memory.cycles,
      durationMs: nowMs - memory.startedAtMs,
    },
  };
}

/** The sensor's reading period, s: the record's median spacing, undone of its thinning. */
export function readingPeriodS(memory: Pick<AutotuneMemory, 'samples' | 'keepEvery'>): number {
  const gaps = memory.samples.slice(1).map(([tMs], i) => tMs - memory.samples[i]![0]);
  if (gaps.length === 0) return 0;
  gaps.sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)]! / 1000 / memory.keepEvery;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
