import type { LatchedFault } from './effect-watch.js';
import { type ActuatorSpec, type LoopSpec, loopActuators } from './loop-spec.js';
import { FULL_OUTPUT, isOn, roundHundredths } from './numbers.js';
import { atMostNow, formatDuration, HOUR_MS } from './time.js';
import type { ActuatorLevel, Direction } from './types.js';

/**
 * Safety monitors, checked every cycle after the controller has chosen the levels. Each one
 * latches a fault (every actuator safe until a person resets it, like the effect watch), except
 * the start cap, which only holds a relay off. After Marlin (MAXTEMP, thermal runaway once
 * stable), Klipper (max_temp, verify_heater) and ESPHome (climate safety limits), scaled to
 * rooms, chambers and tanks.
 *
 * - Cut-off: the value is at or beyond an absolute limit while an actuator that pushes further
 *   is on (wanted, commanded or reported on): the loop never heats at or above `max`, never cools
 *   at or below `min`. Beyond the limit with every pushing actuator off (the sun on a greenhouse,
 *   a hot cellar) is not the loop's doing: nothing latches, and a cooler keeps cooling.
 * - Stuck watch (welded relay, stuck plug): a direction's actuator has been commanded off for
 *   `periodMs`, yet the value kept moving that way by `minChange` from its extreme since, and is
 *   now `minChange` past the setpoint. Off by default: a room in the sun or a fermenting beer
 *   does that on its own.
 * - Runaway watch: once converged at the current setpoint, the value stays more than `band` from
 *   it for `periodMs` while the output is saturated towards it (a probe out of the tank, a
 *   heater lost). Above the band with the heater off is the stuck watch's case.
 * - Maximum on-time per actuator: on (above 0) continuously for `maxOnMs` latches the fault: an
 *   actuator that runs that long means a fault (a pump running dry, a leak, a door left open);
 *   a forced rest would only restart it into the same fault.
 * - Start cap per relay: at most `maxStartsPerHour` switch-ons in any hour; a further start is
 *   held back (the relay stays off) until the oldest leaves the hour. Off is always allowed.
 *
 * Pure: functions of the spec, the previous monitor memory, this cycle's inputs and `nowMs`.
 */

/** An absolute limit on the value (loop unit); either side may be absent. */
export interface CutoffSpec {
  min?: number;
  max?: number;
}

export interface StuckWatchSpec {
  /** How long a direction must have been commanded off before its movement counts, ms. */
  periodMs: number;
  /** The movement (loop unit), from the extreme since off and past the setpoint, that latches. */
  minChange: number;
}

export interface RunawayWatchSpec {
  /** Distance from the setpoint (loop unit) that counts as out of control once converged. */
  band: number;
  /** How long the value may stay outside the band at saturated output, ms. */
  periodMs: number;
}

