/**
 * Scratch runner for target 5 (`node --import tsx test/bench/relay-explore.ts [section]`):
 * homeostat's PID with the prototype relay modulators of control/relay-modulators.ts on the
 * relay plants, beside HA hysteresis and today's time-proportioning, through the bench's own
 * simulate()/scenarios/metrics.
 */
import { type PidMemory, type PidParams, pidInitialMemory, pidStep } from '../../src/core/pid.js';
import { TIME_OPTIMAL_BOUND } from './control/bound.js';
import type { BenchController, ControllerContext, ControllerSpec } from './control/controller.js';
import { homeostatRelayWindow } from './control/homeostat.js';
import type { RunMetrics } from './control/metrics.js';
import { PEERS } from './control/peers.js';
import { type PlantSpec, RELAY_PLANTS, simcTuning } from './control/plants.js';

const simcKp = (p: PlantSpec) => simcTuning(p).kp;

import {
  dutyHysteresis,
  latchedTp,
  type MinTimes,
  type Modulator,
  type RelayMemory,
  sigmaDelta,
  trimmedHysteresis,
} from './control/relay-modulators.js';
import { SCENARIOS, type ScenarioSpec } from './control/scenarios.js';
import { simulate } from './control/simulate.js';

const TIMES: MinTimes = { minOnMs: 30_000, minOffMs: 30_000 };
const HA = PEERS.find((p) => p.id === 'HA hysteresis')!;

class ModulatedPid<M extends RelayMemory> implements BenchController {
  private readonly params: PidParams;
  private pid: PidMemory = pidInitialMemory();
  private duty = 0;
  private measured: number | undefined;
  private measuredAtMs: number | undefined;
  private relay: M;
  private readonly setpoint: number;

  constructor(
    { plant, tuning, setpoint }: ControllerContext,
    tdPerDeadTime: number,
    private readonly modulator: Modulator<M>,
  ) {
    this.params = {
      kp: tuning.kp,
      tiS: tuning.tiS,
      tdS: tdPerDeadTime * plant.deadTimeS,
      outputMin: 0,
      outputMax: 1,
    };
    this.relay = modulator.initial();
    this.setpoint = setpoint;
  }

  onReading(measured: number, setpoint: number, atMs: number): void {
    const r = pidStep(this.params, this.pid, { setpoint, measured, atMs });
    this.pid = r.memory;
    this.duty = r.output;
    this.measured = measured;
    this.measuredAtMs = atMs;
  }

  levelAt(atMs: number): number {
    const r = this.modulator.step(
      {
        duty: this.duty,
        setpoint: this.setpoint,
        nowMs: atMs,
        ...(this.measured === undefined ? {} : { measured: this.measured, measuredAtMs: this.measuredAtMs }),
      },
      this.relay,
    );
    this.relay = r.memory;
    return r.on ? 1 : 0;
  }
}

type Factory = (plant: PlantSpec) => Modulator<RelayMemory>;

function spec(make: Factory, tdPerDeadTime = 0): ControllerSpec {
  return {
    id: 'x',
    actuators: ['relay'],
    note: '',
    create: (context) =>
      new ModulatedPid(context, tdPerDeadTime, make(context.plant) as Modulator<RelayMemory>),
  };
}

/**
 * Open-loop schedule: on until t1, then off `offS` / on `onS` alternately (schedule2 whose first
 * off segment is an ordinary one).
 */
function schedule(t1S: number, offS: number, onS: number): ControllerSpec {
  return { ...schedule2(t1S, offS, onS, offS), id: 'sched' };
}

const fmt = (m: RunMetrics) =>
  `${m.iae.toFixed(0).padStart(6)} ${(m.switchesPerHour ?? Number.NaN).toFixed(1).padStart(5)}`;

interface Row {
  label: string;
  make: Factory | 'HA' | 'TP600';
  td?: number;
}

