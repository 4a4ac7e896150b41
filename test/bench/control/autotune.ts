/**
 * Autotune section of the control benchmark ("Benchmarks and pictures", "Targets"):
 * homeostat's relay autotune (src/core/tuning/autotune.ts) on the five tuning plants and the two
 * of the review (a kettle K 80, τ 300 s, θ 20 s; a second-order plant τ1 300 s, τ2 150 s,
 * θ0 10 s) with a relay and with a continuous actuator, against the true models; then a closed-loop setpoint
 * step with the autotuned SIMC gains (and setpoint weight b, simc.ts) beside SIMC on the true
 * parameters (b = 1, the target's reference, and with the same b rule) and the
 * relay-plus-Ziegler–Nichols tunings of ESPHome and Klipper (autotune-peers.ts). Writes one
 * step-response SVG per plant and summary.json into `outDir`. Then, for the target "better IAE
 * than relay + ZN", the same comparison under an equal constraint (autotune-constraint.ts): ZN's
 * gains with the autotune's setpoint-weight rule, a load step for every tuning, and on the
 * continuous rows every b for the autotune's gains (summary.json `equalConstraint`). Last, a
 * continuous actuator started while its PI regulates, through reconcile, as the daemon starts it
 * (autotune-regulating.ts; summary.json `regulating`).
 *
 * Choices (printed with the report):
 * - Sensor: σ 0.05 °C, quantum 0.0625 °C, a reading every 5 s, one seed, in the tunes and the
 *   steps alike. Tunes start at rest at the setpoint with the holding level (a loop regulating).
 * - Step: +2 °C from steady regulation at the plant's setpoint (`warmupS` = 3 (τ + θ) of it
 *   first). 2 °C is 40σ, 32 quanta and 13 relay bands: the response, not the noise, sets the
 *   IAE; it saturates the output only briefly (SIMC kp·2 °C > headroom on the greenhouse and
 *   the water mass), which every tuning meets alike.
 * - Same controller for every tuning (homeostat's pidStep, derivative on the measurement with
 *   its filter): only the gains differ. The peers' derivative (ESPHome on the error, Klipper on
 *   a smoothed temperature) is not re-enacted.
 * - Relay actuator: every tuning through the autotune's suggested modulation (modulation.ts):
 *   its time-proportioning window (windowS, no minimum times; the recommended one, which the
 *   targets take) and, for information, its duty band (result.modulation.band × each kp, min
 *   on/off 30 s). The peers' own relay handling (Klipper: hardware PWM with a cycle ≤ 3 s, for
 *   SSRs; ESPHome: slow_pwm with a period the user sets) is not re-enacted: this section
 *   compares tunings.
 * - Metrics on the true value at 1 s over 5 (τ + θ) after the step; overshoot in % of the step.
 *   On a relay the ripple is part of the IAE, and it is most of its "overshoot" (a relay's
 *   ripple at 30 switches/h is 0.1–47 °C peak to peak here, against a 2 °C step), so the
 *   overshoot target is taken on the continuous rows only; relay rows are measured by IAE
 *   against the peers on the same modulation and by their ripple (peak to peak over the last
 *   2 (τ + θ), autotune-step.ts) and switching rate.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AutotuneResult } from '../../../src/core/tuning/autotune.js';
import { BUDGET_WINDOW_S } from '../../../src/core/tuning/modulation.js';
import { type SimcModel, simcGains } from '../../../src/core/tuning/simc.js';
import { driveAutotune } from '../../core/tuning/autotune-driver.js';
import { REVIEW_PLANTS, TUNING_PLANTS } from '../../core/tuning/plants.js';
import {
  CONSTRAINT_TUNINGS,
  type ConstraintRow,
  type ConstraintTuning,
  constraintRow,
  LOAD_STEP,
} from './autotune-constraint.js';
import { esphomeTune, type IsaGains, klipperTune, type PeerTune } from './autotune-peers.js';
import { NOISE_SIGMA_C, QUANTUM_C, SAMPLE_S } from './autotune-plant.js';
import { formatRegulating, type RegulatingRun, regulatingRuns } from './autotune-regulating.js';
import { RELAY_MIN_MS, runStep, type StepSetup, type StepTrace } from './autotune-step.js';
import type { RunMetrics } from './metrics.js';
import { renderStepSvg, type StepPanel } from './step-svg.js';

export const DEFAULT_OUT_DIR = 'bench-results/control';
export const STEP_C = 2;
export const SEED = 1;
/** Time after the step, and regulation before it, in (τ + θ). */
export const HORIZON_TIME_CONSTANTS = 5;
export const WARMUP_TIME_CONSTANTS = 3;
/** Settling bands as the bench's plants (plants.ts): continuous 0.2 °C, relay 0.5 °C. */
export const SETTLING_BAND_C = { continuous: 0.2, relay: 0.5 } as const;

