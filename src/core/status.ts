import type { ReadingVerdict } from './sensor-health.js';
import type { Action, Condition, ConditionType, Mode, Quantity } from './types.js';

/** A loop's observable status: published retained over MQTT and shown by `homeostat status`. */
export interface LoopStatus {
  loop: string;
  quantity: Quantity;
  mode: Mode;
  setpoint: number;
  /** The reading used this cycle; undefined when it was missing, stale or implausible. */
  measured: number | undefined;
  measuredAtMs: number | undefined;
  /** Signed controller output −1..1: positive raises, negative lowers. */
  output: number;
  action: Action;
  /** Generation of the desired state this status was computed for. */
  generation: number;
  /** Generation the loop has reconciled (acted on); lags `generation` until a cycle succeeds. */
  observedGeneration: number;
  actuators: Record<string, { wanted: number; observed: number | null }>;
  conditions: Condition[];
  updatedAtMs: number;
}

export interface ConditionInputs {
  previous: Condition[];
  verdict: ReadingVerdict;
  mode: Mode;
  measured: number | undefined;
  setpoint: number;
  convergedBand: number;
  allConfirmed: boolean;
  generation: number;
  nowMs: number;
  /** Loops with interlocks: the tripped one's message, or null when none is tripped. */
  interlock?: string | null;
  /** A latched fault: Faulted stays True until it is reset. */
  latched?: { reason: string; message: string };
}

type ConditionValue = Pick<Condition, 'status' | 'reason' | 'message'>;

/** The loop's conditions, keeping each one's lastTransitionMs while its status is unchanged. */
export function statusConditions(inputs: ConditionInputs): Condition[] {
  const { verdict, mode, measured, setpoint, convergedBand, allConfirmed } = inputs;
  const values: [ConditionType, ConditionValue][] = [
    [
      'SensorHealthy',
      verdict.ok
        ? { status: 'True', reason: 'Fresh', message: 'reading is fresh and plausible' }
        : { status: 'False', reason: verdict.reason, message: verdict.message },
    ],
    [
      'ActuatorConfirmed',
      allConfirmed
        ? { status: 'True', reason: 'Confirmed', message: 'every actuator is at its wanted level' }
        : { status: 'False', reason: 'Pending', message: 'an actuator is not (yet) at its wanted level' },
    ],
    ['Converged', convergedValue(mode, measured, setpoint, convergedBand)],
    [
      'Faulted',
      inputs.latched
        ? {
            status: 'True',
            reason: `Latched${inputs.latched.reason}`,
            message: `actuators held at their safe state until the fault is reset: ${inputs.latched.message}`,
          }
        : verdict.ok
          ? { status: 'False', reason: 'NoFault', message: 'no fault' }
          : {
              status: 'True',
              reason: `Sensor${verdict.reason}`,
              message: `actuators held at their safe state: ${verdict.message}`,
            },
    ],
    ['Reconciled', { status: 'True', reason: 'CycleSucceeded', message: 'desired state applied' }],
  ];
  if (inputs.interlock !== undefined) {
    values.push([
      'Interlocked',
      inputs.interlock === null
        ? { status: 'False', reason: 'Clear', message: 'no interlock tripped' }
        : { status: 'True', reason: 'Tripped', message: `paused, actuators safe: ${inputs.interlock}` },
    ]);
  }
  return values.map(([type, value]) => withTransition(inputs, type, value));
}

function convergedValue(
  mode: Mode,
  measured: number | undefined,
  setpoint: number,
  band: number,
): ConditionValue {
  if (mode === 'off') return { status: 'False', reason: 'Off', message: 'mode is off' };
  if (measured === undefined) return { status: 'Unknown', reason: 'NoReading', message: 'no usable reading' };
  const error = setpoint - measured;
  if (Math.abs(error) <= band) {
    return { status: 'True', reason: 'WithinBand', message: `within ±${band} of the setpoint` };
  }
  return {
    status: 'False',
    reason: error > 0 ? 'BelowSetpoint' : 'AboveSetpoint',
    message: `${Math.abs(Math.round(error * 100) / 100)} from the setpoint`,
  };
}

/** Marks a failed cycle in an existing status without pretending it was applied. */
export function markCycleFailed(
  status: LoopStatus,
  observedGeneration: number,
  message: string,
  nowMs: number,
): LoopStatus {
  const conditions = status.conditions.map((condition) =>
    condition.type === 'Reconciled'
      ? withTransition({ previous: status.conditions, generation: status.generation, nowMs }, 'Reconciled', {
          status: 'False',
          reason: 'CycleFailed',
          message,
        })
      : condition,
  );
  return { ...status, observedGeneration, conditions, updatedAtMs: nowMs };
}

function withTransition(
  context: { previous: Condition[]; generation: number; nowMs: number },
  type: ConditionType,
  value: ConditionValue,
): Condition {
  const before = context.previous.find((condition) => condition.type === type);
  const lastTransitionMs = before && before.status === value.status ? before.lastTransitionMs : context.nowMs;
  return { type, ...value, lastTransitionMs, observedGeneration: context.generation };
}
