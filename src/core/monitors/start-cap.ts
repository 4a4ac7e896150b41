/**
 * Start cap per relay: at most `maxStartsPerHour` (ActuatorSpec) switch-ons in any hour; a
 * further start is held back (the relay stays off) until the oldest leaves the hour. Off is
 * always allowed. It holds, never latches. A start is a relay on now that was not on last cycle
 * (the maximum on-time's on-since slot, which it reads).
 */
import { loopActuators } from '../loop-spec.js';
import { isOn } from '../numbers.js';
import { atMostNow, formatDuration, HOUR_MS } from '../time.js';
import { limited } from './max-on-time.js';
import { mapValues, nonEmpty, safetyMonitor } from './types.js';

export const startCapMonitor = safetyMonitor({
  name: 'startCap',
  reasons: [],
  phase: 'hold',
  check(spec, memory, { levels }, nowMs) {
    const startsMs: Record<string, number[]> = {};
    const heldOff: Record<string, string> = {};
    const wakeTimes: number[] = [];
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
    const slot = nonEmpty(startsMs);
    return { ...(slot ? { memory: slot } : {}), heldOff, wakeTimes };
  },
  memory: {
    key: 'startsMs',
    // Starts are facts: they stay counted for their hour, held safe or restarted.
    idle: (slot) => slot,
    resume: (slot) => slot,
    shift: (slot, deltaMs) => mapValues(slot, (list) => list.map((t) => t + deltaMs)),
    shiftedTimes: ['*.*'],
  },
});
