/**
 * The autotune started the way the daemon starts it on a continuous actuator: through
 * `reconcile` on a loop whose PI was regulating ("continuous mode" gave an absurd
 * model on a second-order plant and K, τ 25 % low on a kettle, where the bench's own tunes, at
 * rest at the setpoint, were within 6 %). Two starts per plant and seed: `settled`, after
 * 3 (τ + θ) at the setpoint from rest there; `cold`, 1 (τ + θ) after the loop started at ambient
 * (the PI still settling: the plant is not at rest when the run begins). The loop's PI is SIMC
 * on the true model (τc = θ, b = 1). Each run: the identified K, τ, θ against the true ones, the
 * verdict (reliability.ts), and a +2 °C step with its gains (autotune-step.ts, continuous).
 */
import { type LoopMemory, startLoopAutotune } from '../../../src/core/reconcile.js';
import type { AutotuneResult } from '../../../src/core/tuning/autotune.js';
import { simcGains } from '../../../src/core/tuning/simc.js';
import { continuousLoop, desired, T0 } from '../../core/fixtures.js';
import { PlantLoop } from '../../core/tuning/plant-loop.js';
import type { TestPlant } from '../../core/tuning/relay-driver.js';
import { SAMPLE_S } from './autotune-plant.js';
import { runStep } from './autotune-step.js';

export type RegulatingStart = 'settled' | 'cold';
export const REGULATING_SEEDS = [1, 2, 3, 4, 5];

export interface RegulatingRun {
  plant: string;
  start: RegulatingStart;
  seed: number;
  abortReason?: string;
  errorPct?: { gain: number; timeConstantS: number; deadTimeS: number };
  /** Relative standard errors, %. */
  relativeSePct?: { gain: number; timeConstantS: number };
  reliable?: boolean;
  reasons?: string[];
  overshootPct?: number;
  /** Step IAE with the autotune's gains / with SIMC on the true model (b = 1). */
  iaeToSimcTrue?: number;
}

type Plant = TestPlant & { trueTimeConstantS: number; trueDeadTimeS: number };

export function regulatingRun(plant: Plant, start: RegulatingStart, seed: number): RegulatingRun {
  const span = plant.trueTimeConstantS + plant.trueDeadTimeS;
  const pi = simcGains({
    gain: plant.gain,
    timeConstantS: plant.trueTimeConstantS,
    deadTimeS: plant.trueDeadTimeS,
  });
  const spec = continuousLoop({ controller: { type: 'pid', pid: { kp: pi.kp, tiS: pi.tiS, tdS: 0 } } });
  const level = (plant.setpoint - plant.ambient) / plant.gain;
  const cold = start === 'cold';
  const loop = new PlantLoop(
    spec,
    desired('heat', plant.setpoint),
    {
      ambient: plant.ambient,
      timeConstantS: plant.timeConstantS,
      deadTimeS: plant.deadTimeS,
      ...(plant.secondLagS === undefined ? {} : { secondLagS: plant.secondLagS }),
      gains: { mat: plant.gain },
      levels: { mat: cold ? 0 : level },
      initial: cold ? plant.ambient : plant.setpoint,
      seed,
      readingEveryS: SAMPLE_S,
    },
    T0,
  );
  loop.run(T0 + (cold ? 1 : 3) * span * 1000);
  const observed = {
    reading: { value: loop.valueAt(loop.nowMs), atMs: loop.nowMs },
    actuators: loop.actuators,
  };
  const started = startLoopAutotune(loop.spec, loop.desired, observed, loop.memory, {}, loop.nowMs);
  const run: RegulatingRun = { plant: plant.id, start, seed };
  if (!started.ok) return { ...run, abortReason: `refused: ${started.reason}` };
  loop.memory = started.memory;
  const active = (m: LoopMemory) => m.autotune?.phase === 'noise' || m.autotune?.phase === 'relay';
  loop.run(loop.nowMs + 20 * span * 1000, (c) => !active(c.result.memory));
  const autotune = loop.memory.autotune!;
  if (autotune.phase !== 'done' || autotune.result === undefined)
    return { ...run, abortReason: autotune.abortReason ?? autotune.phase };
  return { ...run, ...figures(plant, autotune.result, seed) };
}