function run(row: Row, plant: PlantSpec, scenario: ScenarioSpec): RunMetrics {
  if (row.make === 'HA') return simulate(plant, scenario, HA);
  if (row.make === 'TP600') return simulate(plant, scenario, homeostatRelayWindow(600));
  return simulate(plant, scenario, spec(row.make, row.td ?? 0));
}

const haCache = new Map<string, RunMetrics>();
function ha(plant: PlantSpec, scenario: ScenarioSpec): RunMetrics {
  const key = `${plant.id}/${scenario.id}`;
  let m = haCache.get(key);
  if (m === undefined) {
    m = simulate(plant, scenario, HA);
    haCache.set(key, m);
  }
  return m;
}

/** Runs a row on all plants × scenarios; returns the number of wins (of 8) and a line. */
function evaluate(row: Row, scenarios = SCENARIOS): { wins: number; line: string; margin: number } {
  let wins = 0;
  let margin = Number.POSITIVE_INFINITY;
  const cells: string[] = [];
  for (const plant of RELAY_PLANTS) {
    for (const scenario of scenarios) {
      const m = run(row, plant, scenario);
      const h = ha(plant, scenario);
      const win = m.iae < h.iae && (m.switchesPerHour ?? 0) <= (h.switchesPerHour ?? 0);
      if (win) wins++;
      margin = Math.min(
        margin,
        Math.min(1 - m.iae / h.iae, (h.switchesPerHour ?? 0) - (m.switchesPerHour ?? 0)),
      );
      cells.push(`${fmt(m)}${win ? '*' : ' '}`);
    }
  }
  return { wins, line: `${row.label.padEnd(44)} ${wins} ${cells.join(' | ')}`, margin };
}

function header(): string {
  const cols = RELAY_PLANTS.flatMap((p) => SCENARIOS.map((s) => `${p.id.slice(0, 4)} ${s.id}`.padEnd(13)));
  return `${'scheme'.padEnd(44)} W ${cols.join(' | ')}`;
}

const section = process.argv[2] ?? 'base';
const out: string[] = [header()];
const print = (r: { line: string }) => out.push(r.line);

if (section === 'base') {
  print(evaluate({ label: 'HA hysteresis 0.3', make: 'HA' }));
  print(evaluate({ label: 'TP 600 s (src)', make: 'TP600' }));
  for (const w of [300, 450, 600, 900])
    print(evaluate({ label: `TP latched ${w}`, make: () => latchedTp(w * 1000, TIMES) }));
  for (const t of [300, 450, 600, 900]) {
    for (const p of [0, 0.5, 1])
      print(evaluate({ label: `ΣΔ T${t} p${p}`, make: () => sigmaDelta(t * 1000, TIMES, p) }));
  }
  for (const h of [0.2, 0.3, 0.5, 0.8]) {
    print(evaluate({ label: `hyst ±${h} trim`, make: () => trimmedHysteresis(h, TIMES, { trimS: 1800 }) }));
    print(
      evaluate({
        label: `hyst ±${h} pred θ trim`,
        make: (p) => trimmedHysteresis(h, TIMES, { trimS: 1800, predictS: p.deadTimeS, extrapolate: true }),
      }),
    );
  }
  for (const h of [0.02, 0.05, 0.1, 0.2])
    print(evaluate({ label: `duty-hyst ±${h}`, make: () => dutyHysteresis(h, TIMES) }));
}

