/**
 * One benchmark run: a controller on a plant through a scenario, simulated in 1 s plant steps.
 * Readings are taken at the scenario's sampling instants; the controller's level is held
 * between its changes (zero-order hold) and clamped to 0..1, the actuator's range.
 * Metrics are computed on the plant's true value over one horizon from the scenario's event
 * (the setpoint step at t = 0, or the disturbance or small setpoint step one horizon later),
 * against the setpoint in force after the event.
 */
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import type { ControllerContext, ControllerSpec } from './controller.js';
import { type RunMetrics, runMetrics } from './metrics.js';
import { type PlantSpec, simcTuning, type Tuning } from './plants.js';
import { eventAfterHorizon, type ScenarioSpec, samplingInstantsS, sensorReading } from './scenarios.js';

/** Plant step, s. */
export const STEP_S = 1;
/** Any fixed instant will do; a real date keeps the packages' `new Date()` plausible. */
const START_MS = Date.UTC(2025, 0, 1);
const INPUT = 'heater';

/**
 * A plant beyond plants.ts's FOPDTs: a second lag after the FOPDT (a second-order plant), and
 * controllers tuned for another model than the plant's own (a plant off its tuning).
 */
export interface BenchPlant extends PlantSpec {
  /** Second lag after the FOPDT, s (integrated in 0.5 s steps). */
  secondLagS?: number;
  /** The model the controllers are tuned for (SIMC); default the plant itself. */
  tunedFor?: Pick<PlantSpec, 'gain' | 'timeConstantS' | 'deadTimeS'>;
}

/** The tuning every controller gets on `plant`. */
export function benchTuning(plant: BenchPlant): Tuning {
  return simcTuning(plant.tunedFor ?? plant);
}

function clampLevel(level: number): number {
  return Number.isFinite(level) ? Math.min(1, Math.max(0, level)) : 0;
}

/** The plant's true value at a time: the FOPDT's, or a second lag on it. */
function plantValue(sim: FopdtPlant, plant: BenchPlant): (atMs: number) => number {
  const lagS = plant.secondLagS;
  if (lagS === undefined) return (atMs) => sim.valueAt(atMs);
  let y = plant.ambientC;
  let lastMs = START_MS;
  return (atMs) => {
    while (lastMs < atMs) {
      const toMs = Math.min(atMs, lastMs + 500);
      const u = (sim.valueAt(lastMs) + sim.valueAt(toMs)) / 2;
      y = u + (y - u) * Math.exp(-(toMs - lastMs) / 1000 / lagS);
      lastMs = toMs;
    }
    return y;
  };
}

export function simulate(plant: BenchPlant, scenario: ScenarioSpec, controller: ControllerSpec): RunMetrics {
  const horizonS = plant.horizonS;
  const disturbed = scenario.disturbanceC !== 0;
  // A disturbance or a small setpoint step waits one horizon, so every loop meets it from its
  // own steady state.
  const eventS = eventAfterHorizon(scenario) ? horizonS : 0;
  const endS = eventS + horizonS;
  const setpointAfter = plant.setpointC + scenario.setpointStepC;
  const setpointAt = (s: number) => (s >= eventS ? setpointAfter : plant.setpointC);

  const sim = new FopdtPlant(
    {
      ambient: plant.ambientC,
      timeConstantS: plant.timeConstantS,
      deadTimeS: plant.deadTimeS,
      disturbances: disturbed ? [{ atS: eventS, offset: scenario.disturbanceC }] : [],
    },
    START_MS,
  );
  sim.addInput(INPUT, plant.gain);
  const valueAt = plantValue(sim, plant);

  const context: ControllerContext = {
    plant,
    tuning: benchTuning(plant),
    setpoint: plant.setpointC,
    startMs: START_MS,
    ...(disturbed ? { disturbance: { atMs: START_MS + eventS * 1000, offsetC: scenario.disturbanceC } } : {}),
  };
  const loop = controller.create(context);
  const instants = samplingInstantsS(scenario, endS, plant.id);

  const values = new Float64Array(horizonS + 1);
  const levels = new Float64Array(horizonS);
  let level = 0;
  let levelBefore = 0;
  const apply = (next: number, atMs: number) => {
    if (next !== level) sim.setInput(INPUT, next, atMs);
    level = next;
  };

  for (let s = 0; s <= endS; s += STEP_S) {
    const atMs = START_MS + s * 1000;
    const value = valueAt(atMs);
    if (instants.has(s)) loop.onReading(sensorReading(scenario, value), setpointAt(s), atMs);
    if (s === eventS) levelBefore = level;
    apply(clampLevel(loop.levelAt(atMs)), atMs);
    if (s >= eventS) {
      values[s - eventS] = value;
      if (s < endS) levels[s - eventS] = level;
    }
    const changeMs = loop.changeBetween?.(atMs, atMs + STEP_S * 1000);
    if (changeMs !== undefined) apply(clampLevel(loop.levelAt(changeMs)), changeMs);
  }

  const relay = plant.actuator === 'relay' && controller.oracle !== true;
  return runMetrics(values, levels, levelBefore, setpointAfter, plant.settlingBandC, STEP_S, relay);
}
