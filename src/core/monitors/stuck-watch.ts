/**
 * Stuck watch (welded relay, stuck plug): a direction's actuator has been commanded off for
 * `periodMs`, yet the value kept moving that way by `minChange` from its extreme since, and is
 * now `minChange` past the setpoint. Off by default: a room in the sun or a fermenting beer
 * does that on its own. Checked only while regulating.
 */
import { loopActuators } from '../loop-spec.js';
import { isOn, roundHundredths } from '../numbers.js';
import { atMostNow, formatDuration } from '../time.js';
import { mapValues, nonEmpty, type SafetyMemory, safetyMonitor } from './types.js';

export interface StuckWatchSpec {
  /** How long a direction must have been commanded off before its movement counts, ms. */
  periodMs: number;
  /** The movement (loop unit), from the extreme since off and past the setpoint, that latches. */
  minChange: number;
}

export const stuckWatchMonitor = safetyMonitor({
  name: 'stuckWatch',
  reasons: ['StuckOn'],
  phase: 'latch',
  regulatingOnly: true,
  check(spec, memory, inputs, nowMs) {
    const watch = spec.stuckWatch;
    const value = inputs.value;
    if (watch === undefined || value === undefined) return {};
    const stuck: NonNullable<SafetyMemory['stuck']> = {};
    const wakeTimes: number[] = [];
    let fault: { reason: 'StuckOn'; message: string; atMs: number } | undefined;
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
    const slot = nonEmpty(stuck);
    return { ...(slot ? { memory: slot } : {}), ...(fault ? { fault } : {}), wakeTimes };
  },
  memory: {
    key: 'stuck',
    // The watch stops while held safe, and restarts after a restart: the time the daemon was
    // down is not time it watched.
    idle: () => undefined,
    resume: () => undefined,
    shift: (slot, deltaMs) =>
      mapValues(slot, (window) => ({ ...window!, offSinceMs: window!.offSinceMs + deltaMs })),
    shiftedTimes: ['*.offSinceMs'],
  },
});
