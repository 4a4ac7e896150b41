/** Loop statuses for the alert tests: a loop `room` showing the conditions given. Not a test file. */
import type { LoopStatusWithSchedule } from '../../src/alerts/events.js';
import type { Condition, ConditionType } from '../../src/core/types.js';

/** The conditions a status shows, by type. */
export type Shown = Partial<Record<ConditionType, Pick<Condition, 'status' | 'reason' | 'message'>>>;

export function statusOf(shown: Shown, extra: Partial<LoopStatusWithSchedule> = {}): LoopStatusWithSchedule {
  const conditions = Object.entries(shown).map(([type, value]) => ({
    type: type as ConditionType,
    ...value,
    lastTransitionMs: 0,
    observedGeneration: 1,
  }));
  return {
    loop: 'room',
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 20,
    measured: 19.5,
    measuredAtMs: 0,
    output: 0.5,
    action: 'heating',
    generation: 1,
    observedGeneration: 1,
    actuators: {},
    conditions,
    updatedAtMs: 0,
    ...extra,
  };
}