function figures(plant: Plant, result: AutotuneResult, seed: number): Partial<RegulatingRun> {
  const { model, standardError } = result.identification;
  const pct = (value: number, truth: number) => (100 * (value - truth)) / truth;
  const span = plant.trueTimeConstantS + plant.trueDeadTimeS;
  const step = (gains: Parameters<typeof runStep>[0]['gains']) =>
    runStep({
      plant,
      gains,
      actuator: 'continuous',
      seed: seed + 100,
      stepC: 2,
      warmupS: Math.round(3 * span),
      horizonS: Math.round(5 * span),
      settlingBandC: 0.2,
      preS: SAMPLE_S * Math.round((0.5 * span) / SAMPLE_S),
    }).metrics;
  const truth = { gain: plant.gain, timeConstantS: plant.trueTimeConstantS, deadTimeS: plant.trueDeadTimeS };
  const reference = step({ ...simcGains(truth), setpointWeight: 1 });
  const at = step(result.gains);
  const verdict = (result as { reliability?: { reliable: boolean; reasons: string[] } }).reliability;
  return {
    errorPct: {
      gain: pct(model.gain, truth.gain),
      timeConstantS: pct(model.timeConstantS, truth.timeConstantS),
      deadTimeS: pct(model.deadTimeS, truth.deadTimeS),
    },
    relativeSePct: {
      gain: (100 * standardError.gain) / Math.abs(model.gain),
      timeConstantS: (100 * standardError.timeConstantS) / model.timeConstantS,
    },
    ...(verdict === undefined ? {} : { reliable: verdict.reliable, reasons: verdict.reasons }),
    overshootPct: (100 * at.overshootC) / 2,
    iaeToSimcTrue: at.iae / reference.iae,
  };
}

export function regulatingRuns(plants: readonly Plant[]): RegulatingRun[] {
  const runs: RegulatingRun[] = [];
  for (const plant of plants)
    for (const start of ['settled', 'cold'] as const)
      for (const seed of REGULATING_SEEDS) runs.push(regulatingRun(plant, start, seed));
  return runs;
}

export function formatRegulating(runs: readonly RegulatingRun[]): string {
  const fmt = (v: number | undefined, digits = 1) =>
    v === undefined || !Number.isFinite(v)
      ? '—'
      : Math.abs(v) >= 1e4
        ? v.toExponential(1)
        : v.toFixed(digits);
  const rows = runs.map((r) =>
    r.abortReason !== undefined
      ? [r.plant, r.start, String(r.seed), `aborted: ${r.abortReason}`]
      : [
          r.plant,
          r.start,
          String(r.seed),
          `${fmt(r.errorPct!.gain)} / ${fmt(r.errorPct!.timeConstantS)} / ${fmt(r.errorPct!.deadTimeS)}`,
          `${fmt(r.relativeSePct!.gain)} / ${fmt(r.relativeSePct!.timeConstantS)}`,
          r.reliable === undefined ? '—' : r.reliable ? 'sound' : `FLAGGED: ${r.reasons!.join('; ')}`,
          fmt(r.overshootPct),
          fmt(r.iaeToSimcTrue, 2),
        ],
  );
  const header = ['plant', 'start', 'seed', 'K / τ / θ error %', 'se K / τ %', 'verdict', 'ov %', 'IAE/simc'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [
    '### Continuous actuator started while regulating (through reconcile, as the daemon runs it)',
    `settled: 3 (τ + θ) at the setpoint first; cold: 1 (τ + θ) after a start at ambient. PI: SIMC on the true model (τc = θ). Seeds ${REGULATING_SEEDS.join(', ')}.`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
  ].join('\n');
}
