import { splitRange } from './actuation.js';
import { actuatorConfirmedValue, allConfirmedValue } from './actuator-availability.js';
import { type LoopSpec, loopActuators } from './loop-spec.js';
import type { LoopDesired, LoopMemory, LoopObserved } from './loop-state.js';
import { roundHundredths } from './numbers.js';
import type { ReadingVerdict } from './sensor-health.js';
import type { CombineMethod, DroppedSensor } from './sensor-set.js';
import { describeSensorSet } from './sensor-set-report.js';
import { type AutotuneMemory, type AutotuneProgress, autotuneProgress, isActive } from './tuning/autotune.js';
import type { TuningModel } from './tuning/stored-tuning.js';
import type { Action, Condition, ConditionType, Direction, Mode, Quantity } from './types.js';

/** A loop's observable status: published retained over MQTT and shown by `homeostat status`. */
export interface LoopStatus {
  loop: string;
  quantity: Quantity;
  mode: Mode;
  setpoint: number;
  /** The reading used this cycle; undefined when it was missing, stale or implausible. */
  measured: number | undefined;
  /**
   * When that reading was taken; a sensor set's: its newest used member's (each member's age is
   * judged by its own limit: see `sensors`).
   */
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
  /** The running autotune's progress, or the last one's result or abort reason. */
  autotune?: AutotuneStatus;
  /** A loop with several sensors: which made the reading, which were left out and why. */
  sensors?: SensorSetStatus;
}

/** A sensor set as the status shows it (sensor-set.ts). */
export interface SensorSetStatus {
  combine: CombineMethod;
  /** Sensors whose readings made the measured value, in the config's order; none when it failed. */
  used: string[];
  /** Sensors left out this cycle, each with why (Missing, Stale, NotFinite, Implausible, Outlier, Disagree). */
  dropped: DroppedSensor[];
  /** One line for people: `median of 3 (dropped probe-2: 4.8 °C from the others)`. */
  summary: string;
}

/** An autotune as the status shows it (see tuning/autotune.ts). */
export interface AutotuneStatus extends AutotuneProgress {
  /** Why it ended early, for a person. */
  abortReason?: string;
  /** The identified model with its standard errors, and the tuning from it. */
  result?: TuningModel & {
    kp: number;
    tiS: number;
    tdS: number;
    closedLoopS: number;
    /** Setpoint weight b from the model (SIMC's gains with a setpoint step within 2 % overshoot). */
    setpointWeight?: number;
    /** Suggested relay modulation: a time-proportioning window, s; or a duty band (loop unit). */
    band: number;
    windowS: number;
    /**
     * The model's verdict (core/tuning/reliability.ts): `sound`, or `flagged` with the reasons
     * (stored, never put in force without a person). Absent on results from before it existed.
     */
    reliability?: { verdict: 'sound' | 'flagged' | 'refused'; reasons: string[] };
  };
}

export interface ConditionInputs {
  previous: Condition[];
  verdict: ReadingVerdict;
  mode: Mode;
  measured: number | undefined;
  setpoint: number;
  convergedBand: number;
  allConfirmed: boolean;
  /** ActuatorConfirmed as judged with the devices' availability (actuator-availability.ts); else from allConfirmed. */
  actuatorConfirmed?: ConditionValue;
  generation: number;
  nowMs: number;
  /** Loops with interlocks: the tripped one's message, or null when none is tripped. */
  interlock?: string | null;
  /** A latched fault: Faulted stays True until it is reset. */
  latched?: { reason: string; message: string };
  /** Loops that ran an autotune: its state now. */
  autotune?: AutotuneStatus;
}

type ConditionValue = Pick<Condition, 'status' | 'reason' | 'message'>;