/** The autotune's targets. */
export const TARGETS = {
  identificationPct: 20,
  iaeToSimcTrue: 1.15,
  overshootPctOfStep: 2,
  durationPerTimeConstants: 6,
} as const;

export type Tuning = 'simcTrue' | 'simcTrueWeighted' | 'autotune' | 'esphome' | 'klipper';
export const TUNINGS: readonly Tuning[] = ['simcTrue', 'simcTrueWeighted', 'autotune', 'esphome', 'klipper'];
export const TUNING_LABEL: Record<Tuning, string> = {
  simcTrue: 'SIMC, true model',
  simcTrueWeighted: 'SIMC, true model, b rule',
  autotune: 'homeostat autotune (SIMC)',
  esphome: 'ESPHome relay + ZN',
  klipper: 'Klipper relay + ZN',
};

export interface ModelFigures {
  gain: number;
  timeConstantS: number;
  deadTimeS: number;
}

export interface StepFigures extends RunMetrics {
  overshootPct: number;
  /** Peak-to-peak of the true value over the end of the horizon, °C (autotune-step.ts). */
  ripplePpC: number;
  gains: IsaGains;
}

export interface AutotuneRow {
  plant: string;
  actuator: 'relay' | 'continuous';
  /**
   * How the relay was driven in the step: the autotune's suggested window (the recommended
   * one, which the targets use) or its duty band (for information); null on a continuous
   * actuator. A band row repeats its window row's identification (the same autotune run).
   */
  modulation: 'band' | 'window' | null;
  trueModel: ModelFigures;
  /** Absent when the autotune aborted. */
  identified?: ModelFigures & { standardError: ModelFigures };
  errorPct?: ModelFigures;
  abortReason?: string;
  durationS?: number;
  durationPerTimeConstants?: number;
  cycles?: number;
  /** The autotune's modulation suggestion. */
  suggestion?: AutotuneResult['modulation'];
  peers: Pick<
    PeerTune,
    'peer' | 'ultimateGain' | 'ultimatePeriodS' | 'amplitude' | 'durationMs' | 'switches'
  >[];
  /** Closed-loop step per tuning (autotune absent when it aborted). */
  steps: Partial<Record<Tuning, StepFigures>>;
  /** autotune IAE / SIMC-true IAE (b = 1, and with the b rule), and / each peer's. */
  iaeRatio?: { simcTrue: number; simcTrueWeighted: number; esphome: number; klipper: number };
}

export interface TargetLine {
  target: string;
  pass: boolean;
  detail: string;
}

/** The identification and duration over more seeds (the table and steps use SEED). */
export interface SeedSpread {
  plant: string;
  actuator: 'relay' | 'continuous';
  seeds: number[];
  aborted: number;
  /** Largest |error| of K, τ, θ over the seeds, %. */
  worstErrorPct: ModelFigures;
  worstDurationPerTimeConstants: number;
}

/** Seeds of the spread check. */
export const SPREAD_SEEDS = [1, 2, 3, 4, 5];
/** The plants of the section: the five benchmark plants, then the two review plants (plants.ts: REVIEW_PLANTS). */
export const BENCH_PLANTS = [...TUNING_PLANTS, ...REVIEW_PLANTS];

export interface AutotuneBench {
  rows: AutotuneRow[];
  spread: SeedSpread[];
  targets: TargetLine[];
  /** ZN held to the autotune's overshoot rule, and a load step (autotune-constraint.ts). */
  equalConstraint: ConstraintRow[];
  /** Continuous actuator started while regulating, through reconcile (autotune-regulating.ts). */
  regulating: RegulatingRun[];
  text: string;
}

