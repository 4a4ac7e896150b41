/**
 * One benchmark run: a controller on a plant through a scenario, simulated in 1 s plant steps.
 * Readings are taken at the scenario's sampling instants; the controller's level is held
 * between its changes (zero-order hold) and clamped to 0..1, the actuator's range.
 * Metrics are computed on the plant's true value over one horizon from the scenario's event
 * (the setpoint step at t = 0, or the disturbance one horizon later).
 */
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import type { ControllerContext, ControllerSpec } from './controller.js';
import { type RunMetrics, runMetrics } from './metrics.js';
import { type PlantSpec, simcTuning } from './plants.js';
import { type ScenarioSpec, samplingInstantsS, sensorReading } from './scenarios.js';

/** Plant step, s. */
export const STEP_S = 1;
/** Any fixed instant will do; a real date keeps the packages' `new Date()` plausible. */
const START_MS = Date.UTC(2025, 0, 1);
const INPUT = 'heater';

function clampLevel(level: number): number {
  return Number.isFinite(level) ? Math.min(1, Math.max(0, level)) : 0;
}

export function simulate(plant: PlantSpec, scenario: ScenarioSpec, controller: ControllerSpec): RunMetrics {
  const horizonS = plant.horizonS;
  const disturbed = scenario.disturbanceC !== 0;
  // The disturbance waits one horizon, so every loop meets it from its own steady state.
  const eventS = disturbed ? horizonS : 0;
  const endS = eventS + horizonS;

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

  const context: ControllerContext = {
    plant,
    tuning: simcTuning(plant),
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
    const value = sim.valueAt(atMs);
    if (instants.has(s)) loop.onReading(sensorReading(scenario, value), plant.setpointC, atMs);
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
  return runMetrics(values, levels, levelBefore, plant.setpointC, plant.settlingBandC, STEP_S, relay);
}
