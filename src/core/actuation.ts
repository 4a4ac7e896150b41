import { levelOnGrid } from './command.js';
import { dutyBand } from './duty-band.js';
import type { ActuatorSpec, LoopSpec } from './loop-spec.js';
import { loopActuators } from './loop-spec.js';
import { isOn } from './numbers.js';
import {
  holdForMinimumTimes,
  type TimeProportioningMemory,
  type TimeProportioningParams,
  timeProportion,
  timeProportioningInitialMemory,
} from './time-proportioning.js';
import type { Direction } from './types.js';

/** Relay timing when an actuator gives none: 10 min windows, no minimum times. */
const DEFAULT_RELAY_TIMING: TimeProportioningParams = { windowMs: 600_000, minOnMs: 0, minOffMs: 0 };

type RelayMemories = Record<string, TimeProportioningMemory>;

/** Levels a regulating loop wants, the relay memory they leave and when they change by themselves. */
export interface RegulatedLevels {
  levels: Record<string, number>;
  relays: RelayMemories;
  wakeTimes: number[];
}

/**
 * From the signed controller output to each actuator's level: split range (with the changeover
 * delay), then each actuator's modulation (relays: duty band, time-proportioning or minimum
 * times; continuous: the duty itself). `switching` 'direct' (the autotune's relay) switches a
 * relay on any duty above 0 at once, minimum times still holding, as under a hysteresis
 * controller.
 */
export function regulatedLevels(
  spec: LoopSpec,
  memory: { output: number; relays: RelayMemories; lastActiveMs: Partial<Record<Direction, number>> },
  nowMs: number,
  switching: 'modulated' | 'direct' = 'modulated',
): RegulatedLevels {
  const controllerType = switching === 'direct' ? 'hysteresis' : spec.controller.type;
  const split = splitRange(spec, memory.output, memory.lastActiveMs, nowMs);
  const wakeTimes = split.wakeAtMs === undefined ? [] : [split.wakeAtMs];
  const relays = { ...memory.relays };
  // The idle direction first: a relay its minimum on time still holds on keeps the other
  // direction off (its release time is already a wake time), so the two never both run.
  const idleFirst = loopActuators(spec).sort((a, b) => split.duties[a.direction] - split.duties[b.direction]);
  const computed: Record<string, number> = {};
  for (const { direction, actuator } of idleFirst) {
    const opposite = direction === 'raise' ? spec.lower : spec.raise;
    const oppositeOn = opposite !== undefined && isOn(computed[opposite.id]);
    const duty = oppositeOn ? 0 : split.duties[direction];
    const result = actuatorLevel(actuator, duty, relays[actuator.id], nowMs, controllerType);
    computed[actuator.id] = result.level;
    if (result.relay) relays[actuator.id] = result.relay;
    if (result.wakeAtMs !== undefined) wakeTimes.push(result.wakeAtMs);
  }
  const levels: Record<string, number> = {};
  for (const { actuator } of loopActuators(spec)) levels[actuator.id] = computed[actuator.id]!;
  return { levels, relays, wakeTimes };
}

/**
 * Splits the signed output between the raise and lower actuators. They are never both above
 * 0, and one direction may start only `changeoverMs` after the other was last active, so a
 * heater and a compressor never fight and the compressor is not started right after heating.
 * `lastActiveMs` is never ahead of now: reconcile clamps the memory first (clampMemoryToNow).
 */
export function splitRange(
  spec: LoopSpec,
  output: number,
  lastActiveMs: Partial<Record<Direction, number>>,
  nowMs: number,
): { duties: Record<Direction, number>; wakeAtMs?: number } {
  const wantDirection: Direction | undefined = output > 0 ? 'raise' : output < 0 ? 'lower' : undefined;
  if (wantDirection === undefined) return { duties: { raise: 0, lower: 0 } };
  const other: Direction = wantDirection === 'raise' ? 'lower' : 'raise';
  const otherActiveMs = lastActiveMs[other];
  const hasOther = other === 'raise' ? spec.raise !== undefined : spec.lower !== undefined;
  if (hasOther && otherActiveMs !== undefined && nowMs - otherActiveMs < spec.changeoverMs) {
    return { duties: { raise: 0, lower: 0 }, wakeAtMs: otherActiveMs + spec.changeoverMs };
  }
  const duty = Math.abs(output);
  return { duties: wantDirection === 'raise' ? { raise: duty, lower: 0 } : { raise: 0, lower: duty } };
}

