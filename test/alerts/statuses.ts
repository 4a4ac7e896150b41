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

/** A healthy loop running profile `name` (in `state`) of `stepCount` steps, at setpoint `setpoint`. */
export function profileStatus(
  name: string,
  state: 'running' | 'paused' | 'finished',
  opts: { stepCount: number; setpoint: number },
): LoopStatusWithSchedule {
  return statusOf(
    { Faulted: { status: 'False', reason: 'NoFault', message: 'no fault' } },
    {
      setpoint: opts.setpoint,
      schedule: {
        source: 'profile',
        preset: null,
        next: [],
        profile: {
          name,
          state,
          stepIndex: opts.stepCount - 1,
          stepCount: opts.stepCount,
          stepKind: 'hold',
          stepRemainingS: 0,
          totalRemainingS: 0,
          stepEndsAt: null,
          endsAt: null,
        },
      },
    },
  );
}
