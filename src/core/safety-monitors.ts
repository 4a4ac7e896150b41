import type { LatchedFault } from './effect-watch.js';
import type { LoopSpec } from './loop-spec.js';
import { SAFETY_MONITORS } from './monitors/index.js';
import type { AnySafetyMonitor, MonitorInputs, SafetyMemory } from './monitors/types.js';
import type { ActuatorLevel } from './types.js';

export type { CutoffSpec } from './monitors/cutoff.js';
export type { RunawayWatchSpec } from './monitors/runaway-watch.js';
export type { StuckWatchSpec } from './monitors/stuck-watch.js';
export type { MonitorInputs, SafetyMemory } from './monitors/types.js';

/**
 * Safety monitors, checked every cycle after the controller has chosen the levels: the table of
 * monitors/index.ts (cut-off, maximum on-time, stuck watch, runaway watch, start cap), one
 * module each. Each one latches a fault (every actuator safe until a person resets it, like the
 * effect watch), except the start cap, which only holds a relay off. After Marlin (MAXTEMP,
 * thermal runaway once stable), Klipper (max_temp, verify_heater) and ESPHome (climate safety
 * limits), scaled to rooms, chambers and tanks.
 *
 * Pure: functions of the spec, the previous monitor memory, this cycle's inputs and `nowMs`.
 */

export interface MonitorResult {
  /** Undefined when nothing is watched or counted. */
  memory?: SafetyMemory;
  /** A fault to latch this cycle: the loop goes safe at once. */
  fault?: LatchedFault;
  /** Relays whose switch-on is held back this cycle (start cap): level 0, and why. */
  heldOff: Record<string, string>;
  /** When a monitor next needs a cycle (an on-time limit, a held start allowed again). */
  wakeTimes: number[];
}

/**
 * Runs the table: the monitors that hold back first (their held actuators at 0 is what the
 * others see), then the others; the first fault in table order is the one latched.
 */
export function safetyMonitors(
  spec: LoopSpec,
  memory: SafetyMemory | undefined,
  inputs: MonitorInputs,
  nowMs: number,
): MonitorResult {
  const wakeTimes: number[] = [];
  const heldOff: Record<string, string> = {};
  const next: Record<string, unknown> = {};
  const faults = new Map<AnySafetyMonitor, LatchedFault>();
  const levels = { ...inputs.levels };
  const run = (monitor: AnySafetyMonitor) => {
    if (monitor.regulatingOnly && !inputs.regulating) return;
    const verdict = monitor.check(spec, memory, { ...inputs, levels }, nowMs);
    if (monitor.memory && verdict.memory !== undefined) next[monitor.memory.key] = verdict.memory;
    if (verdict.fault) faults.set(monitor, verdict.fault);
    wakeTimes.push(...(verdict.wakeTimes ?? []));
    Object.assign(heldOff, verdict.heldOff);
  };
  const table: readonly AnySafetyMonitor[] = SAFETY_MONITORS;
  for (const monitor of table) if (monitor.phase === 'hold') run(monitor);
  for (const id of Object.keys(heldOff)) levels[id] = 0;
  for (const monitor of table) if (monitor.phase !== 'hold') run(monitor);
  const fault = table.map((monitor) => faults.get(monitor)).find((f) => f !== undefined);
  return {
    ...(Object.keys(next).length > 0 ? { memory: next as SafetyMemory } : {}),
    ...(fault ? { fault } : {}),
    heldOff,
    wakeTimes,
  };
}

/** Each monitor's slot of `memory` through `fn` (its idle, resume or shift); empty: undefined. */
function eachSlot(
  memory: SafetyMemory | undefined,
  fn: (slotOf: NonNullable<AnySafetyMonitor['memory']>, value: never) => unknown,
): SafetyMemory | undefined {
  const next: Record<string, unknown> = {};
  const table: readonly AnySafetyMonitor[] = SAFETY_MONITORS;
  for (const monitor of table) {
    const slotOf = monitor.memory;
    const value = slotOf ? memory?.[slotOf.key] : undefined;
    if (!slotOf || value === undefined) continue;
    const moved = fn(slotOf, value as never);
    if (moved !== undefined) next[slotOf.key] = moved;
  }
  return Object.keys(next).length > 0 ? (next as SafetyMemory) : undefined;
}

/**
 * The monitor memory while the loop is held safe (a fault, mode off): no watch runs and nothing
 * is on. Starts are facts and stay counted for their hour (each monitor's `idle`).
 */
export function idleSafetyMemory(memory: SafetyMemory | undefined): SafetyMemory | undefined {
  return eachSlot(memory, (slotOf, value) => slotOf.idle(value));
}

/**
 * The monitor memory after a restart (each monitor's `resume`): the watches restart, an on-time
 * is kept only for an actuator not seen off, starts in the last hour stay counted.
 */
export function resumeSafetyMemory(
  memory: SafetyMemory | undefined,
  observed: Record<string, ActuatorLevel>,
): SafetyMemory | undefined {
  return eachSlot(memory, (slotOf, value) => slotOf.resume(value, observed));
}

/**
 * The monitor memory with every absolute time moved by `deltaMs` (a wall-clock step, see
 * clock-step.ts), each monitor's `shift`; which fields, SAFETY_MEMORY_TIMES. Without it a step
 * forward of 2 h would count as 2 h on.
 */
export function shiftSafetyMemory(memory: SafetyMemory, deltaMs: number): SafetyMemory {
  return eachSlot(memory, (slotOf, value) => slotOf.shift(value, deltaMs)) ?? {};
}

/** The absolute-time fields of the monitor memory, as paths below `safety.` (`*` = every key). */
export const SAFETY_MEMORY_TIMES: readonly string[] = (
  SAFETY_MONITORS as readonly AnySafetyMonitor[]
).flatMap(({ memory }) => (memory ? memory.shiftedTimes.map((path) => `${memory.key}.${path}`) : []));