/** The loop's conditions, keeping each one's lastTransitionMs while its status is unchanged. */
export function statusConditions(inputs: ConditionInputs): Condition[] {
  const { verdict, mode, measured, setpoint, convergedBand, allConfirmed } = inputs;
  const values: [ConditionType, ConditionValue][] = [
    [
      'SensorHealthy',
      verdict.ok
        ? verdict.quiet === undefined
          ? { status: 'True', reason: 'Fresh', message: 'reading is fresh and plausible' }
          : { status: 'True', reason: 'Quiet', message: verdict.quiet }
        : { status: 'False', reason: verdict.reason, message: verdict.message },
    ],
    ['ActuatorConfirmed', inputs.actuatorConfirmed ?? allConfirmedValue(allConfirmed)],
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
  if (inputs.autotune) values.push(['Autotuning', autotuningValue(inputs.autotune)]);
  return values.map(([type, value]) => withTransition(inputs, type, value));
}

function autotuningValue(a: AutotuneStatus): ConditionValue {
  const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;
  switch (a.phase) {
    case 'noise':
      return {
        status: 'True',
        reason: 'Noise',
        message: `measuring the sensor noise, output held (${a.side} side)`,
      };
    case 'relay': {
      const left = a.remainingIsLimit
        ? `at most ${minutes(a.remainingMs)} left`
        : `about ${minutes(a.remainingMs)} left`;
      return {
        status: 'True',
        reason: 'Relay',
        message: `relay cycle ${a.cycles} of ${a.cyclesNeeded} around the setpoint (±${roundHundredths(a.hysteresis ?? 0)}), ${left}`,
      };
    }
    case 'done': {
      const r = a.result!;
      return {
        status: 'False',
        reason: 'Done',
        message: `model K ${roundHundredths(r.gain)}, τ ${Math.round(r.timeConstantS)} s, θ ${Math.round(r.deadTimeS)} s; SIMC kp ${roundHundredths(r.kp)}, ti ${Math.round(r.tiS)} s`,
      };
    }
    case 'aborted':
      return {
        status: 'False',
        reason: 'Aborted',
        message: `autotune aborted: ${a.abortReason ?? 'unknown reason'}`,
      };
  }
}

/** The autotune part of the status. */
export function autotuneStatus(memory: AutotuneMemory, nowMs: number): AutotuneStatus {
  const r = memory.result;
  return {
    ...autotuneProgress(memory, nowMs),
    ...(memory.abortReason === undefined ? {} : { abortReason: memory.abortReason }),
    ...(r
      ? {
          result: {
            ...r.identification.model,
            standardError: r.identification.standardError,
            rmsResidual: r.identification.rmsResidual,
            ...r.gains,
            closedLoopS: r.closedLoopS,
            band: r.modulation.band,
            windowS: r.modulation.windowS,
            ...(r.reliability
              ? { reliability: { verdict: r.reliability.verdict, reasons: r.reliability.reasons } }
              : {}),
          },
        }
      : {}),
  };
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
    message: `${Math.abs(roundHundredths(error))} from the setpoint`,
  };
}

/** What a reconcile cycle found and chose, as the status needs it. */
export interface CycleOutcome {
  verdict: ReadingVerdict;
  interlock: { message: string } | undefined;
  /** The loop's memory after the cycle (conditions still the previous ones). */
  memory: Pick<
    LoopMemory,
    'conditions' | 'output' | 'latchedFault' | 'lastActiveMs' | 'autotune' | 'commands'
  >;
  levels: Record<string, number>;
  allConfirmed: boolean;
}

/** The loop's status after a reconcile cycle. */
export function loopStatus(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  outcome: CycleOutcome,
  nowMs: number,
): LoopStatus {
  const { verdict, memory, levels } = outcome;
  const measured = verdict.ok ? verdict.value : undefined;
  const autotune = memory.autotune ? autotuneStatus(memory.autotune, nowMs) : undefined;
  const sensors = sensorSetStatus(spec, observed);
  return {
    loop: spec.id,
    quantity: spec.quantity,
    mode: desired.mode,
    setpoint: desired.setpoint,
    measured,
    measuredAtMs: observed.reading?.atMs,
    output: memory.output,
    action: loopAction(spec, desired, memory, levels, nowMs),
    generation: desired.generation,
    observedGeneration: desired.generation,
    actuators: Object.fromEntries(
      loopActuators(spec).map(({ actuator }) => [
        actuator.id,
        { wanted: levels[actuator.id]!, observed: observed.actuators[actuator.id] ?? null },
      ]),
    ),
    conditions: loopConditions(spec, desired, observed, outcome, { measured, autotune }, nowMs),
    updatedAtMs: nowMs,
    ...(autotune ? { autotune } : {}),
    ...(sensors ? { sensors } : {}),
  };
}