if (section === 'bound') {
  // Open-loop relay schedules: best IAE at ≤ HA's switches, per plant and scenario A.
  for (const plant of RELAY_PLANTS) {
    const scenario = SCENARIOS[0]!;
    const h = ha(plant, scenario);
    let best: { iae: number; sw: number; t1: number; off: number; on: number } | undefined;
    const tau = plant.timeConstantS;
    for (let t1 = Math.round(0.5 * tau); t1 <= 1.2 * tau; t1 += Math.round(tau / 60)) {
      for (let off = Math.round(tau / 20); off <= tau / 2; off += Math.round(tau / 120)) {
        for (const ratio of [0.9, 0.95, 1, 1.05, 1.1, 1.15, 1.2]) {
          const on = Math.round(off * ratio);
          const m = simulate(plant, scenario, schedule(t1, off, on));
          if ((m.switchesPerHour ?? 0) > (h.switchesPerHour ?? 0)) continue;
          if (best === undefined || m.iae < best.iae)
            best = { iae: m.iae, sw: m.switchesPerHour ?? 0, t1, off, on };
        }
      }
    }
    out.push(`${plant.id} A: HA ${fmt(h)}; best open-loop schedule ${JSON.stringify(best)}`);
  }
}

if (section === 'dutyh') {
  for (const td of [0, 1 / 3]) {
    for (const bandC of [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6]) {
      print(
        evaluate({
          label: `duty-hyst ±kp·${bandC}°C td${td.toFixed(2)}`,
          td,
          make: (p) => dutyHysteresis(simcKp(p) * bandC, TIMES),
        }),
      );
    }
  }
}

/** Open-loop schedule with a distinct first off segment: on t1, off f1, then on/off periodic. */
function schedule2(t1S: number, f1S: number, onS: number, offS: number): ControllerSpec {
  return {
    id: 'sched2',
    actuators: ['relay'],
    note: '',
    create: ({ startMs }) => ({
      onReading() {},
      levelAt(atMs: number) {
        const t = (atMs - startMs) / 1000;
        if (t < t1S) return 1;
        if (t < t1S + f1S) return 0;
        const phase = (t - t1S - f1S) % (offS + onS);
        return phase < onS ? 1 : 0;
      },
    }),
  };
}

if (section === 'bound2') {
  for (const plant of RELAY_PLANTS) {
    for (const scenario of SCENARIOS.filter((s) => s.id !== 'B')) {
      const h = ha(plant, scenario);
      const cap = h.switchesPerHour ?? 0;
      const cost = (x: number[]) => {
        const [t1, f1, on, off] = x as [number, number, number, number];
        if (Math.min(t1, f1, on, off) < 30) return Number.POSITIVE_INFINITY;
        const m = simulate(plant, scenario, schedule2(t1, f1, on, off));
        return (m.switchesPerHour ?? 0) > cap ? Number.POSITIVE_INFINITY : m.iae;
      };
      const tau = plant.timeConstantS;
      let best = Number.POSITIVE_INFINITY;
      let x = [0, 0, 0, 0];
      // coarse start from the periodic grid
      for (let t1 = Math.round(0.6 * tau); t1 <= 1.0 * tau; t1 += Math.round(tau / 40)) {
        for (let off = Math.round(tau / 12); off <= tau / 2.5; off += Math.round(tau / 60)) {
          for (const ratio of [0.9, 1, 1.1, 1.2]) {
            const c = cost([t1, off, off * ratio, off]);
            if (c < best) {
              best = c;
              x = [t1, off, off * ratio, off];
            }
          }
        }
      }
      for (const stepS of [40, 20, 10, 5, 2, 1]) {
        let improved = true;
        while (improved) {
          improved = false;
          for (let i = 0; i < 4; i++) {
            for (const d of [-stepS, stepS]) {
              const y = [...x];
              y[i]! += d;
              const c = cost(y);
              if (c < best) {
                best = c;
                x = y;
                improved = true;
              }
            }
          }
        }
      }
      out.push(
        `${plant.id} ${scenario.id}: HA ${fmt(h)}; best open-loop ≤ HA sw/h: IAE ${best.toFixed(0)} (${((1 - best / h.iae) * 100).toFixed(2)} % below HA) t1/f1/on/off ${x.join('/')}`,
      );
    }
  }
}

