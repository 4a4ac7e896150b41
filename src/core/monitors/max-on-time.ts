/**
 * Maximum on-time per actuator: on (above 0) continuously for `maxOnMs` (ActuatorSpec) latches
 * the fault: an actuator that runs that long means a fault (a pump running dry, a leak, a door
 * left open); a forced rest would only restart it into the same fault. It also keeps the on-since
 * time of every relay under a start cap, which reads it to tell a start from a relay still on.
 */
import { type ActuatorSpec, loopActuators } from '../loop-spec.js';
import { atMostNow, formatDuration } from '../time.js';
import { mapValues, nonEmpty, safetyMonitor } from './types.js';

/** A limit applies to actuators whose safe level is off: "on" means away from safe. */
export function limited(actuator: ActuatorSpec): boolean {
  return (
    actuator.safeLevel === 0 && (actuator.maxOnMs !== undefined || actuator.maxStartsPerHour !== undefined)
  );
}

export const maxOnTimeMonitor = safetyMonitor({
  name: 'maxOnTime',
  reasons: ['MaxOnTime'],
  phase: 'latch',
  check(spec, memory, { levels }, nowMs) {
    const onSinceMs: Record<string, number> = {};
    const wakeTimes: number[] = [];
    let fault: ReturnType<typeof maxOnFault> | undefined;
    for (const { actuator } of loopActuators(spec)) {
      if (!limited(actuator) || (levels[actuator.id] ?? 0) <= 0) continue;
      // A time ahead of now means the clock went back: count it as now (the limit holds in full).
      const sinceMs = atMostNow(memory?.onSinceMs?.[actuator.id] ?? nowMs, nowMs);
      onSinceMs[actuator.id] = sinceMs;
      if (actuator.maxOnMs === undefined) continue;
      if (nowMs - sinceMs < actuator.maxOnMs) wakeTimes.push(sinceMs + actuator.maxOnMs);
      else fault ??= maxOnFault(actuator.id, nowMs - sinceMs, actuator.maxOnMs, nowMs);
    }
    const slot = nonEmpty(onSinceMs);
    return { ...(slot ? { memory: slot } : {}), ...(fault ? { fault } : {}), wakeTimes };
  },
  memory: {
    key: 'onSinceMs',
    // Held safe, nothing is on.
    idle: () => undefined,
    // Kept only for an actuator not seen off: one that stayed on through the restart has really
    // been on all along.
    resume: (slot, observed) =>
      nonEmpty(
        Object.fromEntries(
          Object.entries(slot).filter(([id]) => observed[id] === undefined || observed[id] > 0),
        ),
      ),
    shift: (slot, deltaMs) => mapValues(slot, (t) => t + deltaMs),
    shiftedTimes: ['*'],
  },
});

function maxOnFault(id: string, onMs: number, maxOnMs: number, nowMs: number) {
  return {
    reason: 'MaxOnTime' as const,
    message: `${id} has been on for ${formatDuration(onMs)} (limit ${formatDuration(maxOnMs)}): check the plant (a leak, a pump running dry, a door left open), then reset the fault`,
    atMs: nowMs,
  };
}