export function runAutotuneBench(options: { outDir?: string; write?: boolean } = {}): AutotuneBench {
  const outDir = options.outDir ?? DEFAULT_OUT_DIR;
  const write = options.write ?? true;
  const rows: AutotuneRow[] = [];
  const constraint: ConstraintRow[] = [];
  const svgs: { file: string; svg: string }[] = [];
  for (const plant of BENCH_PLANTS) {
    const trueModel = {
      gain: plant.gain,
      timeConstantS: plant.trueTimeConstantS,
      deadTimeS: plant.trueDeadTimeS,
    };
    const spanS = trueModel.timeConstantS + trueModel.deadTimeS;
    const esphome = esphomeTune(plant, SEED);
    const klipper = klipperTune(plant, SEED);
    const panels: StepPanel[] = [];
    for (const actuator of ['continuous', 'relay'] as const) {
      const memory = driveAutotune(plant, { seed: SEED, kind: actuator });
      const result = memory.phase === 'done' ? memory.result : undefined;
      const base: AutotuneRow = {
        plant: plant.id,
        actuator,
        modulation: actuator === 'relay' ? 'window' : null,
        trueModel,
        peers: [esphome, klipper].map(
          ({ peer, ultimateGain, ultimatePeriodS, amplitude, durationMs, switches }) => ({
            peer,
            ultimateGain,
            ultimatePeriodS,
            amplitude,
            durationMs,
            switches,
          }),
        ),
        steps: {},
      };
      if (result === undefined) base.abortReason = memory.abortReason ?? memory.phase;
      else {
        const { model, standardError } = result.identification;
        base.identified = {
          gain: model.gain,
          timeConstantS: model.timeConstantS,
          deadTimeS: model.deadTimeS,
          standardError: { ...standardError },
        };
        base.errorPct = {
          gain: pct(model.gain, trueModel.gain),
          timeConstantS: pct(model.timeConstantS, trueModel.timeConstantS),
          deadTimeS: pct(model.deadTimeS, trueModel.deadTimeS),
        };
        base.durationS = result.durationMs / 1000;
        base.durationPerTimeConstants = base.durationS / spanS;
        base.cycles = result.cycles;
        base.suggestion = result.modulation;
      }
      // SIMC on the true model: as the target states it (PI, b = 1), and with the autotune's
      // rules (simc.ts: the setpoint weight, and the second lag where the plant has one).
      const { kp, tiS, tdS } = simcGains(trueModel);
      const gains: Partial<Record<Tuning, IsaGains>> = {
        simcTrue: { kp, tiS, tdS, setpointWeight: 1 },
        simcTrueWeighted: simcGains(
          { ...trueModel, secondLagS: plant.secondLagS ?? 0 },
          { samplePeriodS: SAMPLE_S },
        ),
        esphome: esphome.gains,
        klipper: klipper.gains,
      };
      if (result) gains.autotune = result.gains;
      // The relay's modulation: the autotune's suggestion (window, the recommended one, and its
      // band); if it aborted, the budget's window and the band at its floor (3σ, a quantum).
      const bandC = result?.modulation.band ?? Math.max(3 * NOISE_SIGMA_C, QUANTUM_C);
      const windowS = result?.modulation.windowS ?? BUDGET_WINDOW_S;
      const variants: AutotuneRow['modulation'][] = actuator === 'continuous' ? [null] : ['window', 'band'];
      for (const modulation of variants) {
        const row: AutotuneRow = { ...base, modulation, steps: {} };
        const traces: Partial<Record<Tuning, StepTrace>> = {};
        const runWith = (g: IsaGains, extra: Partial<StepSetup> = {}) =>
          runStep({
            plant,
            gains: g,
            actuator,
            bandC,
            ...(modulation === 'window' ? { windowS } : {}),
            seed: SEED + 100,
            stepC: STEP_C,
            warmupS: Math.round(WARMUP_TIME_CONSTANTS * spanS),
            horizonS: Math.round(HORIZON_TIME_CONSTANTS * spanS),
            settlingBandC: SETTLING_BAND_C[actuator],
            preS: SAMPLE_S * Math.round((0.5 * spanS) / SAMPLE_S),
            ...extra,
          });
        for (const tuning of TUNINGS) {
          const g = gains[tuning];
          if (g === undefined) continue;
          const run = runWith(g);
          row.steps[tuning] = {
            ...run.metrics,
            overshootPct: (100 * run.metrics.overshootC) / STEP_C,
            ripplePpC: run.ripplePpC,
            gains: g,
          };
          traces[tuning] = run.trace;
        }
        const at = row.steps.autotune?.iae;
        if (at !== undefined) {
          row.iaeRatio = {
            simcTrue: at / row.steps.simcTrue!.iae,
            simcTrueWeighted: at / row.steps.simcTrueWeighted!.iae,
            esphome: at / row.steps.esphome!.iae,
            klipper: at / row.steps.klipper!.iae,
          };
        }
        rows.push(row);
        if (modulation !== 'band') {
          const model: SimcModel = result
            ? { ...result.identification.model, secondLagS: secondLagOf(result.identification) }
            : { ...trueModel, secondLagS: plant.secondLagS ?? 0 };
          constraint.push(
            constraintRow(
              { plant: plant.id, actuator: actuatorLabel(row) },
              model,
              result ? 'identified' : 'true',
              {
                ...(result ? { autotune: result.gains } : {}),
                esphome: esphome.gains,
                klipper: klipper.gains,
              },
              runWith,
              STEP_C,
              actuator === 'continuous' ? TARGETS.overshootPctOfStep : undefined,
            ),
          );
        }
        panels.push({
          title:
            modulation === null
              ? 'Continuous actuator (output = level)'
              : modulation === 'band'
                ? `Relay, duty band ±${round3(bandC)} °C × kp (autotune's alternative), min on/off ${RELAY_MIN_MS / 1000} s`
                : `Relay, time-proportioning window ${Math.round(windowS)} s (autotune's recommendation), output as the mean per window`,
          traces,
          ...(modulation === 'window' ? { outputMeanS: windowS } : {}),
        });
      }
    }
    // The picture's window: where the references (SIMC true, autotune) settle on the continuous
    // actuator, ×4, at least 20 θ, at most the horizon; the metrics use the whole horizon.
    const horizonS = Math.round(HORIZON_TIME_CONSTANTS * spanS);
    const continuous = rows.find((r) => r.plant === plant.id && r.actuator === 'continuous')!;
    const settled = (['simcTrue', 'simcTrueWeighted', 'autotune'] as const).map(
      (t) => continuous.steps[t]?.settlingS ?? horizonS,
    );
    const toS = Math.min(horizonS, Math.max(4 * Math.max(...settled), 20 * trueModel.deadTimeS));
    svgs.push({
      file: `autotune-${slug(plant.id)}.svg`,
      svg: renderStepSvg({
        title: `${plant.id}: +${STEP_C} °C setpoint step (K ${plant.gain}, τ ${Math.round(plant.trueTimeConstantS)} s, θ ${Math.round(plant.trueDeadTimeS)} s)`,
        unit: '°C',
        panels,
        labels: TUNING_LABEL,
        order: TUNINGS,
        toS,
      }),
    });
  }
  const spread = seedSpread();
  const targets = checkTargets(rows);
  const regulating = regulatingRuns([TUNING_PLANTS[3]!, ...REVIEW_PLANTS]);
  const files = svgs.map((s) => s.file);
  if (write) {
    mkdirSync(outDir, { recursive: true });
    for (const { file, svg } of svgs) writeFileSync(join(outDir, file), svg);
    writeFileSync(
      join(outDir, 'summary.json'),
      `${JSON.stringify({ setup: setupFigures(), rows, spread, targets, equalConstraint: constraint, regulating }, null, 2)}\n`,
    );
  }
  return {
    rows,
    spread,
    targets,
    equalConstraint: constraint,
    regulating,
    text: [
      formatReport(rows, spread, targets, write ? outDir : undefined, files),
      '',
      formatConstraint(constraint),
      '',
      formatRegulating(regulating),
    ].join('\n'),
  };
}

