/**
 * The feedforward section of the control benchmark:
 *
 * 1. Measured-disturbance feedforward: ambient step 10 → 5 °C (scenario B, from steady state)
 *    on the room plant with a continuous and a relay heater; plain PI, PI with the static model,
 *    PI with an outdoor sensor through the model. Target: IAE ≤ 3 × the time-optimal bound.
 * 2. The static model's feedforward against plain PI on every plant: a large step from ambient
 *    (scenario A) and a small one (+0.5 °C once the loop holds its setpoint), with the former
 *    behaviour (feedforward added to a bare pidStep, no re-basing) for comparison.
 *
 * `feedforwardSection()` returns the rows and their text; control.ts prints it.
 */

import { setpointFeedforward } from '../../../src/core/feedforward.js';
import { type PidMemory, pidInitialMemory, pidStep } from '../../../src/core/pid.js';
import { timeProportion, timeProportioningInitialMemory } from '../../../src/core/time-proportioning.js';
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import { TIME_OPTIMAL_BOUND } from './bound.js';
import type { BenchController, ControllerContext, ControllerSpec } from './controller.js';
import { BAND_C, homeostatVariant, TIME_PROPORTIONING } from './homeostat.js';
import { type RunMetrics, ratio, runMetrics } from './metrics.js';
import { PLANTS, type PlantSpec, simcTuning } from './plants.js';
import { REGULAR_PERIOD_S, SCENARIOS, type ScenarioSpec } from './scenarios.js';
import { simulate } from './simulate.js';

/** The small setpoint step of part 2, °C. */
export const SMALL_STEP_C = 0.5;
/** The time-optimal bound for the room's ambient step, °C·s (the bound's own run is printed too). */
export const DISTURBANCE_BOUND_IAE = 27;
/** The target: measured feedforward within this multiple of the bound. */
export const DISTURBANCE_TARGET_RATIO = 3;

const BOTH = ['continuous', 'relay'] as const;

export const PI = homeostatVariant('PI', { tdPerDeadTime: 0, feedforward: false }, BOTH, 'homeostat PI');
export const PI_STATIC_FF = homeostatVariant(
  'PI+ff',
  { tdPerDeadTime: 0, feedforward: true },
  BOTH,
  'homeostat PI with the static model (gain, ambient) as feedforward',
);
export const PI_MEASURED_FF = homeostatVariant(
  'PI+measured ff',
  { tdPerDeadTime: 0, feedforward: true, measuredDisturbance: true },
  BOTH,
  'homeostat PI with an outdoor sensor reading the true ambient, through the model (coupling 1)',
);

/** The ambient step of part 1, °C (10 → 5 on the room). */
export const AMBIENT_STEP_C = -5;

export const PI_BAND = homeostatVariant(
  'PI band',
  { tdPerDeadTime: 0, feedforward: false, bandC: BAND_C },
  ['relay'],
  `homeostat PI, relay by dutyBand, half band kp · ${BAND_C} °C`,
);
export const PI_BAND_MEASURED_FF = homeostatVariant(
  'PI band+mff',
  { tdPerDeadTime: 0, feedforward: true, measuredDisturbance: true, bandC: BAND_C },
  ['relay'],
  'PI band with the measured feedforward',
);

/** The former PI+ff: bare pidStep, feedforward added on top, integrator from 0 (the earlier version). */
class FormerFeedforward implements BenchController {
  private memory: PidMemory = pidInitialMemory();
  private output = 0;
  private relay = timeProportioningInitialMemory();
  constructor(private readonly context: ControllerContext) {}
  onReading(measured: number, setpoint: number, atMs: number): void {
    const { plant, tuning } = this.context;
    const params = { kp: tuning.kp, tiS: tuning.tiS, tdS: 0, outputMin: 0, outputMax: 1 };
    const feedforward = setpointFeedforward({ gain: plant.gain, ambient: plant.ambientC }, setpoint);
    const result = pidStep(params, this.memory, { setpoint, measured, atMs, feedforward });
    this.memory = result.memory;
    this.output = result.output;
  }
  levelAt(atMs: number): number {
    if (this.context.plant.actuator !== 'relay') return this.output;
    const result = timeProportion(this.output, this.relay, atMs, TIME_PROPORTIONING);
    this.relay = result.memory;
    return result.on ? 1 : 0;
  }
}

export const PI_FORMER_FF: ControllerSpec = {
  id: 'PI+ff before',
  actuators: BOTH,
  note: 'former PI+ff: pidStep with the static feedforward added, no re-basing',
  create: (context) => new FormerFeedforward(context),
};

