/**
 * Clock jumps and loop memory, in one place.
 *
 * When the wall clock steps (NTP correcting a Raspberry Pi that booted without a real-time
 * clock, a person setting the date), every absolute time a loop remembers is moved by the same
 * amount, so the distance from "now" to each of them — the durations the controller and the
 * watches measure — is what it was before the step. Without it, a step forward of 2 h counted
 * as 2 h of heating without effect (a false latched fault) and a step back held minimum times
 * and retries for the size of the jump.
 *
 * Pure: the runtime learns of the step from its clock and calls this before the next cycle.
 *
 * A jump back the runtime did not notice (a restart with a clock behind the stored memory)
 * shows only as remembered times ahead of now: reconcile clamps them first
 * ({@link clampMemoryToNow}), and the functions that can be called on their own apply the same
 * rule through time.ts (atMostNow, isAheadOfNow).
 */
import type { LoopMemory } from './loop-state.js';
import { SAFETY_MEMORY_TIMES, shiftSafetyMemory } from './safety-monitors.js';
import { atMostNow, isAheadOfNow } from './time.js';
import type { TimeProportioningMemory } from './time-proportioning.js';
import { isActive, requestAbort } from './tuning/autotune.js';

/** Why a running autotune ends when the clock steps. */
export const CLOCK_STEP_ABORT = 'the clock was stepped';

/**
 * `memory` with every absolute time it holds moved by `deltaMs` (positive: the clock stepped
 * forward). Moved (see {@link SHIFTED_MEMORY_TIMES}): relays' `lastSwitchMs` and
 * `windowStartMs`, commands' `atMs`, `lastActiveMs`, the PID's `lastAtMs` (a reading's
 * stamp, moved with the readings), the effect watch's `sinceMs`, and the latched fault's
 * `atMs` (a fault reset compares its own receive time with it: unmoved, a reset sent after a
 * step back would be refused until the clock caught up), and the safety monitors' windows,
 * on-times and start counts (shiftSafetyMemory). Not moved: conditions'
 * `lastTransitionMs`, records of when a status changed, and the autotune's times: a running
 * autotune is asked to abort instead (CLOCK_STEP_ABORT; the next cycle ends it and holds the
 * loop safe, like any abort), because its record's timing is broken whichever way the clock
 * went — moved, its samples would still straddle the step; unmoved, a step forward reads as a
 * long gap and a step back as samples ahead of now. Returns `memory` itself when `deltaMs` is 0.
 */
export function shiftLoopMemory(memory: LoopMemory, deltaMs: number): LoopMemory {
  if (deltaMs === 0 || !Number.isFinite(deltaMs)) return memory;
  const shift = (t: number | undefined) => (t === undefined ? undefined : t + deltaMs);
  const relays: LoopMemory['relays'] = {};
  for (const [id, relay] of Object.entries(memory.relays)) {
    const { windowStartMs, lastSwitchMs, ...rest } = relay;
    relays[id] = {
      ...rest,
      ...(windowStartMs === undefined ? {} : { windowStartMs: windowStartMs + deltaMs }),
      ...(lastSwitchMs === undefined ? {} : { lastSwitchMs: lastSwitchMs + deltaMs }),
    };
  }
  const commands: LoopMemory['commands'] = {};
  for (const [id, command] of Object.entries(memory.commands)) {
    commands[id] = { ...command, atMs: command.atMs + deltaMs };
  }
  const lastActiveMs: LoopMemory['lastActiveMs'] = {};
  for (const direction of ['raise', 'lower'] as const) {
    const t = shift(memory.lastActiveMs[direction]);
    if (t !== undefined) lastActiveMs[direction] = t;
  }
  const { lastAtMs, ...pid } = memory.pid;
  return {
    ...memory,
    relays,
    commands,
    lastActiveMs,
    pid: lastAtMs === undefined ? pid : { ...pid, lastAtMs: lastAtMs + deltaMs },
    ...(memory.effectWatch
      ? { effectWatch: { ...memory.effectWatch, sinceMs: memory.effectWatch.sinceMs + deltaMs } }
      : {}),
    ...(memory.latchedFault
      ? { latchedFault: { ...memory.latchedFault, atMs: memory.latchedFault.atMs + deltaMs } }
      : {}),
    ...(memory.safety ? { safety: shiftSafetyMemory(memory.safety, deltaMs) } : {}),
    ...(isActive(memory.autotune) ? { autotune: requestAbort(memory.autotune, CLOCK_STEP_ABORT) } : {}),
  };
}