function seedSpread(): SeedSpread[] {
  const out: SeedSpread[] = [];
  for (const plant of BENCH_PLANTS) {
    const truth = {
      gain: plant.gain,
      timeConstantS: plant.trueTimeConstantS,
      deadTimeS: plant.trueDeadTimeS,
    };
    for (const actuator of ['continuous', 'relay'] as const) {
      const worst = { gain: 0, timeConstantS: 0, deadTimeS: 0 };
      let worstDuration = 0;
      let aborted = 0;
      for (const seed of SPREAD_SEEDS) {
        const memory = driveAutotune(plant, { seed, kind: actuator });
        const result = memory.result;
        if (memory.phase !== 'done' || result === undefined) {
          aborted++;
          continue;
        }
        const { model } = result.identification;
        worst.gain = Math.max(worst.gain, Math.abs(pct(model.gain, truth.gain)));
        worst.timeConstantS = Math.max(
          worst.timeConstantS,
          Math.abs(pct(model.timeConstantS, truth.timeConstantS)),
        );
        worst.deadTimeS = Math.max(worst.deadTimeS, Math.abs(pct(model.deadTimeS, truth.deadTimeS)));
        worstDuration = Math.max(
          worstDuration,
          result.durationMs / 1000 / (truth.timeConstantS + truth.deadTimeS),
        );
      }
      out.push({
        plant: plant.id,
        actuator,
        seeds: SPREAD_SEEDS,
        aborted,
        worstErrorPct: worst,
        worstDurationPerTimeConstants: worstDuration,
      });
    }
  }
  return out;
}

