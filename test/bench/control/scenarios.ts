/**
 * The five benchmark scenarios. Each starts with the plant at ambient and the setpoint stepped
 * to the plant's setpoint at t = 0; they differ in what is measured and how the sensor behaves.
 *
 *   A  setpoint step (saturates any reasonable controller), regular 10 s readings
 *   B  load disturbance: once the loop has held the setpoint for a whole horizon, a −5 °C step
 *      offset on the forcing (a door opened); metrics from that moment on
 *   C  as A, readings at irregular 5–55 s intervals (seeded, the same for every controller)
 *   D  as A, sensor quantized to 0.0625 °C (a DS18B20 at 12 bits)
 *   E  small setpoint step: once the loop has held the setpoint for a whole horizon, the setpoint
 *      goes up by 0.5 °C (20 → 20.5 on the room); metrics from that moment on, against the new
 *      setpoint. A step this small never saturates: it shows what the act step does with small
 *      moves of a continuous output.
 */
import { Random, seedFromString } from '../../../src/drivers/sim/random.js';

export type ScenarioId = 'A' | 'B' | 'C' | 'D' | 'E';

export interface ScenarioSpec {
  id: ScenarioId;
  label: string;
  /** Regular readings every `REGULAR_PERIOD_S`, or irregular ones 5–55 s apart. */
  sampling: 'regular' | 'irregular';
  /** Sensor resolution, °C; readings are rounded to it. 0 = exact. */
  quantumC: number;
  /** Step offset on the forcing, °C, applied one horizon after the start. */
  disturbanceC: number;
  /** Step of the setpoint, °C, one horizon after the start (0 = none). */
  setpointStepC: number;
}

/** Regular sampling period, s. */
export const REGULAR_PERIOD_S = 10;
/** Bounds of the irregular intervals, s (uniform, whole seconds). */
export const IRREGULAR_MIN_S = 5;
export const IRREGULAR_MAX_S = 55;

export const SCENARIOS: readonly ScenarioSpec[] = [
  { id: 'A', label: 'setpoint step', sampling: 'regular', quantumC: 0, disturbanceC: 0, setpointStepC: 0 },
  {
    id: 'B',
    label: 'load disturbance −5 °C',
    sampling: 'regular',
    quantumC: 0,
    disturbanceC: -5,
    setpointStepC: 0,
  },
  {
    id: 'C',
    label: 'irregular readings 5–55 s',
    sampling: 'irregular',
    quantumC: 0,
    disturbanceC: 0,
    setpointStepC: 0,
  },
  {
    id: 'D',
    label: 'sensor quantized 0.0625 °C',
    sampling: 'regular',
    quantumC: 0.0625,
    disturbanceC: 0,
    setpointStepC: 0,
  },
];

/**
 * Scenario E, apart from A–D because other scripts (relay-explore.ts) run `SCENARIOS` with a
 * simulation of their own that knows no setpoint step.
 */
export const SMALL_STEP: ScenarioSpec = {
  id: 'E',
  label: 'small setpoint step +0.5 °C from steady state',
  sampling: 'regular',
  quantumC: 0,
  disturbanceC: 0,
  setpointStepC: 0.5,
};

/** Every scenario `bench:control` runs. */
export const BENCH_SCENARIOS: readonly ScenarioSpec[] = [...SCENARIOS, SMALL_STEP];

/** The scenario's event (disturbance or setpoint step) waits one horizon; else it is the start. */
export function eventAfterHorizon(scenario: ScenarioSpec): boolean {
  return scenario.disturbanceC !== 0 || scenario.setpointStepC !== 0;
}

/**
 * Sampling instants in whole seconds from 0 up to `endS` (inclusive), as a set for lookup.
 * The irregular sequence is seeded by `seedText` (the plant id), so every controller on a
 * plant sees the same instants.
 */
export function samplingInstantsS(scenario: ScenarioSpec, endS: number, seedText: string): Set<number> {
  const instants = new Set<number>();
  if (scenario.sampling === 'regular') {
    for (let t = 0; t <= endS; t += REGULAR_PERIOD_S) instants.add(t);
    return instants;
  }
  const random = new Random(seedFromString(`irregular:${seedText}`));
  const span = IRREGULAR_MAX_S - IRREGULAR_MIN_S + 1;
  for (let t = 0; t <= endS; t += IRREGULAR_MIN_S + Math.floor(random.next() * span)) instants.add(t);
  return instants;
}

/** What the sensor reports for a true value. */
export function sensorReading(scenario: ScenarioSpec, valueC: number): number {
  if (scenario.quantumC <= 0) return valueC;
  return Math.round(valueC / scenario.quantumC) * scenario.quantumC;
}
