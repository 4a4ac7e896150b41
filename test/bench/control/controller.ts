/**
 * The shape every benchmarked controller takes in the simulation loop, whatever its origin
 * (homeostat, a peer package, Home Assistant's rule, the time-optimal bound).
 */
import type { PlantSpec, Tuning } from './plants.js';

export interface BenchController {
  /** A sensor reading at a sampling instant (`atMs` on the simulated clock). */
  onReading(measured: number, setpoint: number, atMs: number): void;
  /**
   * Actuator level to apply from `atMs`, 0..1 (relays 0 or 1); called every plant step (1 s).
   * The loop clamps it to 0..1: the actuator saturates whatever a controller asks.
   */
  levelAt(atMs: number): number;
  /**
   * Optional, for controllers that switch at exact instants (the bound): the time of a level
   * change strictly inside (afterMs, beforeMs), which the loop then applies at that time.
   */
  changeBetween?(afterMs: number, beforeMs: number): number | undefined;
}

/** What a controller is told when it is built, at the start of a run. */
export interface ControllerContext {
  plant: PlantSpec;
  tuning: Tuning;
  setpoint: number;
  startMs: number;
  /** When the load disturbance hits and its offset (the bound is an oracle and knows it). */
  disturbance?: { atMs: number; offsetC: number };
}

export interface ControllerSpec {
  id: string;
  /** Which actuator kinds it can drive. */
  actuators: readonly PlantSpec['actuator'][];
  /** True for the bound: it holds a continuous level even on a relay plant, so it has no switches. */
  oracle?: boolean;
  /** How it is set up, printed under the table. */
  note: string;
  create(context: ControllerContext): BenchController;
}
