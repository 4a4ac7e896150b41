import type { FopdtIdentification } from './identify-fopdt.js';

/**
 * Whether an identified model can be trusted, pure. A relay record near the setpoint
 * always "fits" something; what the fit cannot tell apart shows as a large standard error, and
 * what no plant can be shows as parameters out of the record's physical bounds. Two verdicts:
 *
 * refused   the model is not a description of the plant: τ far beyond what the record can show
 *           (an integrating fit: K and τ both ~10⁶ with K/τ right), θ longer than the relay's
 *           period (a dead time under a relay is shorter than half of it), or a residual far
 *           above the sensor's noise (something disturbed the run). The run ends as aborted
 *           with the reasons; nothing is stored.
 * flagged   plausible, but K or τ is not determined within IDENTIFICATION_SE (relative standard
 *           error, identify-half-rule.ts: the larger of the jackknife's and the fit profile's),
 *           or the residual is well above the noise: stored with the reasons, never put in
 *           force without a person (autoApply).
 *
 * The same verdict is made again from a stored tuning (its model, standard errors and summary:
 * judgeStoredModel), so the auto-apply check needs nothing the store does not keep.
 */

/** Relative standard error of K or τ above which a model is flagged: the 20 % docs/tuning.md states. */
export const IDENTIFICATION_SE = 0.2;
/** A τ longer than this many record lengths is not seen by the record (an integrating fit). */
export const MAX_TAU_PER_RECORD = 20;
/** A dead time longer than this share of the relay's period cannot be one (≤ ½ for any plant). */
export const MAX_DEAD_TIME_PER_PERIOD = 0.6;
/** A residual above this many noise σ (with quanta/√12) is a record the model does not explain. */
export const MAX_RESIDUAL_PER_NOISE = 3;
/**
 * Above this many, the model is flagged: a sound fit's residual is the noise (measured 0.9–1.2 σ
 * on the bench's plants); a fit stuck on the wrong start measured 1.9 σ.
 */
export const FLAG_RESIDUAL_PER_NOISE = 1.5;

export interface ModelVerdict {
  /** sound: use it; flagged: store, never auto-apply; refused: do not store. */
  verdict: 'sound' | 'flagged' | 'refused';
  reliable: boolean;
  /** For a person, one per finding; empty when sound. */
  reasons: string[];
}

/** What the verdict reads: the identification and the run's own figures. */
export interface RunFigures {
  /** The record's length, s. */
  durationS: number;
  /** The relay's period, s (NaN or absent: not known). */
  periodS?: number;
  /** The sensor's noise from the noise phase: σ and quantum, the loop's unit. */
  noiseSigma?: number;
  noiseQuantum?: number;
}

export function judgeModel(
  identification: Pick<FopdtIdentification, 'model' | 'standardError' | 'rmsResidual'>,
  run: RunFigures,
): ModelVerdict {
  const { model, standardError, rmsResidual } = identification;
  const refused: string[] = [];
  const flagged: string[] = [];
  const tauS = model.timeConstantS;
  if (!(Number.isFinite(model.gain) && tauS > 0 && model.deadTimeS >= 0)) {
    refused.push(
      `the model is not a plant (K ${short(model.gain)}, τ ${short(tauS)} s, θ ${short(model.deadTimeS)} s)`,
    );
  }
  if (tauS > MAX_TAU_PER_RECORD * run.durationS) {
    refused.push(
      `τ ${short(tauS)} s is ${short(tauS / run.durationS)}× the ${Math.round(run.durationS)} s record: it cannot tell the plant from an integrating one`,
    );
  }
  const periodS = run.periodS;
  if (periodS !== undefined && periodS > 0 && model.deadTimeS > MAX_DEAD_TIME_PER_PERIOD * periodS) {
    refused.push(
      `θ ${short(model.deadTimeS)} s is longer than a relay of period ${Math.round(periodS)} s allows`,
    );
  }
  // σ and the quantum's own noise together: a probe whose σ is under its step reads a few levels
  // only, and its σ from 12 readings came out 0.019 where the record's noise was 0.03.
  const noise = Math.hypot(run.noiseSigma ?? 0, (run.noiseQuantum ?? 0) / Math.sqrt(12));
  if (noise > 0 && rmsResidual > MAX_RESIDUAL_PER_NOISE * noise) {
    refused.push(
      `the record does not fit the model (rms residual ${short(rmsResidual)}, sensor noise ${short(noise)}): something disturbed the run`,
    );
  } else if (noise > 0 && rmsResidual > FLAG_RESIDUAL_PER_NOISE * noise) {
    flagged.push(
      `rms residual ${short(rmsResidual)} is ${short(rmsResidual / noise)}× the sensor noise ${short(noise)}`,
    );
  }
  for (const [name, value, se] of [
    ['K', model.gain, standardError.gain],
    ['τ', tauS, standardError.timeConstantS],
  ] as const) {
    const relative = Math.abs(se / value);
    if (!(relative <= IDENTIFICATION_SE)) {
      flagged.push(
        `${name} ${short(value)} ± ${short(se)} (${Number.isFinite(relative) ? Math.round(100 * relative) : '?'} %, more than ${100 * IDENTIFICATION_SE} %)`,
      );
    }
  }
  const verdict = refused.length > 0 ? 'refused' : flagged.length > 0 ? 'flagged' : 'sound';
  return { verdict, reliable: verdict === 'sound', reasons: [...refused, ...flagged] };
}

/**
 * The verdict on a stored tuning: its model (undefined: gains entered by hand, nothing to
 * judge: sound) and its `details` (the autotune's summary; fields missing in an older one are
 * left out of the checks that need them).
 */
export function judgeStoredModel(
  model:
    | (Pick<FopdtIdentification, 'model' | 'standardError' | 'rmsResidual'>['model'] &
        Partial<Pick<FopdtIdentification, 'standardError' | 'rmsResidual'>>)
    | undefined,
  details: unknown,
): ModelVerdict {
  if (model === undefined) return { verdict: 'sound', reliable: true, reasons: [] };
  const d = (typeof details === 'object' && details !== null ? details : {}) as Record<string, unknown>;
  const num = (key: string) => (typeof d[key] === 'number' ? (d[key] as number) : undefined);
  const durationS = num('durationS');
  return judgeModel(
    {
      model,
      standardError: model.standardError ?? {
        gain: Number.NaN,
        timeConstantS: Number.NaN,
        deadTimeS: Number.NaN,
      },
      rmsResidual: model.rmsResidual ?? 0,
    },
    {
      durationS: durationS ?? Number.POSITIVE_INFINITY,
      ...optional('periodS', num('periodS')),
      ...optional('noiseSigma', num('noiseSigma')),
      ...optional('noiseQuantum', num('noiseQuantum')),
    },
  );
}

function optional<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

function short(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return Math.abs(value) >= 1e5 ? value.toExponential(1) : String(Math.round(value * 100) / 100);
}