/**
 * Level for one actuator: under a PID, relays through the duty band when the actuator has one,
 * else time-proportioning; under hysteresis, the on/off decision with minimum times only.
 * Returns the relay's new memory (relays only) and when it next changes by itself, if it does.
 */
export function actuatorLevel(
  actuator: ActuatorSpec,
  duty: number,
  relay: TimeProportioningMemory | undefined,
  nowMs: number,
  controllerType: 'pid' | 'hysteresis',
): { level: number; relay?: TimeProportioningMemory; wakeAtMs?: number } {
  // On the act step's grid (command.ts): a coarser rounding here would be a deadband again.
  if (actuator.kind === 'continuous') return { level: levelOnGrid(duty) };
  const params = actuator.timeProportioning ?? DEFAULT_RELAY_TIMING;
  const memory = relay ?? timeProportioningInitialMemory();
  if (controllerType === 'pid' && actuator.band !== undefined) {
    const result = dutyBand(duty, memory, nowMs, { ...params, halfBand: actuator.band.halfBand });
    return relayResult(result.on, result.memory, result.nextChangeMs);
  }
  if (controllerType === 'pid') {
    const result = timeProportion(duty, memory, nowMs, params);
    return relayResult(result.on, result.memory, result.nextChangeMs);
  }
  const held = holdForMinimumTimes(duty > 0, memory.isOn, memory.lastSwitchMs, nowMs, params);
  return relayResult(held.on, switchedRelayMemory(memory, held.on, nowMs), held.untilMs);
}

function relayResult(
  on: boolean,
  relay: TimeProportioningMemory,
  wakeAtMs: number | undefined,
): { level: number; relay: TimeProportioningMemory; wakeAtMs?: number } {
  return { level: on ? 1 : 0, relay, ...(wakeAtMs === undefined ? {} : { wakeAtMs }) };
}

/**
 * Regulation resumes (start, mode on, fault cleared): relays begin a fresh window at once, so
 * a pulse cut short by the fault does not keep a cold heater off until the next window.
 * Minimum on/off times still hold (lastSwitchMs is kept).
 */
export function restartRelayWindows(spec: LoopSpec, relays: RelayMemories): RelayMemories {
  const restarted = { ...relays };
  for (const { actuator } of loopActuators(spec)) {
    const memory = relays[actuator.id];
    if (actuator.kind !== 'relay' || memory === undefined) continue;
    const { windowStartMs: _dropped, ...rest } = memory;
    restarted[actuator.id] = { ...rest, pulseEnded: false };
  }
  return restarted;
}

/**
 * Every actuator at its safe level. Safe state overrides minimum on times: each relay's switch is
 * recorded so minimum off times still hold.
 */
export function safeLevels(
  spec: LoopSpec,
  relays: RelayMemories,
  nowMs: number,
): { levels: Record<string, number>; relays: RelayMemories } {
  const levels: Record<string, number> = {};
  const forced = { ...relays };
  for (const { actuator } of loopActuators(spec)) {
    levels[actuator.id] = actuator.safeLevel;
    if (actuator.kind !== 'relay') continue;
    const memory = forced[actuator.id] ?? timeProportioningInitialMemory();
    forced[actuator.id] = switchedRelayMemory(memory, actuator.safeLevel > 0, nowMs);
  }
  return { levels, relays: forced };
}

function switchedRelayMemory(
  memory: TimeProportioningMemory,
  on: boolean,
  nowMs: number,
): TimeProportioningMemory {
  if (memory.isOn === on) return memory;
  return { ...memory, isOn: on, lastSwitchMs: nowMs, pulseEnded: !on };
}

/**
 * A relay switch-on held back (start cap): the relay stays off as it was, its last switch time
 * the one from `before` this cycle, and a pulse may still start in this window once the start is
 * allowed.
 */
export function holdRelayOff(
  relays: RelayMemories,
  before: RelayMemories,
  actuatorId: string,
): RelayMemories {
  const memory = relays[actuatorId];
  if (memory === undefined) return relays;
  const lastSwitchMs = before[actuatorId]?.lastSwitchMs;
  const { lastSwitchMs: _switched, ...rest } = memory;
  return {
    ...relays,
    [actuatorId]: {
      ...rest,
      isOn: false,
      pulseEnded: false,
      ...(lastSwitchMs === undefined ? {} : { lastSwitchMs }),
    },
  };
}