function setupFigures() {
  return {
    noiseSigmaC: NOISE_SIGMA_C,
    quantumC: QUANTUM_C,
    sampleS: SAMPLE_S,
    seed: SEED,
    stepC: STEP_C,
    warmupTimeConstants: WARMUP_TIME_CONSTANTS,
    horizonTimeConstants: HORIZON_TIME_CONSTANTS,
    settlingBandC: SETTLING_BAND_C,
    relayMinOnOffMs: RELAY_MIN_MS,
    targets: TARGETS,
  };
}

/** The fitted second lag (the result holds the half rule's identification; its type, the FOPDT one). */
function secondLagOf(identification: AutotuneResult['identification']): number {
  const lagS = (identification as { secondLagS?: unknown }).secondLagS;
  return typeof lagS === 'number' ? lagS : 0;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function pct(value: number, truth: number): number {
  return (100 * (value - truth)) / truth;
}

function slug(id: string): string {
  return id
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

// --- targets -----------------------------------------------------------------------------------

export function checkTargets(allRows: readonly AutotuneRow[]): TargetLine[] {
  let rows = allRows;
  const name = (r: AutotuneRow) => `${r.plant}/${r.actuator}`;
  // A band row is for information: the targets take the recommended modulation (the window).
  rows = rows.filter((r) => r.modulation !== 'band');
  const aborted = rows.filter((r) => r.abortReason !== undefined).map(name);
  const abortedNote = aborted.length > 0 ? `; aborted: ${aborted.join(', ')}` : '';
  const done = rows.filter((r) => r.abortReason === undefined);
  const lines: TargetLine[] = [];

  const idWorst = done.map((r) => {
    const e = r.errorPct!;
    const worst = Math.max(Math.abs(e.gain), Math.abs(e.timeConstantS), Math.abs(e.deadTimeS));
    return { r, worst };
  });
  const idFail = idWorst.filter((x) => x.worst > TARGETS.identificationPct);
  lines.push({
    target: `identified K, τ, θ within ${TARGETS.identificationPct} % on every plant`,
    pass: idFail.length === 0 && aborted.length === 0,
    detail: `worst ${fmt(Math.max(...idWorst.map((x) => x.worst)), 1)} %${idFail.length ? `; over: ${idFail.map((x) => `${name(x.r)} ${fmt(x.worst, 1)} %`).join(', ')}` : ''}${abortedNote}`,
  });

  const ratio = done.map((r) => ({ r, v: r.iaeRatio!.simcTrue }));
  const ratioFail = ratio.filter((x) => x.v > TARGETS.iaeToSimcTrue);
  lines.push({
    target: `step IAE ≤ ${TARGETS.iaeToSimcTrue} × SIMC on the true model`,
    pass: ratioFail.length === 0 && aborted.length === 0,
    detail: `worst ${fmt(Math.max(...ratio.map((x) => x.v)), 2)}${ratioFail.length ? `; over: ${ratioFail.map((x) => `${name(x.r)} ${fmt(x.v, 2)}`).join(', ')}` : ''}${abortedNote}`,
  });

  // Continuous rows only: on a relay the "overshoot" is mostly the ripple (see the header).
  const over = done
    .filter((r) => r.actuator === 'continuous')
    .map((r) => ({ r, v: r.steps.autotune!.overshootPct }));
  const overFail = over.filter((x) => x.v > TARGETS.overshootPctOfStep);
  // SIMC on the true model beside it (b = 1): whether the rule without the weight meets it.
  const reference = rows
    .filter((r) => r.actuator === 'continuous')
    .map((r) => `${name(r)} ${fmt(r.steps.simcTrue?.overshootPct, 1)} %`)
    .join(', ');
  lines.push({
    target: `overshoot ≤ ${TARGETS.overshootPctOfStep} % of the step (continuous actuator)`,
    pass: overFail.length === 0 && aborted.length === 0,
    detail: `worst ${fmt(Math.max(...over.map((x) => x.v)), 1)} %${overFail.length ? `; over: ${overFail.map((x) => `${name(x.r)} ${fmt(x.v, 1)} %`).join(', ')}` : ''}${abortedNote}; SIMC on the true model, b = 1: ${reference}`,
  });

  const peers = done.map((r) => ({ r, v: Math.max(r.iaeRatio!.esphome, r.iaeRatio!.klipper) }));
  const peerFail = peers.filter((x) => !(x.v < 1));
  lines.push({
    target: 'step IAE better than relay + ZN (ESPHome and Klipper) on every plant, relay on the same window',
    pass: peerFail.length === 0 && aborted.length === 0,
    detail: `worst autotune / best peer ${fmt(Math.max(...peers.map((x) => x.v)), 2)}${peerFail.length ? `; not better: ${peerFail.map((x) => `${name(x.r)} ${fmt(x.v, 2)}`).join(', ')}` : ''}${abortedNote}`,
  });

  const dur = done.map((r) => ({ r, v: r.durationPerTimeConstants! }));
  const durFail = dur.filter((x) => x.v > TARGETS.durationPerTimeConstants);
  lines.push({
    target: `autotune duration ≤ ${TARGETS.durationPerTimeConstants} (τ + θ)`,
    pass: durFail.length === 0 && aborted.length === 0,
    detail: `worst ${fmt(Math.max(...dur.map((x) => x.v)), 2)}${durFail.length ? `; over: ${durFail.map((x) => `${name(x.r)} ${fmt(x.v, 2)}`).join(', ')}` : ''}${abortedNote}`,
  });
  return lines;
}

// --- text --------------------------------------------------------------------------------------

function fmt(value: number | null | undefined, digits: number): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);
}

