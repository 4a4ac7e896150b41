/**
 * Drives the autotune state machine (no reconcile) on a simulated plant: a reading every
 * `sampleS` of simulated time (seeded noise, quantisation), the machine's level applied to the
 * plant at once. The plant starts at rest either at the setpoint with the level that holds it
 * there (a loop regulating, the normal case) or at ambient with the output at 0.
 */

import {
  type AutotuneMemory,
  type AutotuneOptions,
  startAutotune,
  stepAutotune,
} from '../../../src/core/tuning/autotune.js';
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import { Random } from '../../../src/drivers/sim/random.js';
import type { TestPlant } from './relay-driver.js';

export interface AutotuneDrive {
  noise?: number;
  quantization?: number;
  seed?: number;
  sampleS?: number;
  /** 'setpoint' (default): at rest at the setpoint; 'ambient': at rest with the output at 0. */
  start?: 'setpoint' | 'ambient';
  options?: AutotuneOptions;
  /** A cooler: the plant's gain is negated and the lower side tuned. */
  cooler?: boolean;
  /** Actuator kind (a continuous one starts at the level that holds the setpoint). */
  kind?: 'relay' | 'continuous';
  /** Tell the machine the plant is at rest (default true). */
  atRest?: boolean;
  /** Called after every step with the memory and the level applied (for the tests' checks). */
  observe?: (memory: AutotuneMemory, level: number, atMs: number) => void;
}

export const T0 = Date.UTC(2026, 0, 1);

export function driveAutotune(plant: TestPlant, drive: AutotuneDrive = {}): AutotuneMemory {
  const noise = drive.noise ?? 0.05;
  const quantization = drive.quantization ?? 0.0625;
  const sampleS = drive.sampleS ?? 5;
  const random = new Random(drive.seed ?? 1);
  const gain = drive.cooler ? -plant.gain : plant.gain;
  // A cooler's ambient is as far above the setpoint as a heater's is below it.
  const ambient = drive.cooler ? 2 * plant.setpoint - plant.ambient : plant.ambient;
  const restLevel = drive.start === 'ambient' ? 0 : (plant.setpoint - ambient) / gain;
  const initial = ambient + gain * restLevel;
  const fopdt = new FopdtPlant(
    { ambient, timeConstantS: plant.timeConstantS, deadTimeS: plant.deadTimeS, initial },
    T0,
  );
  fopdt.addInput('actuator', gain, restLevel);
  const valueAt = secondLag(fopdt, plant, initial);
  const side = drive.cooler ? 'lower' : 'raise';
  const mode = drive.cooler ? 'cool' : 'heat';
  const started = startAutotune(
    {
      mode,
      setpoint: plant.setpoint,
      controller: 'pid',
      actuators: { [side]: drive.kind ?? 'relay' },
      currentLevel: restLevel,
      atRest: drive.atRest ?? true,
    },
    drive.options ?? {},
    T0,
  );
  if (!started.ok) throw new Error(started.reason);
  let memory = started.memory;
  let level = restLevel;
  for (let tS = 0; ; tS += sampleS) {
    const atMs = T0 + tS * 1000;
    const exact = valueAt(atMs) + noise * random.gaussian();
    const value = quantization > 0 ? Math.round(exact / quantization) * quantization : exact;
    const step = stepAutotune(memory, { reading: { value, atMs }, mode, setpoint: plant.setpoint }, atMs);
    memory = step.memory;
    drive.observe?.(memory, step.level ?? level, atMs);
    if (step.level === undefined) return memory;
    if (step.level !== level) {
      level = step.level;
      fopdt.setInput('actuator', level, atMs);
    }
  }
}

/** The plant's value: the FOPDT's, or a second lag on it integrated in 0.5 s steps. */
function secondLag(fopdt: FopdtPlant, plant: TestPlant, initial: number): (atMs: number) => number {
  const lagS = plant.secondLagS;
  if (lagS === undefined) return (atMs) => fopdt.valueAt(atMs);
  let y = initial;
  let lastMs = T0;
  return (atMs) => {
    for (; lastMs < atMs; ) {
      const toMs = Math.min(atMs, lastMs + 500);
      const u = (fopdt.valueAt(lastMs) + fopdt.valueAt(toMs)) / 2;
      y = u + (y - u) * Math.exp(-(toMs - lastMs) / 1000 / lagS);
      lastMs = toMs;
    }
    return y;
  };
}