/** What happens once the loop has held its setpoint for one horizon. */
export interface SteadyStateEvent {
  /** Setpoint step, °C. Default 0. */
  setpointStepC?: number;
  /** Step offset on the plant's forcing (the ambient), °C; an outdoor sensor sees it. Default 0. */
  ambientStepC?: number;
}

/**
 * A run from steady state: the setpoint step of scenario A held for one horizon (the loop
 * settles), then `event`; metrics over the horizon after it. Regular readings every 10 s, exact
 * sensor. With neither step it measures what the loop does undisturbed (a relay's ripple).
 */
export function simulateFromSteadyState(
  plant: PlantSpec,
  controller: ControllerSpec,
  event: SteadyStateEvent,
): RunMetrics {
  const startMs = Date.UTC(2025, 0, 1);
  const horizonS = plant.horizonS;
  const ambientStepC = event.ambientStepC ?? 0;
  const sim = new FopdtPlant(
    {
      ambient: plant.ambientC,
      timeConstantS: plant.timeConstantS,
      deadTimeS: plant.deadTimeS,
      disturbances: ambientStepC === 0 ? [] : [{ atS: horizonS, offset: ambientStepC }],
    },
    startMs,
  );
  sim.addInput('heater', plant.gain);
  const loop = controller.create({
    plant,
    tuning: simcTuning(plant),
    setpoint: plant.setpointC,
    startMs,
    ...(ambientStepC === 0
      ? {}
      : { disturbance: { atMs: startMs + horizonS * 1000, offsetC: ambientStepC } }),
  });
  const target = plant.setpointC + (event.setpointStepC ?? 0);
  const values = new Float64Array(horizonS + 1);
  const levels = new Float64Array(horizonS);
  let level = 0;
  let levelBefore = 0;
  for (let s = 0; s <= 2 * horizonS; s++) {
    const atMs = startMs + s * 1000;
    const value = sim.valueAt(atMs);
    const setpoint = s < horizonS ? plant.setpointC : target;
    if (s % REGULAR_PERIOD_S === 0) loop.onReading(value, setpoint, atMs);
    if (s === horizonS) levelBefore = level;
    const next = Math.min(1, Math.max(0, loop.levelAt(atMs)));
    if (next !== level) sim.setInput('heater', next, atMs);
    level = next;
    if (s >= horizonS) {
      values[s - horizonS] = value;
      if (s < 2 * horizonS) levels[s - horizonS] = level;
    }
  }
  return runMetrics(values, levels, levelBefore, target, plant.settlingBandC, 1, plant.actuator === 'relay');
}

/** The small setpoint step: +`SMALL_STEP_C` once the loop holds its setpoint. */
export function simulateSmallStep(plant: PlantSpec, controller: ControllerSpec): RunMetrics {
  return simulateFromSteadyState(plant, controller, { setpointStepC: SMALL_STEP_C });
}

export interface DisturbanceRow {
  plant: string;
  controller: string;
  /** IAE after the step; on a relay, less the undisturbed run's (the ripple's) IAE. */
  iae: number;
  /** Relay: IAE of the same controller undisturbed over the same window (its ripple); else null. */
  rippleIae: number | null;
  overshootC: number;
  /** IAE / the bound's IAE on scenario B (simulate's bound, ≈ 27 on the room). */
  ratioToBound: number | null;
  /** IAE / 27, the figure. */
  ratioTo27: number;
  meetsTarget: boolean | null;
}

export interface StepRow {
  plant: string;
  step: 'large' | 'small';
  controller: string;
  iae: number;
  overshootC: number;
  /** IAE / plain PI's on the same plant and step. */
  ratioToPi: number | null;
}

export interface FeedforwardSection {
  disturbance: DisturbanceRow[];
  steps: StepRow[];
  text: string;
}

function scenario(id: ScenarioSpec['id']): ScenarioSpec {
  return SCENARIOS.find((s) => s.id === id)!;
}

