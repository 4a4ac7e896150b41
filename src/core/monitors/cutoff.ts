/**
 * Cut-off: the value is at or beyond an absolute limit while an actuator that pushes further is
 * on (wanted, commanded or reported on): the loop never heats at or above `max`, never cools at
 * or below `min`. Beyond the limit with every pushing actuator off (the sun on a greenhouse, a
 * hot cellar) is not the loop's doing: nothing latches, and a cooler keeps cooling. After Marlin
 * MAXTEMP and Klipper max_temp. Remembers nothing.
 */
import type { ActuatorSpec } from '../loop-spec.js';
import { isOn } from '../numbers.js';
import { safetyMonitor } from './types.js';

/** An absolute limit on the value (loop unit); either side may be absent. */
export interface CutoffSpec {
  min?: number;
  max?: number;
}

export const cutoffMonitor = safetyMonitor({
  name: 'cutoff',
  reasons: ['AboveCutoff', 'BelowCutoff'],
  phase: 'latch',
  check(spec, _memory, inputs, nowMs) {
    const { cutoff } = spec;
    const value = inputs.value;
    if (cutoff === undefined || value === undefined) return {};
    const pushing = (actuator: ActuatorSpec | undefined) =>
      actuator !== undefined &&
      (isOn(inputs.levels[actuator.id]) ||
        isOn(inputs.observed[actuator.id]) ||
        isOn(inputs.lastCommanded[actuator.id]?.level));
    if (cutoff.max !== undefined && value >= cutoff.max && pushing(spec.raise)) {
      return {
        fault: {
          reason: 'AboveCutoff',
          message: `${value} reached the cut-off ${cutoff.max} with ${spec.raise!.id} on: find out why it ran this high, then reset the fault once the value is below ${cutoff.max}`,
          atMs: nowMs,
        },
      };
    }
    if (cutoff.min !== undefined && value <= cutoff.min && pushing(spec.lower)) {
      return {
        fault: {
          reason: 'BelowCutoff',
          message: `${value} reached the cut-off ${cutoff.min} with ${spec.lower!.id} on: find out why it ran this low, then reset the fault once the value is above ${cutoff.min}`,
          atMs: nowMs,
        },
      };
    }
    return {};
  },
});