/** What the monitors remember between cycles. Every `…Ms` is an absolute time, ms. */
export interface SafetyMemory {
  /** Per direction whose actuator is commanded off: since when, and the extreme value since. */
  stuck?: Partial<Record<Direction, { offSinceMs: number; extreme: number }>>;
  /** Armed once converged at `setpoint`; `outsideSinceMs` while outside the band at saturation. */
  runaway?: { setpoint: number; outsideSinceMs?: number };
  /** Per limited actuator (maxOnMs or maxStartsPerHour): above 0 continuously since. */
  onSinceMs?: Record<string, number>;
  /** Per relay with maxStartsPerHour: its switch-ons within the last hour, oldest first. */
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

export function safetyMonitors(
  spec: LoopSpec,
  memory: SafetyMemory | undefined,
  inputs: MonitorInputs,
  nowMs: number,
): MonitorResult {
  const wakeTimes: number[] = [];
  const starts = capStarts(spec, memory, inputs.levels, nowMs, wakeTimes);
  const levels = { ...inputs.levels };
  for (const id of Object.keys(starts.heldOff)) levels[id] = 0;
  const onTime = watchOnTime(spec, memory, levels, nowMs, wakeTimes);
  const stuck = inputs.regulating ? watchStuck(spec, memory, { ...inputs, levels }, nowMs, wakeTimes) : {};
  const runaway = inputs.regulating ? watchRunaway(spec, memory, inputs, nowMs, wakeTimes) : {};
  const next: SafetyMemory = {
    ...(stuck.memory ? { stuck: stuck.memory } : {}),
    ...(runaway.memory ? { runaway: runaway.memory } : {}),
    ...(onTime.memory ? { onSinceMs: onTime.memory } : {}),
    ...(starts.memory ? { startsMs: starts.memory } : {}),
  };
  // The most urgent first: a value past its absolute limit.
  const fault =
    cutoffFault(spec, { ...inputs, levels }, nowMs) ?? onTime.fault ?? stuck.fault ?? runaway.fault;
  return {
    ...(Object.keys(next).length > 0 ? { memory: next } : {}),
    ...(fault ? { fault } : {}),
    heldOff: starts.heldOff,
    wakeTimes,
  };
}

/**
 * The monitor memory while the loop is held safe (a fault, mode off): no watch runs and nothing
 * is on. Starts are facts and stay counted for their hour.
 */
export function idleSafetyMemory(memory: SafetyMemory | undefined): SafetyMemory | undefined {
  return memory?.startsMs ? { startsMs: memory.startsMs } : undefined;
}

/** A limit applies to actuators whose safe level is off: "on" means away from safe. */
function limited(actuator: ActuatorSpec): boolean {
  return (
    actuator.safeLevel === 0 && (actuator.maxOnMs !== undefined || actuator.maxStartsPerHour !== undefined)
  );
}

function cutoffFault(
  spec: LoopSpec,
  inputs: Pick<MonitorInputs, 'value' | 'levels' | 'observed' | 'lastCommanded'>,
  nowMs: number,
): LatchedFault | undefined {
  const { cutoff } = spec;
  const value = inputs.value;
  if (cutoff === undefined || value === undefined) return undefined;
  const pushing = (actuator: ActuatorSpec | undefined) =>
    actuator !== undefined &&
    (isOn(inputs.levels[actuator.id]) ||
      isOn(inputs.observed[actuator.id]) ||
      isOn(inputs.lastCommanded[actuator.id]?.level));
  if (cutoff.max !== undefined && value >= cutoff.max && pushing(spec.raise)) {
    return {
      reason: 'AboveCutoff',
      message: `${value} reached the cut-off ${cutoff.max} with ${spec.raise!.id} on: find out why it ran this high, then reset the fault once the value is below ${cutoff.max}`,
      atMs: nowMs,
    };
  }
  if (cutoff.min !== undefined && value <= cutoff.min && pushing(spec.lower)) {
    return {
      reason: 'BelowCutoff',
      message: `${value} reached the cut-off ${cutoff.min} with ${spec.lower!.id} on: find out why it ran this low, then reset the fault once the value is above ${cutoff.min}`,
      atMs: nowMs,
    };
  }
  return undefined;
}

function watchOnTime(
  spec: LoopSpec,
  memory: SafetyMemory | undefined,
  levels: Record<string, number>,
  nowMs: number,
  wakeTimes: number[],
): { memory?: Record<string, number>; fault?: LatchedFault } {
  const onSinceMs: Record<string, number> = {};
  let fault: LatchedFault | undefined;
  for (const { actuator } of loopActuators(spec)) {
    if (!limited(actuator) || (levels[actuator.id] ?? 0) <= 0) continue;
    // A time ahead of now means the clock went back: count it as now (the limit holds in full).
    const sinceMs = atMostNow(memory?.onSinceMs?.[actuator.id] ?? nowMs, nowMs);
    onSinceMs[actuator.id] = sinceMs;
    if (actuator.maxOnMs === undefined) continue;
    if (nowMs - sinceMs < actuator.maxOnMs) {
      wakeTimes.push(sinceMs + actuator.maxOnMs);
    } else {
      fault ??= {
        reason: 'MaxOnTime',
        message: `${actuator.id} has been on for ${formatDuration(nowMs - sinceMs)} (limit ${formatDuration(actuator.maxOnMs)}): check the plant (a leak, a pump running dry, a door left open), then reset the fault`,
        atMs: nowMs,
      };
    }
  }
  return { ...(Object.keys(onSinceMs).length > 0 ? { memory: onSinceMs } : {}), ...(fault ? { fault } : {}) };
}

function capStarts(
  spec: LoopSpec,
  memory: SafetyMemory | undefined,
  levels: Record<string, number>,
  nowMs: number,
  wakeTimes: number[],
): { memory?: Record<string, number[]>; heldOff: Record<string, string> } {
  const startsMs: Record<string, number[]> = {};
  const heldOff: Record<string, string> = {};
  for (const { actuator } of loopActuators(spec)) {
    const cap = actuator.maxStartsPerHour;
    if (actuator.kind !== 'relay' || cap === undefined || !limited(actuator)) continue;
    const recent = (memory?.startsMs?.[actuator.id] ?? [])
      .map((t) => atMostNow(t, nowMs))
      .filter((t) => t > nowMs - HOUR_MS);
    const wasOn = memory?.onSinceMs?.[actuator.id] !== undefined;
    if (isOn(levels[actuator.id]) && !wasOn) {
      if (recent.length >= cap) {
        const allowedAtMs = recent[0]! + HOUR_MS;
        heldOff[actuator.id] =
          `start held back: ${recent.length} starts in the last hour (maxStartsPerHour ${cap}), next allowed in ${formatDuration(allowedAtMs - nowMs)}`;
        wakeTimes.push(allowedAtMs);
      } else {
        recent.push(nowMs);
      }
    }
    if (recent.length > 0) startsMs[actuator.id] = recent;
  }
  return { ...(Object.keys(startsMs).length > 0 ? { memory: startsMs } : {}), heldOff };
}

/**
 * A watch that may latch a fault: its memory for the next cycle and its fault, if any. It pushes
 * the times it next needs a cycle onto `wakeTimes`.
 */
type LatchingWatch<Memory> = (
  spec: LoopSpec,
  memory: SafetyMemory | undefined,
  inputs: MonitorInputs,
  nowMs: number,
  wakeTimes: number[],
) => { memory?: Memory; fault?: LatchedFault };

const watchStuck: LatchingWatch<SafetyMemory['stuck']> = (spec, memory, inputs, nowMs, wakeTimes) => {
  const watch = spec.stuckWatch;
  const value = inputs.value;
  if (watch === undefined || value === undefined) return {};
  const stuck: NonNullable<SafetyMemory['stuck']> = {};
  let fault: LatchedFault | undefined;
  for (const { direction, actuator } of loopActuators(spec)) {
    if (isOn(inputs.levels[actuator.id])) continue;
    const sign = direction === 'raise' ? 1 : -1;
    const before = memory?.stuck?.[direction];
    const offSinceMs = atMostNow(before?.offSinceMs ?? nowMs, nowMs);
    // The extreme against the direction: the lowest value since a heater went off.
    const extreme =
      before === undefined
        ? value
        : sign > 0
          ? Math.min(before.extreme, value)
          : Math.max(before.extreme, value);
    stuck[direction] = { offSinceMs, extreme };
    const moved = (value - extreme) * sign;
    const past = (value - inputs.setpoint) * sign;
    if (nowMs - offSinceMs < watch.periodMs) {
      wakeTimes.push(offSinceMs + watch.periodMs);
    } else if (moved >= watch.minChange && past >= watch.minChange) {
      const verb = sign > 0 ? 'rose' : 'fell';
      fault ??= {
        reason: 'StuckOn',
        message: `${actuator.id} has been commanded off for ${formatDuration(nowMs - offSinceMs)}, yet the value ${verb} by ${roundHundredths(moved)} to ${value} (setpoint ${inputs.setpoint}): a welded relay or a plug that does not switch off? Check it, then reset the fault`,
        atMs: nowMs,
      };
    }
  }
  return { ...(Object.keys(stuck).length > 0 ? { memory: stuck } : {}), ...(fault ? { fault } : {}) };
};

const watchRunaway: LatchingWatch<SafetyMemory['runaway']> = (spec, memory, inputs, nowMs, wakeTimes) => {
  const watch = spec.runawayWatch;
  const value = inputs.value;
  if (watch === undefined || value === undefined) return {};
  const error = inputs.setpoint - value;
  const armed = memory?.runaway?.setpoint === inputs.setpoint ? memory.runaway : undefined;
  // Not yet converged at this setpoint (a start, a new setpoint): the approach is the effect
  // watch's business.
  if (armed === undefined) {
    return Math.abs(error) <= inputs.convergedBand ? { memory: { setpoint: inputs.setpoint } } : {};
  }
  const saturatedTowards = error > 0 ? inputs.output >= FULL_OUTPUT : inputs.output <= -FULL_OUTPUT;
  if (Math.abs(error) <= watch.band || !saturatedTowards) return { memory: { setpoint: inputs.setpoint } };
  const outsideSinceMs = atMostNow(armed.outsideSinceMs ?? nowMs, nowMs);
  if (nowMs - outsideSinceMs < watch.periodMs) {
    wakeTimes.push(outsideSinceMs + watch.periodMs);
    return { memory: { setpoint: inputs.setpoint, outsideSinceMs } };
  }
  return {
    fault: {
      reason: 'Runaway',
      message: `${value} has stayed more than ${watch.band} from the setpoint ${inputs.setpoint} for ${formatDuration(nowMs - outsideSinceMs)} at full ${error > 0 ? 'raise' : 'lower'} output, after it had converged: check the sensor is in place and the actuator works, then reset the fault`,
      atMs: nowMs,
    },
  };
};

/**
 * The monitor memory with every absolute time moved by `deltaMs` (a wall-clock step, see
 * clock-step.ts): `stuck.<direction>.offSinceMs`, `runaway.outsideSinceMs`, `onSinceMs.<id>`
 * and each of `startsMs.<id>[]`. Without it a step forward of 2 h would count as 2 h on.
 */
export function shiftSafetyMemory(memory: SafetyMemory, deltaMs: number): SafetyMemory {
  const mapValues = <A, B>(record: Record<string, A>, fn: (value: A) => B): Record<string, B> =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));
  const { stuck, runaway, onSinceMs, startsMs } = memory;
  return {
    ...(stuck
      ? { stuck: mapValues(stuck, (window) => ({ ...window!, offSinceMs: window!.offSinceMs + deltaMs })) }
      : {}),
    ...(runaway
      ? {
          runaway: {
            setpoint: runaway.setpoint,
            ...(runaway.outsideSinceMs === undefined
              ? {}
              : { outsideSinceMs: runaway.outsideSinceMs + deltaMs }),
          },
        }
      : {}),
    ...(onSinceMs ? { onSinceMs: mapValues(onSinceMs, (t) => t + deltaMs) } : {}),
    ...(startsMs ? { startsMs: mapValues(startsMs, (list) => list.map((t) => t + deltaMs)) } : {}),
  };
}
