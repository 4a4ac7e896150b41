import { dutyBand } from './duty-band.js';
import type { ActuatorSpec, LoopSpec } from './loop-spec.js';
import { loopActuators } from './loop-spec.js';
import type { LoopMemory } from './loop-state.js';
import {
  holdForMinimumTimes,
  type TimeProportioningMemory,
  timeProportion,
  timeProportioningInitialMemory,
} from './time-proportioning.js';
import type { Direction } from './types.js';

/**
 * Splits the signed output between the raise and lower actuators. They are never both above
 * 0, and one direction may start only `changeoverMs` after the other was last active, so a
 * heater and a compressor never fight and the compressor is not started right after heating.
 */
export function splitRange(
  spec: LoopSpec,
  output: number,
  next: LoopMemory,
  nowMs: number,
  wakeTimes: number[],
): Record<Direction, number> {
  const wantDirection: Direction | undefined = output > 0 ? 'raise' : output < 0 ? 'lower' : undefined;
  if (wantDirection === undefined) return { raise: 0, lower: 0 };
  const other: Direction = wantDirection === 'raise' ? 'lower' : 'raise';
  // In the future only if the clock went back: count it as now (the delay holds, no longer).
  const storedActiveMs = next.lastActiveMs[other];
  const otherActiveMs = storedActiveMs === undefined ? undefined : Math.min(storedActiveMs, nowMs);
  const hasOther = other === 'raise' ? spec.raise !== undefined : spec.lower !== undefined;
  if (hasOther && otherActiveMs !== undefined && nowMs - otherActiveMs < spec.changeoverMs) {
    wakeTimes.push(otherActiveMs + spec.changeoverMs);
    return { raise: 0, lower: 0 };
  }
  const duty = Math.abs(output);
  return wantDirection === 'raise' ? { raise: duty, lower: 0 } : { raise: 0, lower: duty };
}

/**
 * Level for one actuator: under a PID, relays through the duty band when the actuator has one,
 * else time-proportioning; under hysteresis, the on/off decision with minimum times only.
 */
export function actuatorLevel(
  actuator: ActuatorSpec,
  duty: number,
  next: LoopMemory,
  nowMs: number,
  controllerType: 'pid' | 'hysteresis',
  wakeTimes: number[],
): number {
  if (actuator.kind === 'continuous') return Math.round(duty * 1000) / 1000;
  const params = actuator.timeProportioning ?? { windowMs: 600_000, minOnMs: 0, minOffMs: 0 };
  const memory = next.relays[actuator.id] ?? timeProportioningInitialMemory();
  if (controllerType === 'pid' && actuator.band !== undefined) {
    const result = dutyBand(duty, memory, nowMs, { ...params, halfBand: actuator.band.halfBand });
    next.relays[actuator.id] = result.memory;
    if (result.nextChangeMs !== undefined) wakeTimes.push(result.nextChangeMs);
    return result.on ? 1 : 0;
  }
  if (controllerType === 'pid') {
    const result = timeProportion(duty, memory, nowMs, params);
    next.relays[actuator.id] = result.memory;
    wakeTimes.push(result.nextChangeMs);
    return result.on ? 1 : 0;
  }
  const held = holdForMinimumTimes(duty > 0, memory.isOn, memory.lastSwitchMs, nowMs, params);
  if (held.untilMs !== undefined) wakeTimes.push(held.untilMs);
  next.relays[actuator.id] = switchedRelayMemory(memory, held.on, nowMs);
  return held.on ? 1 : 0;
}

/**
 * Regulation resumes (start, mode on, fault cleared): relays begin a fresh window at once, so
 * a pulse cut short by the fault does not keep a cold heater off until the next window.
 * Minimum on/off times still hold (lastSwitchMs is kept).
 */
export function restartRelayWindows(spec: LoopSpec, next: LoopMemory): void {
  for (const { actuator } of loopActuators(spec)) {
    const memory = next.relays[actuator.id];
    if (actuator.kind !== 'relay' || memory === undefined) continue;
    const { windowStartMs: _dropped, ...rest } = memory;
    next.relays[actuator.id] = { ...rest, pulseEnded: false };
  }
}

/** Safe state overrides minimum on times: record the switch so minimum off times still hold. */
export function forceRelayMemory(
  next: LoopMemory,
  actuator: ActuatorSpec,
  level: number,
  nowMs: number,
): void {
  if (actuator.kind !== 'relay') return;
  const memory = next.relays[actuator.id] ?? timeProportioningInitialMemory();
  next.relays[actuator.id] = switchedRelayMemory(memory, level > 0, nowMs);
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
 * unchanged, and a pulse may still start in this window once the start is allowed.
 */
export function holdRelayOff(next: LoopMemory, before: LoopMemory, actuatorId: string): void {
  const memory = next.relays[actuatorId];
  if (memory === undefined) return;
  const lastSwitchMs = before.relays[actuatorId]?.lastSwitchMs;
  const { lastSwitchMs: _switched, ...rest } = memory;
  next.relays[actuatorId] = {
    ...rest,
    isOn: false,
    pulseEnded: false,
    ...(lastSwitchMs === undefined ? {} : { lastSwitchMs }),
  };
}
