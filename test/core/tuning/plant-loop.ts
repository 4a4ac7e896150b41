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
  /** Changes the reading a cycle sees (sensor lost, stale): undefined = none. */
  sensor: (reading: Reading, nowMs: number) => Reading | undefined = (r) => r;
  private readonly random: Random;
  private sampled: Reading | undefined;

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
      const exact = this.plant.valueAt(atMs) + (this.params.noise ?? 0.05) * this.random.gaussian();
      this.sampled = { value: q > 0 ? Math.round(exact / q) * q : exact, atMs };
    }
    return this.sampled;
  }

  /** One cycle now. */
  cycle(): LoopCycle {
    const nowMs = this.nowMs;
    const reading = this.sensor(this.readingAt(nowMs), nowMs);
    const result = reconcile(
      this.spec,
      this.desired,
      { ...(reading ? { reading } : {}), actuators: this.actuators },
      this.memory,
      nowMs,
    );
    this.memory = result.memory;
    for (const [id, level] of Object.entries(result.wanted)) {
      if (this.actuators[id] !== level) this.plant.setInput(id, level, nowMs);
      this.actuators[id] = level;
    }
    const everyMs = (this.params.readingEveryS ?? 5) * 1000;
    const nextReadingMs = (Math.floor(nowMs / everyMs) + 1) * everyMs;
    this.nowMs = Math.min(Math.max(result.nextWakeMs, nowMs + 1), nextReadingMs);
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
