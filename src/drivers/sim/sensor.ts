import type { SensorDriver } from '../types.js';
import type { FopdtPlant } from './plant.js';
import { Random, seedFromString } from './random.js';

/**
 * A fault a test can inject into a {@link SimSensor}:
 * - `none`: normal readings;
 * - `stale`: `read()` rejects, so the sampler keeps its last reading and lets it age;
 * - `nan`: `read()` resolves `NaN` (a driver that returns garbage instead of throwing);
 * - `spike`: `read()` resolves `value` (a glitch such as the DS18B20's 85 °C power-on value);
 * - `error`: `read()` rejects with `message`.
 */
export type SimSensorFault =
  | { kind: 'none' }
  | { kind: 'stale' }
  | { kind: 'nan' }
  | { kind: 'spike'; value: number }
  | { kind: 'error'; message: string };

/** Options of a {@link SimSensor}. */
export interface SimSensorOptions {
  id: string;
  plant: FopdtPlant;
  /** The plant's clock (the daemon's monotonic one); the sensor reads the plant at this time. */
  nowMs: () => number;
  /** Standard deviation of additive Gaussian noise, in the plant's unit. Default 0. */
  noise?: number;
  /** Resolution: readings are rounded to multiples of it (DS18B20: 0.0625 °C). Default 0 = none. */
  quantization?: number;
  /** Noise source. Default: seeded from `id`, so runs are reproducible. */
  random?: Random;
}

/** A sensor that measures a simulated plant, with optional noise, quantization and faults. */
export class SimSensor implements SensorDriver {
  readonly id: string;
  readonly simulated = true;
  private readonly plant: FopdtPlant;
  private readonly nowMs: () => number;
  private readonly noise: number;
  private readonly quantization: number;
  private readonly random: Random;
  private fault: SimSensorFault = { kind: 'none' };

  constructor(opts: SimSensorOptions) {
    const noise = opts.noise ?? 0;
    const quantization = opts.quantization ?? 0;
    if (!(noise >= 0)) throw new RangeError(`sensor ${opts.id}: noise must be >= 0, got ${noise}`);
    if (!(quantization >= 0)) {
      throw new RangeError(`sensor ${opts.id}: quantization must be >= 0, got ${quantization}`);
    }
    this.id = opts.id;
    this.plant = opts.plant;
    this.nowMs = opts.nowMs;
    this.noise = noise;
    this.quantization = quantization;
    this.random = opts.random ?? new Random(seedFromString(opts.id));
  }

  /** The plant's value now, plus noise, rounded to the quantization step — unless a fault is injected. */
  async read(): Promise<number> {
    switch (this.fault.kind) {
      case 'stale':
        throw new Error('sensor stale (simulated)');
      case 'error':
        throw new Error(this.fault.message);
      case 'nan':
        return Number.NaN;
      case 'spike':
        return this.fault.value;
      case 'none':
        break;
    }
    const trueValue = this.plant.valueAt(this.nowMs());
    const noisy = this.noise > 0 ? trueValue + this.noise * this.random.gaussian() : trueValue;
    return quantize(noisy, this.quantization);
  }

  /** Makes subsequent reads fail or lie as described by `fault`; `{ kind: 'none' }` restores normal reads. */
  injectFault(fault: SimSensorFault): void {
    this.fault = fault;
  }
}

/** Rounds `value` to a multiple of `step` (0 = unchanged). */
export function quantize(value: number, step: number): number {
  if (step === 0) return value;
  // For steps like 0.1, `round(v / 0.1) * 0.1` gives 20.400000000000002; dividing by the
  // integer 1/step instead yields the closest double to the decimal (20.4).
  const perUnit = Math.round(1 / step);
  if (step < 1 && Math.abs(perUnit * step - 1) < 1e-12) return Math.round(value * perUnit) / perUnit;
  return Math.round(value / step) * step;
}