function signed(value: number, digits: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
}

function table(header: string[], body: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
}

export function formatReport(
  rows: readonly AutotuneRow[],
  spread: readonly SeedSpread[],
  targets: readonly TargetLine[],
  outDir: string | undefined,
  files: readonly string[],
): string {
  const out: string[] = [
    '## Autotune (relay experiment → FOPDT → SIMC PI)',
    '',
    `Sensor σ ${NOISE_SIGMA_C} °C, quantum ${QUANTUM_C} °C, a reading every ${SAMPLE_S} s, seed ${SEED}; tunes start at rest at the setpoint.`,
    'True model of the second-order plants: Skogestad half rule (τ = τ1 + τ2/2, θ = θ0 + τ2/2).',
    '',
    '### Identification',
    ...table(
      [
        'plant',
        'actuator',
        'K',
        'τ s',
        'θ s',
        'K id ± se',
        'τ id ± se',
        'θ id ± se',
        'K %',
        'τ %',
        'θ %',
        'dur/(τ+θ)',
        'cycles',
      ],
      rows
        .filter((r) => r.modulation !== 'band')
        .map((r) => {
          const t = r.trueModel;
          if (r.identified === undefined) {
            return [
              r.plant,
              r.actuator,
              fmt(t.gain, 1),
              fmt(t.timeConstantS, 0),
              fmt(t.deadTimeS, 0),
              `aborted: ${r.abortReason}`,
              '',
              '',
              '',
              '',
              '',
              '',
              '',
            ];
          }
          const i = r.identified;
          const e = r.errorPct!;
          return [
            r.plant,
            r.actuator,
            fmt(t.gain, 1),
            fmt(t.timeConstantS, 0),
            fmt(t.deadTimeS, 0),
            `${fmt(i.gain, 2)} ± ${fmt(i.standardError.gain, 2)}`,
            `${fmt(i.timeConstantS, 0)} ± ${fmt(i.standardError.timeConstantS, 0)}`,
            `${fmt(i.deadTimeS, 0)} ± ${fmt(i.standardError.deadTimeS, 0)}`,
            signed(e.gain, 1),
            signed(e.timeConstantS, 1),
            signed(e.deadTimeS, 1),
            fmt(r.durationPerTimeConstants, 2),
            String(r.cycles),
          ];
        }),
    ),
    '',
    `Over seeds ${SPREAD_SEEDS.join(', ')} (the same runs with other noise): worst |error| and duration`,
    ...table(
      ['plant', 'actuator', 'K %', 'τ %', 'θ %', 'dur/(τ+θ)', 'aborted'],
      spread.map((s) => [
        s.plant,
        s.actuator,
        fmt(s.worstErrorPct.gain, 1),
        fmt(s.worstErrorPct.timeConstantS, 1),
        fmt(s.worstErrorPct.deadTimeS, 1),
        fmt(s.worstDurationPerTimeConstants, 2),
        String(s.aborted),
      ]),
    ),
    '',
    "Peers' relay tunes (same plant and sensor, from rest at the setpoint; the same for both actuators):",
    ...table(
      ['plant', 'peer', 'a °C', 'Ku /°C', 'Pu s', 'kp /°C', 'Ti s', 'Td s', 'dur/(τ+θ)', 'switches'],
      rows
        .filter((r) => r.actuator === 'continuous')
        .flatMap((r) =>
          r.peers.map((p) => {
            const g = r.steps[p.peer === 'ESPHome' ? 'esphome' : 'klipper']!.gains;
            const span = r.trueModel.timeConstantS + r.trueModel.deadTimeS;
            return [
              r.plant,
              p.peer,
              fmt(p.amplitude, 3),
              fmt(p.ultimateGain, 3),
              fmt(p.ultimatePeriodS, 0),
              fmt(g.kp, 3),
              fmt(g.tiS, 0),
              fmt(g.tdS, 0),
              fmt(p.durationMs / 1000 / span, 2),
              String(p.switches),
            ];
          }),
        ),
    ),
    '',
    `### Closed-loop +${STEP_C} °C setpoint step (true value, ${HORIZON_TIME_CONSTANTS} (τ + θ) after the step)`,
    ...table(
      [
        'plant',
        'actuator',
        ...TUNINGS.flatMap((t) => [`${short(t)} b`, `${short(t)} IAE`, 'ov %', 'pp °C']),
        'at settle s',
        'IAE at/simc',
        'at/simc b',
        'at/ESPH',
        'at/Klip',
        'at sw/h',
      ],
      rows.map((r) => [
        r.plant,
        actuatorLabel(r),
        ...TUNINGS.flatMap((t) => {
          const s = r.steps[t];
          if (s === undefined) return ['—', '—', '—', '—'];
          return [
            fmt(s.gains.setpointWeight ?? 1, 2),
            fmt(s.iae, 0),
            fmt(s.overshootPct, 1),
            fmt(s.ripplePpC, 2),
          ];
        }),
        ((s) => (s === undefined ? '—' : s.settlingS === null ? 'never' : fmt(s.settlingS, 0)))(
          r.steps.autotune,
        ),
        fmt(r.iaeRatio?.simcTrue, 2),
        fmt(r.iaeRatio?.simcTrueWeighted, 2),
        fmt(r.iaeRatio?.esphome, 2),
        fmt(r.iaeRatio?.klipper, 2),
        fmt(r.steps.autotune?.switchesPerHour, 1),
      ]),
    ),
    '',
    "IAE in °C·s; overshoot in % of the step; pp: peak-to-peak of the true value over the last 2 (τ + θ) (a relay's ripple);",
    'settle: stays within 0.2 °C (continuous) / 0.5 °C (relay) from then on; b: setpoint weight (P = kp·(b·r − y)).',
    "simc: SIMC PI on the true model (τc = θ), b = 1: the target's reference. simc b: the same with the autotune's rules (simc.ts):",
    'b from the model (largest b whose nominal step, with the reading period as a hold, overshoots ≤ 1.5 %), and on a second-order plant its second lag as derivative.',
    `at: the autotune's gains and b; ESPH, Klip: ZN PID (kp 0.6 Ku, Ti Pu/2, Td Pu/8, b = 1) from each peer's relay run.`,
    'Same controller for all (homeostat pidStep, derivative on the measurement, filtered): only the gains differ.',
    "Relay: every tuning through the autotune's suggested modulation: the time-proportioning window (recommended; no minimum times, the window",
    `bounds the switching to 2 a window), and the duty band (kp × band, min on/off ${RELAY_MIN_MS / 1000} s). The peers' own relay handling (Klipper: hardware PWM,`,
    'cycle ≤ 3 s, for SSRs; ESPHome: slow_pwm with a period the user sets, no default) is not re-enacted. On a relay the ripple counts in IAE and overshoot.',
    'sw/h: relay switches per hour of the autotuned loop after the step.',
    `Before the step: ${WARMUP_TIME_CONSTANTS} (τ + θ) of regulation from rest, integrator at the holding level.`,
    '',
    '### Targets (relay: the recommended window; the band rows are for information)',
    'The overshoot target is taken on the continuous rows: on a relay the ripple alone (pp) is up to many times the step, and is set by the',
    'switching rate and the plant (modulation.ts), not by the tuning; relay rows count by IAE against the peers on the same window, and by pp.',
    ...targets.map((t) => `${t.pass ? 'PASS' : 'FAIL'}  ${t.target}: ${t.detail}`),
  ];
  if (outDir !== undefined)
    out.push(
      '',
      `Pictures: ${files.map((f) => join(outDir, f)).join(', ')}; figures: ${join(outDir, 'summary.json')}`,
    );
  return out.join('\n');
}