/**
 * The absolute-time fields of LoopMemory that {@link shiftLoopMemory} moves, as paths (`*` = every
 * key). A test checks this list against a memory with every field set, so a field added to
 * LoopMemory without being added here fails it.
 */
export const SHIFTED_MEMORY_TIMES = [
  'relays.*.lastSwitchMs',
  'relays.*.windowStartMs',
  'commands.*.atMs',
  'lastActiveMs.raise',
  'lastActiveMs.lower',
  'pid.lastAtMs',
  'effectWatch.sinceMs',
  'latchedFault.atMs',
  // Each safety monitor's own (monitors/*.ts: shiftedTimes).
  ...SAFETY_MEMORY_TIMES.map((path) => `safety.${path}`),
] as const;

/** Absolute-time fields deliberately left alone: records of when something happened. */
export const RECORD_TIMES = ['conditions.*.lastTransitionMs'] as const;

/**
 * Clamps every remembered time to `nowMs`. Times ahead of now mean the clock went back (NTP
 * correcting a Pi without a real-time clock, a restart with a clock behind the stored memory);
 * counted as "now", minimum on/off times, changeover delays and retries hold in full once
 * instead of for the size of the jump, and a window starting "later" is not mistaken for one
 * in progress. Returns `memory` itself when nothing was ahead of now. Not clamped here: the
 * PID's last reading time, the effect watch and the safety monitors' times, which pidStep,
 * watchEffect and safetyMonitors check themselves (they are also called on their own).
 */
export function clampMemoryToNow(memory: LoopMemory, nowMs: number): LoopMemory {
  let changed = false;
  const relays = { ...memory.relays };
  for (const [id, relay] of Object.entries(relays)) {
    const clamped = relayClampedToNow(relay, nowMs);
    if (clamped !== relay) {
      relays[id] = clamped;
      changed = true;
    }
  }
  const commands = { ...memory.commands };
  for (const [id, command] of Object.entries(commands)) {
    if (isAheadOfNow(command.atMs, nowMs)) {
      commands[id] = { ...command, atMs: nowMs };
      changed = true;
    }
  }
  const lastActiveMs = { ...memory.lastActiveMs };
  for (const direction of ['raise', 'lower'] as const) {
    const t = lastActiveMs[direction];
    if (t !== undefined && isAheadOfNow(t, nowMs)) {
      lastActiveMs[direction] = nowMs;
      changed = true;
    }
  }
  // A fault latched "in the future" (stored under a clock that was ahead) counts as latched now:
  // otherwise a person's reset, compared with it, would be refused until the clock caught up.
  const latchedFault =
    memory.latchedFault && isAheadOfNow(memory.latchedFault.atMs, nowMs)
      ? { ...memory.latchedFault, atMs: nowMs }
      : undefined;
  if (latchedFault) changed = true;
  return changed
    ? { ...memory, relays, commands, lastActiveMs, ...(latchedFault ? { latchedFault } : {}) }
    : memory;
}

/**
 * A relay's memory with a switch "later" counted as now and a window starting "later" dropped
 * (the next cycle starts one now, its pulse not yet ended); `relay` itself when neither is ahead.
 */
function relayClampedToNow(relay: TimeProportioningMemory, nowMs: number): TimeProportioningMemory {
  const { windowStartMs, lastSwitchMs } = relay;
  if (!isAheadOfNow(lastSwitchMs ?? 0, nowMs) && !isAheadOfNow(windowStartMs ?? 0, nowMs)) return relay;
  const { windowStartMs: _window, ...rest } = relay;
  const windowInPlace = windowStartMs !== undefined && windowStartMs <= nowMs;
  return {
    ...rest,
    ...(windowInPlace ? { windowStartMs } : {}),
    ...(lastSwitchMs === undefined ? {} : { lastSwitchMs: atMostNow(lastSwitchMs, nowMs) }),
    pulseEnded: windowInPlace ? relay.pulseEnded : false,
  };
}