/** What the loop is doing (heating, cooling, idle, off) from its output and the levels chosen. */
function loopAction(
  spec: LoopSpec,
  desired: LoopDesired,
  memory: CycleOutcome['memory'],
  levels: Record<string, number>,
  nowMs: number,
): LoopStatus['action'] {
  const on = (actuator: { id: string } | undefined) =>
    actuator !== undefined && (levels[actuator.id] ?? 0) >= IDLE_BELOW;
  const { duties } = splitRange(spec, memory.output, memory.lastActiveMs, nowMs);
  const side = isActive(memory.autotune) ? memory.autotune.side : undefined;
  return actionFor(spec, desired.mode, duties, { raise: on(spec.raise), lower: on(spec.lower) }, side);
}

/** The loop's conditions after this cycle, from the previous ones and what the cycle found. */
function loopConditions(
  spec: LoopSpec,
  desired: LoopDesired,
  observed: LoopObserved,
  outcome: CycleOutcome,
  found: { measured: number | undefined; autotune: AutotuneStatus | undefined },
  nowMs: number,
): LoopStatus['conditions'] {
  const { verdict, interlock, memory, levels } = outcome;
  const { measured, autotune } = found;
  return statusConditions({
    previous: memory.conditions,
    verdict,
    mode: desired.mode,
    measured,
    setpoint: desired.setpoint,
    convergedBand: spec.convergedBand,
    allConfirmed: outcome.allConfirmed,
    actuatorConfirmed: actuatorConfirmedValue({
      spec,
      allConfirmed: outcome.allConfirmed,
      levels,
      observed: observed.actuators,
      availability: observed.availability,
      commands: memory.commands,
    }),
    generation: desired.generation,
    nowMs,
    ...(spec.interlocks?.length ? { interlock: interlock?.message ?? null } : {}),
    ...(memory.latchedFault ? { latched: memory.latchedFault } : {}),
    ...(autotune ? { autotune } : {}),
  });
}

/** The sensor set's part of the status; absent for a loop with one sensor. */
function sensorSetStatus(spec: LoopSpec, observed: LoopObserved): SensorSetStatus | undefined {
  const set = spec.sensorSet;
  const result = observed.sensorSet;
  if (!set || !result) return undefined;
  return {
    combine: set.combine,
    used: [...result.used],
    dropped: result.dropped.map((d) => ({ ...d })),
    summary: describeSensorSet(set, result, set.unit),
  };
}

/**
 * What the loop is doing: heating (humidifying) while its raise side has a duty, cooling
 * (drying) for its lower side, idle only when the output is really zero (it shows as 0 %) or
 * the changeover delay holds the wanted side back, and no actuator is on. A relay in the off
 * part of its time-proportioning window, or held off by its minimum off time, is still
 * heating: the loop wants heat, the relay only pulses it. The same holds for a running
 * autotune (`tuning`: its side): its relay's off half, and the noise phase's hold, are part of
 * a run on that side, not a loop with nothing to do (`output` and the actuators show the
 * relay's level; the status' `autotune` part says which phase).
 */
function actionFor(
  spec: LoopSpec,
  mode: Mode,
  duties: Record<Direction, number>,
  on: Record<Direction, boolean>,
  tuning?: Direction,
): Action {
  if (mode === 'off') return 'off';
  const humidity = spec.quantity === 'humidity';
  if (tuning === 'raise') return humidity ? 'humidifying' : 'heating';
  if (tuning === 'lower') return humidity ? 'drying' : 'cooling';
  if (on.raise || (spec.raise !== undefined && duties.raise >= IDLE_BELOW)) {
    return humidity ? 'humidifying' : 'heating';
  }
  if (on.lower || (spec.lower !== undefined && duties.lower >= IDLE_BELOW))
    return humidity ? 'drying' : 'cooling';
  return 'idle';
}

/** An output (or a continuous actuator's level) below half a percent shows as 0 % and is idle. */
const IDLE_BELOW = 0.005;

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