/** Part 1: the room's ambient step, continuous and relay heater. */
export function disturbanceRows(): DisturbanceRow[] {
  const rows: DisturbanceRow[] = [];
  for (const plant of PLANTS.filter((p) => p.id === 'room' || p.id === 'room-relay')) {
    const relay = plant.actuator === 'relay';
    const bound = simulate(plant, scenario('B'), TIME_OPTIMAL_BOUND);
    const controllers = relay
      ? [PI, PI_STATIC_FF, PI_MEASURED_FF, PI_BAND, PI_BAND_MEASURED_FF]
      : [PI, PI_STATIC_FF, PI_MEASURED_FF];
    for (const controller of controllers) {
      const metrics = simulateFromSteadyState(plant, controller, { ambientStepC: AMBIENT_STEP_C });
      // On a relay the ripple alone costs IAE every horizon: count what the step adds to it.
      const ripple = relay ? simulateFromSteadyState(plant, controller, {}).iae : 0;
      const iae = metrics.iae - ripple;
      const measured = controller === PI_MEASURED_FF || controller === PI_BAND_MEASURED_FF;
      rows.push({
        plant: plant.id,
        controller: controller.id,
        iae,
        rippleIae: relay ? ripple : null,
        overshootC: metrics.overshootC,
        ratioToBound: ratio(iae, bound.iae),
        ratioTo27: iae / DISTURBANCE_BOUND_IAE,
        meetsTarget: measured ? iae <= DISTURBANCE_TARGET_RATIO * DISTURBANCE_BOUND_IAE : null,
      });
    }
  }
  return rows;
}

/** Part 2: PI, PI+ff and the former PI+ff on a large and a small step, every plant. */
export function stepRows(): StepRow[] {
  const rows: StepRow[] = [];
  for (const plant of PLANTS) {
    for (const step of ['large', 'small'] as const) {
      const run = (c: ControllerSpec) =>
        step === 'large' ? simulate(plant, scenario('A'), c) : simulateSmallStep(plant, c);
      const pi = run(PI);
      for (const [controller, metrics] of [
        [PI, pi],
        [PI_STATIC_FF, run(PI_STATIC_FF)],
        [PI_FORMER_FF, run(PI_FORMER_FF)],
      ] as const) {
        rows.push({
          plant: plant.id,
          step,
          controller: controller.id,
          iae: metrics.iae,
          overshootC: metrics.overshootC,
          ratioToPi: ratio(metrics.iae, pi.iae),
        });
      }
    }
  }
  return rows;
}

function cell(value: number | null, digits: number, width: number): string {
  return (value === null ? '—' : value.toFixed(digits)).padStart(width);
}

export function formatFeedforward(disturbance: DisturbanceRow[], steps: StepRow[]): string {
  const lines = [
    'Measured-disturbance feedforward: ambient step 10 → 5 °C from steady state (room plant)',
    `${'plant'.padEnd(11)}${'controller'.padEnd(16)}${'IAE °C·s'.padStart(9)}${'ripple'.padStart(8)}${'overshoot'.padStart(10)}${'×bound'.padStart(8)}${'×27'.padStart(7)}  target ≤ ${DISTURBANCE_TARGET_RATIO}×27`,
  ];
  for (const r of disturbance) {
    const verdict = r.meetsTarget === null ? '' : r.meetsTarget ? 'met' : 'NOT met';
    lines.push(
      `${r.plant.padEnd(11)}${r.controller.padEnd(16)}${cell(r.iae, 0, 9)}${cell(r.rippleIae, 0, 8)}${cell(r.overshootC, 3, 10)}${cell(r.ratioToBound, 2, 8)}${cell(r.ratioTo27, 2, 7)}  ${verdict}`,
    );
  }
  lines.push(
    "Relay rows: IAE is what the step adds to the undisturbed run's (ripple column, same window);",
    'overshoot includes the ripple. An outdoor sensor reads the true ambient; feedforward lead from θ.',
  );
  lines.push(
    '',
    `Static model feedforward vs plain PI: large step (scenario A) and small step (+${SMALL_STEP_C} °C from steady state)`,
    `${'plant'.padEnd(11)}${'step'.padEnd(7)}${'controller'.padEnd(14)}${'IAE °C·s'.padStart(9)}${'overshoot'.padStart(10)}${'×PI'.padStart(7)}`,
  );
  for (const r of steps) {
    lines.push(
      `${r.plant.padEnd(11)}${r.step.padEnd(7)}${r.controller.padEnd(14)}${cell(r.iae, 0, 9)}${cell(r.overshootC, 3, 10)}${cell(r.ratioToPi, 2, 7)}`,
    );
  }
  lines.push(
    '',
    'PI+ff: the loop\'s controller step (controllerOutput) with controller.model; "PI+ff before": the',
    'former behaviour (feedforward added to a bare pidStep, integrator not re-based).',
  );
  return lines.join('\n');
}

export function feedforwardSection(): FeedforwardSection {
  const disturbance = disturbanceRows();
  const steps = stepRows();
  return { disturbance, steps, text: formatFeedforward(disturbance, steps) };
}

// Run directly: `node --import tsx test/bench/control/feedforward.ts`.
if (import.meta.url === `file://${process.argv[1]}`) console.log(feedforwardSection().text);
