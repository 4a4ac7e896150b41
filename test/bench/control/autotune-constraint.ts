/**
 * The peers' Ziegler–Nichols gains held to the autotune's overshoot (the target
 * "better IAE than relay + Ziegler–Nichols on every plant"). ZN accepts 9–27 % overshoot on a
 * setpoint step, the autotune ≤ 2 %; so beside the plain comparison this one gives ZN the same
 * setpoint-weight rule as the autotune (simc.ts setpointWeightFor: the largest b whose nominal
 * step overshoots ≤ 1.5 %, on the autotune's identified model, its second lag included), and
 * measures, beside the setpoint step, a load step (an ambient step worth LOAD_STEP of full
 * output, through the plant's own dynamics): b does not enter the load path, so ZN's faster
 * gains may reject it better, and that is part of an honest comparison. On the continuous rows
 * it also tries every setpoint weight for the autotune's gains on the plant itself (bestWeight):
 * the most any b rule could give at the same overshoot.
 */
import { type SimcModel, setpointWeightFor } from '../../../src/core/tuning/simc.js';
import type { IsaGains } from './autotune-peers.js';
import { SAMPLE_S } from './autotune-plant.js';
import type { StepRun, StepSetup } from './autotune-step.js';

/** The load step, output fraction: the ambient falls by 0.1·K (10 % more output holds it). */
export const LOAD_STEP = -0.1;

export type ConstraintTuning = 'autotune' | 'esphome' | 'klipper' | 'esphomeWeighted' | 'klipperWeighted';
export const CONSTRAINT_TUNINGS: readonly ConstraintTuning[] = [
  'autotune',
  'esphome',
  'esphomeWeighted',
  'klipper',
  'klipperWeighted',
];

export interface ConstraintFigures {
  setpointWeight: number;
  /** +STEP_C setpoint step: IAE °C·s, overshoot % of the step. */
  stepIae: number;
  stepOvershootPct: number;
  /** Load step: IAE °C·s and the largest dip °C (the same for a tuning and its weighted one). */
  loadIae: number;
  loadPeakC: number;
}

export interface ConstraintRow {
  plant: string;
  actuator: string;
  /** The model the b rule saw: the autotune's identified one (the true one if it aborted). */
  modelSource: 'identified' | 'true';
  tunings: Partial<Record<ConstraintTuning, ConstraintFigures>>;
  /**
   * Continuous rows: the autotune's gains with the best b found by trying b = 0, 0.05 … 1.5 on
   * the plant itself (hindsight no rule on the model can have): the smallest step IAE whose
   * measured overshoot is ≤ the target. Whether any setpoint-weight rule could beat ZN.
   */
  bestWeight?: { setpointWeight: number; stepIae: number; stepOvershootPct: number };
  /** autotune / each: setpoint-step IAE and load IAE. */
  ratio: Partial<Record<Exclude<ConstraintTuning, 'autotune'>, { step: number; load: number }>>;
}

/**
 * One row: `run` is the row's runStep with everything but the gains and the load fixed (the
 * same plant, sensor seed, modulation and horizons as the main table).
 */
export function constraintRow(
  id: { plant: string; actuator: string },
  model: SimcModel,
  modelSource: ConstraintRow['modelSource'],
  gains: { autotune?: IsaGains; esphome: IsaGains; klipper: IsaGains },
  run: (gains: IsaGains, extra: Partial<StepSetup>) => StepRun,
  stepC: number,
  /** Try every b for the autotune's gains under this overshoot, % (continuous rows). */
  bestWeightUnderPct?: number,
): ConstraintRow {
  const withRule = (g: IsaGains): IsaGains => ({
    ...g,
    setpointWeight: setpointWeightFor(model, g, SAMPLE_S),
  });
  const all: Partial<Record<ConstraintTuning, IsaGains>> = {
    esphome: gains.esphome,
    esphomeWeighted: withRule(gains.esphome),
    klipper: gains.klipper,
    klipperWeighted: withRule(gains.klipper),
  };
  if (gains.autotune) all.autotune = gains.autotune;
  const tunings: ConstraintRow['tunings'] = {};
  const loads = new Map<string, StepRun>();
  for (const tuning of CONSTRAINT_TUNINGS) {
    const g = all[tuning];
    if (g === undefined) continue;
    const step = run(g, {});
    // The load path does not see b: a tuning and its weighted one share the run.
    const key = `${g.kp}/${g.tiS}/${g.tdS}`;
    const load = loads.get(key) ?? run(g, { stepC: 0, loadStep: LOAD_STEP });
    loads.set(key, load);
    tunings[tuning] = {
      setpointWeight: g.setpointWeight ?? 1,
      stepIae: step.metrics.iae,
      stepOvershootPct: (100 * step.metrics.overshootC) / stepC,
      loadIae: load.metrics.iae,
      loadPeakC: load.peakDeviationC,
    };
  }
  const ratio: ConstraintRow['ratio'] = {};
  const at = tunings.autotune;
  if (at) {
    for (const tuning of CONSTRAINT_TUNINGS) {
      const other = tunings[tuning];
      if (tuning === 'autotune' || other === undefined) continue;
      ratio[tuning] = { step: at.stepIae / other.stepIae, load: at.loadIae / other.loadIae };
    }
  }
  let bestWeight: ConstraintRow['bestWeight'];
  if (gains.autotune && bestWeightUnderPct !== undefined) {
    for (let step = 0; step <= 30; step++) {
      const setpointWeight = step * 0.05;
      const run1 = run({ ...gains.autotune, setpointWeight }, {});
      const overshootPct = (100 * run1.metrics.overshootC) / stepC;
      if (overshootPct > bestWeightUnderPct) continue;
      if (bestWeight === undefined || run1.metrics.iae < bestWeight.stepIae) {
        bestWeight = { setpointWeight, stepIae: run1.metrics.iae, stepOvershootPct: overshootPct };
      }
    }
  }
  return { ...id, modelSource, tunings, ...(bestWeight ? { bestWeight } : {}), ratio };
}
