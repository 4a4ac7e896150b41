/**
 * What a safety monitor is (the pure part): one module per monitor in this folder, listed in
 * index.ts, run by safety-monitors.ts every cycle after the controller chose the levels. Its
 * schema, defaults, config checks and docs are its config part (kinds/monitors/), registered
 * by the same name. Modelled on Klipper's verify_heater: a spec, a check, a fault message.
 */
import type { LatchedFault } from '../effect-watch.js';
import type { LoopSpec } from '../loop-spec.js';
import type { ActuatorLevel, Direction } from '../types.js';

/** What the monitors remember between cycles, one slot per monitor. Every `…Ms` is an absolute time, ms. */
export interface SafetyMemory {
  /** Stuck watch: per direction whose actuator is commanded off, since when and the extreme value since. */
  stuck?: Partial<Record<Direction, { offSinceMs: number; extreme: number }>>;
  /** Runaway watch: armed once converged at `setpoint`; `outsideSinceMs` while outside the band at saturation. */
  runaway?: { setpoint: number; outsideSinceMs?: number };
  /** Maximum on-time: per limited actuator (maxOnMs or maxStartsPerHour), above 0 continuously since. */
  onSinceMs?: Record<string, number>;
  /** Start cap: per relay with maxStartsPerHour, its switch-ons within the last hour, oldest first. */
  startsMs?: Record<string, number[]>;
}

export interface MonitorInputs {
  /** The reading used this cycle (fresh and plausible), or undefined. */
  value: number | undefined;
  setpoint: number;
  /** The controller ran this cycle (not off, no sensor fault, interlock or latched fault). */
  regulating: boolean;
  /** Signed controller output this cycle, −1..1. */
  output: number;
  /** Level each actuator is wanted at this cycle (regulated or safe). */
  levels: Record<string, number>;
  /** Level each actuator reports now. */
  observed: Record<string, ActuatorLevel>;
  /** What each actuator was last commanded (before this cycle). */
  lastCommanded: Record<string, { level: number } | undefined>;
  /** |setpoint − value| within this counts as converged (arms the runaway watch). */
  convergedBand: number;
}

/** One monitor's verdict on one cycle. */
export interface MonitorVerdict<Slot> {
  /** Its slot for the next cycle; undefined when it watches or counts nothing. */
  memory?: Slot;
  /** A fault to latch this cycle: the loop goes safe at once. */
  fault?: LatchedFault;
  /** Actuators held at 0 this cycle and why (a monitor that holds back, not latches). */
  heldOff?: Record<string, string>;
  /** When it next needs a cycle (a period that ends, a held start allowed again). */
  wakeTimes?: number[];
}

/** How a monitor's slot of SafetyMemory lives on: while held safe, across a restart, a clock step. */
export interface MonitorSlot<Slot extends keyof SafetyMemory> {
  /** Its key in SafetyMemory. */
  key: Slot;
  /** The slot while the loop is held safe (a fault, mode off); undefined: forgotten. */
  idle(slot: NonNullable<SafetyMemory[Slot]>): SafetyMemory[Slot] | undefined;
  /** The slot after a restart, with what the actuators are doing now; undefined: forgotten. */
  resume(
    slot: NonNullable<SafetyMemory[Slot]>,
    observed: Record<string, ActuatorLevel>,
  ): SafetyMemory[Slot] | undefined;
  /** The slot with every absolute time moved by `deltaMs` (a wall-clock step, clock-step.ts). */
  shift(slot: NonNullable<SafetyMemory[Slot]>, deltaMs: number): NonNullable<SafetyMemory[Slot]>;
  /** The paths of those times within the slot (`*` = every key), for SHIFTED_MEMORY_TIMES. */
  shiftedTimes: readonly string[];
}

export interface SafetyMonitor<Slot extends keyof SafetyMemory = keyof SafetyMemory> {
  /** Its name, the key of its config part (kinds/monitors/registry.ts). */
  name: string;
  /** The LatchedFault reasons it can latch. */
  reasons: readonly LatchedFault['reason'][];
  /**
   * 'hold' runs first and may hold actuators at 0 (what the others then see); 'latch' may latch
   * a fault. `regulatingOnly`: checked only while the controller runs (the value is its doing).
   */
  phase: 'hold' | 'latch';
  regulatingOnly?: boolean;
  /** What it remembers between cycles; absent: nothing. */
  memory?: MonitorSlot<Slot>;
  /**
   * The pure check: this cycle's verdict from the spec, the previous memory (every slot, its
   * own to write), the inputs (levels after the holds) and now.
   */
  check(
    spec: LoopSpec,
    memory: SafetyMemory | undefined,
    inputs: MonitorInputs,
    nowMs: number,
  ): MonitorVerdict<SafetyMemory[Slot]>;
}

/**
 * Any monitor of the table, whatever its slot: what the runner (safety-monitors.ts) relies on.
 * A slot's functions take `never` so that every monitor's own, typed for its slot, fits.
 */
export interface AnySafetyMonitor extends Omit<SafetyMonitor, 'memory' | 'check'> {
  memory?: {
    key: keyof SafetyMemory;
    idle(slot: never): unknown;
    resume(slot: never, observed: Record<string, ActuatorLevel>): unknown;
    shift(slot: never, deltaMs: number): unknown;
    shiftedTimes: readonly string[];
  };
  check(
    spec: LoopSpec,
    memory: SafetyMemory | undefined,
    inputs: MonitorInputs,
    nowMs: number,
  ): MonitorVerdict<unknown>;
}

/** Identity helper that ties a monitor's functions to its slot's type and keeps its name literal. */
export function safetyMonitor<
  const Name extends string,
  Slot extends keyof SafetyMemory = keyof SafetyMemory,
>(monitor: SafetyMonitor<Slot> & { name: Name }): SafetyMonitor<Slot> & { name: Name } {
  return monitor;
}

/** `record` with `fn` applied to each value. */
export function mapValues<A, B>(record: Record<string, A>, fn: (value: A) => B): Record<string, B> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));
}

/** `record`, or undefined when it is empty (a slot with nothing in it is no slot). */
export function nonEmpty<T extends object>(record: T): T | undefined {
  return Object.keys(record).length > 0 ? record : undefined;
}
