/**
 * The simulated plant of the autotune section: a FopdtPlant (with an optional second lag, the
 * second-order plant) at rest at a level, read through the sensor of the autotune's targets
 * (Gaussian noise σ, then quantised), seeded. The same model as test/core/tuning's drivers, so
 * the closed-loop steps and the peers' relay tunes see the plant the autotune saw.
 */
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import { Random } from '../../../src/drivers/sim/random.js';
import type { TestPlant } from '../../core/tuning/relay-driver.js';

/** Sensor of the targets: noise σ, °C, and quantum (a DS18B20 at 12 bits), °C. */
export const NOISE_SIGMA_C = 0.05;
export const QUANTUM_C = 0.0625;
/** Reading period of every experiment and loop in this section, s (the tuning tests' too). */
export const SAMPLE_S = 5;
export const T0_MS = Date.UTC(2026, 0, 1);

export interface SimPlant {
  /** The plant's true value (times must not go back). */
  valueAt(atMs: number): number;
  /** What the sensor reads at `atMs`: noise, then quantisation. */
  read(atMs: number): number;
  setLevel(level: number, atMs: number): void;
  /**
   * A load on the plant in output fractions (an ambient step of `load`·K through the plant's
   * own dynamics; negative: a loss the output must make up), 0 at the start.
   */
  setLoad(load: number, atMs: number): void;
}

/** The level that holds `setpoint` at steady state. */
export function restLevel(plant: TestPlant, setpoint = plant.setpoint): number {
  return (setpoint - plant.ambient) / plant.gain;
}

export function simPlant(plant: TestPlant, level: number, seed: number): SimPlant {
  const random = new Random(seed);
  const initial = plant.ambient + plant.gain * level;
  const fopdt = new FopdtPlant(
    { ambient: plant.ambient, timeConstantS: plant.timeConstantS, deadTimeS: plant.deadTimeS, initial },
    T0_MS,
  );
  fopdt.addInput('actuator', plant.gain, level);
  // Two load inputs: the plant's levels are 0..1, a load either sign.
  fopdt.addInput('load+', plant.gain, 0);
  fopdt.addInput('load-', -plant.gain, 0);
  let current = level;
  const valueAt = secondLag(fopdt, plant.secondLagS, initial);
  return {
    valueAt,
    read: (atMs) => Math.round((valueAt(atMs) + NOISE_SIGMA_C * random.gaussian()) / QUANTUM_C) * QUANTUM_C,
    setLevel: (next, atMs) => {
      if (next === current) return;
      current = next;
      valueAt(atMs); // the second lag is integrated up to the switch first (time only goes on)
      fopdt.setInput('actuator', next, atMs);
    },
    setLoad: (load, atMs) => {
      valueAt(atMs);
      fopdt.setInput('load+', Math.max(load, 0), atMs);
      fopdt.setInput('load-', Math.max(-load, 0), atMs);
    },
  };
}

/** The FOPDT's value, or a second lag on it integrated in 0.5 s steps (as the tuning drivers). */
function secondLag(fopdt: FopdtPlant, lagS: number | undefined, initial: number): (atMs: number) => number {
  if (lagS === undefined) return (atMs) => fopdt.valueAt(atMs);
  let y = initial;
  let lastMs = T0_MS;
  return (atMs) => {
    while (lastMs < atMs) {
      const toMs = Math.min(atMs, lastMs + 500);
      const u = (fopdt.valueAt(lastMs) + fopdt.valueAt(toMs)) / 2;
      y = u + (y - u) * Math.exp(-(toMs - lastMs) / 1000 / lagS);
      lastMs = toMs;
    }
    return y;
  };
}
