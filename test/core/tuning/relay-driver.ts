/**
 * A tiny relay-feedback driver for the tuning tests: samples a simulated plant every few seconds
 * of simulated time (manual clock, seeded noise, quantization) and switches a relay at
 * setpoint ± hysteresis, recording what the identification needs. Not the autotune itself.
 */

import type { RelayExperiment, RelaySwitch, Sample } from '../../../src/core/tuning/relay-experiment.js';
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import { Random } from '../../../src/drivers/sim/random.js';

export interface TestPlant {
  id: string;
  gain: number;
  timeConstantS: number;
  deadTimeS: number;
  ambient: number;
  setpoint: number;
  /** A second lag after the FOPDT (a second-order plant), s. */
  secondLagS?: number;
}

export interface DriveOptions {
  noise?: number;
  quantization?: number;
  seed?: number;
  sampleS?: number;
  hysteresis?: number;
  /** Full cycles after the first (open-loop) one. */
  cycles?: number;
  /** Time at rest before the relay starts, s. */
  restS?: number;
}

const T0 = Date.UTC(2026, 0, 1);

export function driveRelay(plant: TestPlant, options: DriveOptions = {}): RelayExperiment {
  const noise = options.noise ?? 0.05;
  const quantization = options.quantization ?? 0.0625;
  const sampleS = options.sampleS ?? 5;
  const hysteresis = options.hysteresis ?? 0.2;
  const cycles = options.cycles ?? 6;
  const restS = options.restS ?? 120;
  const random = new Random(options.seed ?? 1);
  const fopdt = new FopdtPlant(
    { ambient: plant.ambient, timeConstantS: plant.timeConstantS, deadTimeS: plant.deadTimeS },
    T0,
  );
  fopdt.addInput('relay', plant.gain, 0);
  const second = secondLag(fopdt, plant);
  const samples: Sample[] = [];
  const switches: RelaySwitch[] = [];
  let level = 0;
  let highSwitches = 0;
  for (let tS = 0; highSwitches < cycles + 2; tS += sampleS) {
    const atMs = T0 + tS * 1000;
    const exact = second(atMs) + noise * random.gaussian();
    const value = quantization > 0 ? Math.round(exact / quantization) * quantization : exact;
    samples.push({ tMs: atMs, value });
    if (tS < restS) continue;
    const wanted =
      level === 0 && value < plant.setpoint - hysteresis
        ? 1
        : level === 1 && value > plant.setpoint + hysteresis
          ? 0
          : level;
    if (wanted !== level) {
      level = wanted;
      fopdt.setInput('relay', level, atMs);
      switches.push({ tMs: atMs, level });
      if (level === 1) highSwitches++;
    }
    if (tS > 200 * (plant.timeConstantS + plant.deadTimeS)) throw new Error(`${plant.id}: no oscillation`);
  }
  return {
    samples,
    switches,
    initialLevel: 0,
    highLevel: 1,
    lowLevel: 0,
    setpoint: plant.setpoint,
    hysteresis,
  };
}

/** The plant's value at a time: the FOPDT's, or a second lag on it integrated in 0.5 s steps. */
function secondLag(fopdt: FopdtPlant, plant: TestPlant): (atMs: number) => number {
  const lagS = plant.secondLagS;
  if (lagS === undefined) return (atMs) => fopdt.valueAt(atMs);
  let y = plant.ambient;
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
