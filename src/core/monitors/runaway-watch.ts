/**
 * Runaway watch: once converged at the current setpoint, the value stays more than `band` from
 * it for `periodMs` while the output is saturated towards it (a probe out of the tank, a heater
 * lost). Above the band with the heater off is the stuck watch's case. After Marlin's thermal
 * runaway once stable and Klipper's verify_heater. Checked only while regulating.
 */
import { FULL_OUTPUT } from '../numbers.js';
import { atMostNow, formatDuration } from '../time.js';
import { safetyMonitor } from './types.js';

export interface RunawayWatchSpec {
  /** Distance from the setpoint (loop unit) that counts as out of control once converged. */
  band: number;
  /** How long the value may stay outside the band at saturated output, ms. */
  periodMs: number;
}

export const runawayWatchMonitor = safetyMonitor({
  name: 'runawayWatch',
  reasons: ['Runaway'],
  phase: 'latch',
  regulatingOnly: true,
  check(spec, memory, inputs, nowMs) {
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
      return {
        memory: { setpoint: inputs.setpoint, outsideSinceMs },
        wakeTimes: [outsideSinceMs + watch.periodMs],
      };
    }
    return {
      fault: {
        reason: 'Runaway',
        message: `${value} has stayed more than ${watch.band} from the setpoint ${inputs.setpoint} for ${formatDuration(nowMs - outsideSinceMs)} at full ${error > 0 ? 'raise' : 'lower'} output, after it had converged: check the sensor is in place and the actuator works, then reset the fault`,
        atMs: nowMs,
      },
    };
  },
  memory: {
    key: 'runaway',
    // Stops while held safe; after a restart it re-arms once the loop converges.
    idle: () => undefined,
    resume: () => undefined,
    shift: (slot, deltaMs) => ({
      setpoint: slot.setpoint,
      ...(slot.outsideSinceMs === undefined ? {} : { outsideSinceMs: slot.outsideSinceMs + deltaMs }),
    }),
    shiftedTimes: ['outsideSinceMs'],
  },
});