/** Efficiency per cell: (IAE − bound IAE)·sw/h relative to HA's (< 1: better than HA's trade-off). */
function efficiency(row: Row): string {
  const cells: string[] = [];
  let sum = 0;
  let n = 0;
  for (const plant of RELAY_PLANTS) {
    for (const scenario of SCENARIOS) {
      const bound = simulate(plant, scenario, TIME_OPTIMAL_BOUND).iae;
      const m = run(row, plant, scenario);
      const h = ha(plant, scenario);
      const e = ((m.iae - bound) * (m.switchesPerHour ?? 0)) / ((h.iae - bound) * (h.switchesPerHour ?? 0));
      sum += Math.log(e);
      n++;
      cells.push(e.toFixed(3));
    }
  }
  return `${row.label.padEnd(44)} geo ${Math.exp(sum / n).toFixed(3)}  ${cells.join(' ')}`;
}

if (section === 'eff') {
  const rows: Row[] = [
    { label: 'HA', make: 'HA' },
    { label: 'TP 600 (src)', make: 'TP600' },
    { label: 'TP src 300', make: 'TP600' },
    ...[0.15, 0.25, 0.35].map((b) => ({
      label: `duty-hyst kp·${b} PI`,
      make: (p: PlantSpec) => dutyHysteresis(simcKp(p) * b, TIMES),
    })),
    ...[0.3, 0.5].map((b) => ({
      label: `duty-hyst kp·${b} PID`,
      td: 1 / 3,
      make: (p: PlantSpec) => dutyHysteresis(simcKp(p) * b, TIMES),
    })),
    ...[0.3, 0.5].map((b) => ({
      label: `hyst ±${b} trim noPID`,
      make: () => trimmedHysteresis(b, TIMES, { trimS: 1800, pidOverride: false }),
    })),
    ...[0.3, 0.6, 1.0].map((b) => ({
      label: `hyst ±${b} pred θ extrap trim noPID`,
      make: (p: PlantSpec) =>
        trimmedHysteresis(b, TIMES, {
          trimS: 1800,
          predictS: p.deadTimeS,
          extrapolate: true,
          pidOverride: false,
        }),
    })),
    ...[0.3].map((b) => ({
      label: `hyst ±${b} trim3600 noPID`,
      make: () => trimmedHysteresis(b, TIMES, { trimS: 3600, pidOverride: false }),
    })),
    ...[300, 600].map((t) => ({ label: `ΣΔ T${t} p1`, make: () => sigmaDelta(t * 1000, TIMES, 1) })),
    ...[300, 600].map((t) => ({ label: `ΣΔ T${t} p0.5`, make: () => sigmaDelta(t * 1000, TIMES, 0.5) })),
    ...[300, 600].map((t) => ({ label: `TP latched ${t}`, make: () => latchedTp(t * 1000, TIMES) })),
  ];
  out.length = 0;
  out.push(
    `${'scheme'.padEnd(44)} geo    ${RELAY_PLANTS.flatMap((p) => SCENARIOS.map((s) => `${p.id.slice(0, 4)}${s.id}`)).join('  ')}`,
  );
  for (const row of rows) out.push(efficiency(row));
}

if (section === 'fine') {
  const results: { wins: number; line: string; margin: number }[] = [];
  for (const td of [0, 1 / 3]) {
    for (let b = 0.1; b <= 0.6001; b += 0.025) {
      results.push(
        evaluate({
          label: `duty-hyst kp·${b.toFixed(3)} td${td.toFixed(2)}`,
          td,
          make: (p) => dutyHysteresis(simcKp(p) * b, TIMES),
        }),
      );
    }
  }
  for (const p of [0.5, 1]) {
    for (let t = 300; t <= 1200; t += 50)
      results.push(evaluate({ label: `ΣΔ T${t} p${p}`, make: () => sigmaDelta(t * 1000, TIMES, p) }));
  }
  results.sort((a, b) => b.wins - a.wins);
  for (const r of results.slice(0, 15)) out.push(r.line);
}
process.stdout.write(`${out.join('\n')}\n`);
