/**
 * A loop run through the full reconcile against a simulated plant (FopdtPlant): a sensor read
 * every `readingEveryS` (seeded noise, quantisation) and each result's wake-up trigger cycles,
 * like the runtime; actuators obey, and each wanted level drives the plant's input of the same
 * name. For the autotune's integration tests.
 */

import type { LoopSpec } from '../../../src/core/loop-spec.js';
import {
  initialLoopMemory,
  type LoopDesired,
  type LoopMemory,
  type ReconcileResult,
  reconcile,
} from '../../../src/core/reconcile.js';
import type { ActuatorLevel, Reading } from '../../../src/core/types.js';
import { FopdtPlant } from '../../../src/drivers/sim/plant.js';
import { Random } from '../../../src/drivers/sim/random.js';

export interface PlantLoopParams {
  ambient: number;
  timeConstantS: number;
  deadTimeS: number;
  /** Gain of each actuator on the plant (negative for a cooler). */
  gains: Record<string, number>;
  /** Value at the start; default ambient. */
  initial?: number;
  /** Each actuator's level before the start (the plant at rest with them). */
  levels?: Record<string, number>;
  noise?: number;
  quantization?: number;
  seed?: number;
  readingEveryS?: number;
  /** A second lag after the FOPDT plant, s (the second-order benchmark plant). */
  secondLagS?: number;
}

export interface LoopCycle {
  atMs: number;
  reading: Reading | undefined;
  result: ReconcileResult;
}

export class PlantLoop {
  memory: LoopMemory = initialLoopMemory();
  actuators: Record<string, ActuatorLevel>;
  nowMs: number;
  readonly plant: FopdtPlant;
  /**
   * The wall clock's lead over the plant's time, ms: a wall-clock step changes it (the plant
   * goes on; readings are stamped, and reconcile called, with the wall clock).
   */
  clockOffsetMs = 0;
  /** Changes the reading a cycle sees (sensor lost, stale): undefined = none. */
  sensor: (reading: Reading, nowMs: number) => Reading | undefined = (r) => r;
  private readonly random: Random;
  private sampled: Reading | undefined;
  private lagged: { value: number; atMs: number } | undefined;

  constructor(
    public spec: LoopSpec,
    public desired: LoopDesired,
    readonly params: PlantLoopParams,
    startMs: number,
  ) {
    this.nowMs = startMs;
    this.random = new Random(params.seed ?? 1);
    this.plant = new FopdtPlant(
      {
        ambient: params.ambient,
        timeConstantS: params.timeConstantS,
        deadTimeS: params.deadTimeS,
        initial: params.initial ?? params.ambient,
      },
      startMs,
    );
    this.actuators = { ...(params.levels ?? {}) };
    for (const [id, gain] of Object.entries(params.gains))
      this.plant.addInput(id, gain, params.levels?.[id] ?? 0);
  }

  /** The latest reading at `nowMs` (sampled on the reading grid). */
  private readingAt(nowMs: number): Reading {
    const everyMs = (this.params.readingEveryS ?? 5) * 1000;
    const atMs = Math.floor(nowMs / everyMs) * everyMs;
    if (this.sampled?.atMs !== atMs) {
      const q = this.params.quantization ?? 0.0625;
      const exact = this.valueAt(atMs) + (this.params.noise ?? 0.05) * this.random.gaussian();
      this.sampled = { value: q > 0 ? Math.round(exact / q) * q : exact, atMs };
    }
    return this.sampled;
  }

  /** The plant's value (no noise): the FOPDT's, or a second lag on it integrated in 0.5 s steps. */
  valueAt(atMs: number): number {
    const lagS = this.params.secondLagS;
    if (lagS === undefined) return this.plant.valueAt(atMs);
    let { value, atMs: lastMs } = this.lagged ?? { value: this.plant.valueAt(atMs), atMs };
    while (lastMs < atMs) {
      const toMs = Math.min(atMs, lastMs + 500);
      const u = (this.plant.valueAt(lastMs) + this.plant.valueAt(toMs)) / 2;
      value = u + (value - u) * Math.exp(-(toMs - lastMs) / 1000 / lagS);
      lastMs = toMs;
    }
    this.lagged = { value, atMs: lastMs };
    return value;
  }

  /** One cycle now. */
  cycle(): LoopCycle {
    const nowMs = this.nowMs;
    const offset = this.clockOffsetMs;
    const sampled = this.readingAt(nowMs);
    const reading = this.sensor({ ...sampled, atMs: sampled.atMs + offset }, nowMs + offset);
    const result = reconcile(
      this.spec,
      this.desired,
      { ...(reading ? { reading } : {}), actuators: this.actuators },
      this.memory,
      nowMs + offset,
    );
    this.memory = result.memory;
    // The second lag integrates the plant's value up to now before an input changes (the plant
    // cannot be asked about the past).
    if (this.params.secondLagS !== undefined) this.valueAt(nowMs);
    for (const [id, level] of Object.entries(result.wanted)) {
      if (this.actuators[id] !== level) this.plant.setInput(id, level, nowMs);
      this.actuators[id] = level;
    }
    const everyMs = (this.params.readingEveryS ?? 5) * 1000;
    const nextReadingMs = (Math.floor(nowMs / everyMs) + 1) * everyMs;
    this.nowMs = Math.min(Math.max(result.nextWakeMs - offset, nowMs + 1), nextReadingMs);
    return { atMs: nowMs, reading, result };
  }

  /** Cycles until `stop` says so or `untilMs`; returns every cycle. */
  run(untilMs: number, stop: (cycle: LoopCycle) => boolean = () => false): LoopCycle[] {
    const cycles: LoopCycle[] = [];
    while (this.nowMs <= untilMs) {
      const c = this.cycle();
      cycles.push(c);
      if (stop(c)) break;
    }
    return cycles;
  }
}