function actuatorLabel(r: AutotuneRow): string {
  if (r.modulation === 'band') return 'relay band';
  if (r.modulation === 'window') return `relay ${fmt(r.suggestion?.windowS ?? BUDGET_WINDOW_S, 0)} s window`;
  return r.actuator;
}

function short(t: Tuning): string {
  return { simcTrue: 'simc', simcTrueWeighted: 'simc b', autotune: 'at', esphome: 'ESPH', klipper: 'Klip' }[
    t
  ];
}

const CONSTRAINT_SHORT: Record<ConstraintTuning, string> = {
  autotune: 'at',
  esphome: 'ESPH',
  esphomeWeighted: 'ESPHw',
  klipper: 'Klip',
  klipperWeighted: 'Klipw',
};

/** The equal-constraint table: ZN with and without the autotune's b rule, step and load. */
export function formatConstraint(rows: readonly ConstraintRow[]): string {
  const others = CONSTRAINT_TUNINGS.filter((t) => t !== 'autotune');
  return [
    `### Equal constraint: ZN with the autotune's setpoint weight (b: nominal overshoot ≤ 1.5 % on the identified model), and a load step`,
    ...table(
      [
        'plant',
        'actuator',
        ...CONSTRAINT_TUNINGS.flatMap((t) => {
          const n = CONSTRAINT_SHORT[t];
          return [`${n} b`, `${n} IAE`, 'ov %', 'load IAE', 'dip °C'];
        }),
        ...others.flatMap((t) => [`at/${CONSTRAINT_SHORT[t]}`, 'load']),
      ],
      rows.map((r) => [
        r.plant,
        r.actuator,
        ...CONSTRAINT_TUNINGS.flatMap((t) => {
          const f = r.tunings[t];
          if (f === undefined) return ['—', '—', '—', '—', '—'];
          return [
            fmt(f.setpointWeight, 2),
            fmt(f.stepIae, 0),
            fmt(f.stepOvershootPct, 1),
            fmt(f.loadIae, 0),
            fmt(f.loadPeakC, 2),
          ];
        }),
        ...others.flatMap((t) => [fmt(r.ratio[t]?.step, 2), fmt(r.ratio[t]?.load, 2)]),
      ]),
    ),
    '',
    `+${STEP_C} °C setpoint step as above (IAE °C·s, overshoot % of the step); load: an ambient step worth ${-LOAD_STEP * 100} % of full output`,
    `(ΔT ambient = ${LOAD_STEP}·K, through the plant's dynamics) at a fixed setpoint, IAE over the same horizon and its largest dip.`,
    "ESPHw, Klipw: the peer's ZN gains with b from simc.ts's rule on the autotune's identified model (ZN held to the autotune's overshoot;",
    'where even b = 0 overshoots more than 1.5 % nominally, the rule keeps the largest b within 0.25 % of b = 0, so ZN still overshoots:',
    "its overshoot is in the loop itself, not in the setpoint path). b does not enter the load path: their load columns are plain ZN's.",
    "at/X: the autotune's IAE over X's (< 1: the autotune better).",
    '',
    `Any setpoint weight for the autotune's gains, tried on the plant (b = 0 … 1.5, continuous rows; hindsight no rule on the model has):`,
    ...table(
      [
        'plant',
        'actuator',
        'rule b',
        'IAE',
        'ov %',
        `best b (ov ≤ ${TARGETS.overshootPctOfStep} %)`,
        'IAE',
        'ov %',
        'best ZN IAE',
        'best b / ZN',
      ],
      rows
        .filter((r) => r.bestWeight !== undefined)
        .map((r) => {
          const at = r.tunings.autotune!;
          const best = r.bestWeight!;
          const zn = Math.min(r.tunings.esphome?.stepIae ?? Infinity, r.tunings.klipper?.stepIae ?? Infinity);
          return [
            r.plant,
            r.actuator,
            fmt(at.setpointWeight, 2),
            fmt(at.stepIae, 0),
            fmt(at.stepOvershootPct, 1),
            fmt(best.setpointWeight, 2),
            fmt(best.stepIae, 0),
            fmt(best.stepOvershootPct, 1),
            fmt(zn, 0),
            fmt(best.stepIae / zn, 2),
          ];
        }),
    ),
  ].join('\n');
}
