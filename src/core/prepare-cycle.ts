/**
 * What one cycle of a loop decides before reconcile, pure: from the stored desired state, the
 * memory, the readings and `now` it works out the desired state in force (the schedule's setpoint
 * and mode), the memory with the stored fault reset and autotune request applied (each once, by
 * generation), the observations as reconcile takes them (a sensor set combined) and the spec with
 * the gains in force. The runtime (runtime/loop-reconciler.ts) reads the inputs fresh, calls this,
 * reconciles, writes the commands and commits; nothing here reads a clock, a driver or the store.
 */
import type { DeviceAvailability } from './actuator-availability.js';
import { MAX_HALF_BAND } from './duty-band.js';
import { applyStoredFaultReset, type FaultResetMark, type StoredFaultReset } from './fault-reset.js';
import type { LoopSpec } from './loop-spec.js';
import type { LoopDesired, LoopMemory, LoopObserved } from './loop-state.js';
import type { EffectiveDesired, ScheduleRow, ScheduleStatus } from './schedule/effective-desired.js';
import { combineReadings } from './sensor-set.js';
import { applyStoredAutotuneRequest } from './tuning/autotune-request.js';
import {
  type ActiveTuning,
  type AutotuneDefaults,
  type AutotuneEvent,
  type AutotuneMark,
  autotuneMarkOf,
  tunedLoopSpec,
} from './tuning/loop-tuning.js';
import type { AutotuneRequest } from './tuning/stored-tuning.js';
import type { ActuatorLevel, Reading } from './types.js';

/**
 * Desired state as a cycle reads it: reconcile's, plus the last fault reset stored for the loop
 * (see fault-reset.ts; absent: never reset), the tuning in force (absent: the config's gains),
 * the highest tuning version stored, and the last autotune request (applied once).
 */
export type CycleDesired = LoopDesired & {
  faultReset?: StoredFaultReset;
  tuning?: ActiveTuning;
  lastTuningVersion?: number;
  /** `source`: who asked, when the store keeps it (a cancel's reason names it). */
  autotuneRequest?: AutotuneRequest & { source?: string };
  /**
   * The stored schedule state: the preset selected, the last manual change, the profile
   * started. `setpoint`/`mode` above are the manual ones; the schedule turns them into the
   * effective ones at the cycle's `now`.
   */
  preset?: string;
  changedAtMs?: number;
  profileRun?: ScheduleRow['profileRun'];
};

/**
 * A loop's memory as the runtime keeps it: with the generation of the last stored fault reset it
 * applied and what it did with autotune requests and results.
 */
export type CycleMemory = LoopMemory & FaultResetMark & AutotuneMark;

/** What a cycle read of its sensors and actuators (latest values, as the runtime holds them). */
export interface CycleReadings {
  /** The latest good reading of the loop's sensor (a loop with one sensor). */
  latest?: Reading | undefined;
  /**
   * A loop with several sensors (spec.sensorSet): the latest reading of each, by sensor id.
   * Absent there: every sensor is missing (the loop is held safe, never regulating unjudged).
   */
  sensors?: Record<string, Reading | undefined> | undefined;
  interlocks?: Record<string, Reading | undefined> | undefined;
  disturbance?: Reading | undefined;
  /** Each actuator's level as its driver reports it (undefined: unknown). */
  actuators: Record<string, ActuatorLevel>;
  availability?: Record<string, DeviceAvailability> | undefined;
}

export interface CycleInputs<M extends CycleMemory = CycleMemory> {
  /** The loop's spec from the config file (the tuning's gains go in here). */
  spec: LoopSpec;
  /** The desired state as stored. */
  stored: CycleDesired;
  memory: M;
  /**
   * The stored fault reset (stored.faultReset) with its time in the memory's frame: the runtime
   * moves it by the wall-clock steps it moved the memory by since the reset was committed.
   */
  faultReset: StoredFaultReset | undefined;
  readings: CycleReadings;
  /** The last combined reading's time of a sensor set: the next is never stamped before it. */
  sensorSetAtMs: number | undefined;
  /**
   * The setpoint and mode in force at `nowMs` from the stored desired state (presets, weekly
   * schedule, profiles: schedule/effective-desired.ts), a pure function of its arguments. Absent,
   * or a result without `schedule` (a loop without any): the stored setpoint and mode.
   */
  schedule?: ((desired: CycleDesired, nowMs: number) => EffectiveDesired) | undefined;
  autotune: {
    /** The loop's config `autotune` section (absent: the defaults). */
    defaults: AutotuneDefaults | undefined;
    /** The stored request was there before this process started (autotune-request.ts). */
    storedBeforeStart: boolean;
  };
}

/** What a cycle hands to reconcile, and what its commit needs of it. */
export interface PreparedCycle<M extends CycleMemory = CycleMemory> {
  /** The desired state in force now (the schedule's setpoint and mode, when it has one). */
  desired: CycleDesired;
  observed: LoopObserved;
  /** The spec to reconcile with: the tuning's gains in place of the file's. */
  spec: LoopSpec;
  /** The tuning version whose gains `spec` has ('config': the file's). */
  gainsInForce: number | 'config';
  /** The memory to reconcile from: the stored fault reset and autotune request applied. */
  memory: M;
  /** The stored fault reset the memory applied (named in the memory the cycle commits). */
  faultResetGeneration: number | undefined;
  /** The autotune request's event (a refusal, an interrupted start), if one was acted on. */
  requestEvent: AutotuneEvent | undefined;
  /** The `schedule` status part (a loop with presets, a schedule or profiles). */
  schedule?: ScheduleStatus;
  /** The next schedule point or profile step, ms, when the loop has a schedule and one is due. */
  nextChangeAtMs?: number;
  /** The sensor set's last combined reading time, this cycle's when it combined one. */
  sensorSetAtMs: number | undefined;
}

/**
 * The cycle's decisions before reconcile (see the module comment). May throw on a defect (a
 * schedule or sensor set that cannot be evaluated): the runtime then drives the loop safe.
 */
export function prepareCycle<M extends CycleMemory>(inputs: CycleInputs<M>, nowMs: number): PreparedCycle<M> {
  const { desired, scheduled } = desiredInForce(inputs.stored, inputs.schedule, nowMs);
  // A reset stored as desired state clears the latch before reconcile sees it, in the cycle
  // that first reads it and again after a crash brought an older memory back.
  const reset = applyStoredFaultReset(inputs.memory, inputs.faultReset);
  const observed = observedCycle(inputs.spec, inputs.readings, nowMs, inputs.sensorSetAtMs);
  const { spec, gainsInForce } = specInForce(inputs.spec, desired.tuning);
  // A stored start or cancel acts once (by generation), on this cycle's observations.
  const requested = applyStoredAutotuneRequest(
    {
      spec,
      desired,
      observed,
      defaults: inputs.autotune.defaults,
      request: desired.autotuneRequest,
      storedBeforeStart: inputs.autotune.storedBeforeStart,
    },
    reset,
    nowMs,
  );
  const schedule = scheduled?.schedule;
  const nextChangeAtMs = schedule === undefined ? undefined : scheduled?.nextChangeAtMs;
  return {
    desired,
    observed,
    spec,
    gainsInForce,
    memory: requested.memory,
    faultResetGeneration: reset.faultResetGeneration,
    requestEvent: requested.event,
    ...(schedule === undefined ? {} : { schedule }),
    ...(nextChangeAtMs === undefined ? {} : { nextChangeAtMs }),
    sensorSetAtMs: observed.sensorSet?.reading?.atMs ?? inputs.sensorSetAtMs,
  };
}

/**
 * The desired state in force at `nowMs`: the stored one with the schedule's setpoint and mode
 * when the loop has a schedule (its result carries a `schedule` part), else the stored one.
 */
export function desiredInForce(
  stored: CycleDesired,
  schedule: CycleInputs['schedule'],
  nowMs: number,
): { desired: CycleDesired; scheduled: EffectiveDesired | undefined } {
  const scheduled = schedule?.(stored, nowMs);
  if (scheduled?.schedule === undefined) return { desired: stored, scheduled };
  return { desired: { ...stored, setpoint: scheduled.setpoint, mode: scheduled.mode }, scheduled };
}

/**
 * The spec a cycle regulates with: the stored tuning's gains in place of the file's, for a PID
 * (a switch is bumpless: the PID re-bases its integral on a new kp or tdS, and a new tiS only
 * changes how fast it integrates from here). Any other controller keeps the file's.
 */
export function specInForce(
  spec: LoopSpec,
  tuning: ActiveTuning | undefined,
): { spec: LoopSpec; gainsInForce: number | 'config' } {
  const gainsInForce = spec.controller.type === 'pid' && tuning ? tuning.version : 'config';
  return {
    spec: gainsInForce === 'config' ? spec : tunedLoopSpec(spec, tuning, MAX_HALF_BAND),
    gainsInForce,
  };
}

/**
 * The observations as reconcile takes them. A loop with several sensors: each one's latest
 * reading judged and combined at `nowMs` (sensor-set.ts), never stamped before `previousAtMs`
 * (a member dropping out must not move the PID's and the history's time back).
 */
function observedCycle(
  spec: LoopSpec,
  readings: CycleReadings,
  nowMs: number,
  previousAtMs: number | undefined,
): LoopObserved {
  const sensorSet = spec.sensorSet
    ? combineReadings(spec.sensorSet, readings.sensors ?? {}, nowMs, spec, previousAtMs)
    : undefined;
  const reading = sensorSet ? sensorSet.reading : readings.latest;
  const { interlocks, disturbance, availability } = readings;
  return {
    ...(reading ? { reading } : {}),
    ...(sensorSet ? { sensorSet } : {}),
    actuators: readings.actuators,
    ...(availability ? { availability } : {}),
    ...(interlocks ? { interlocks } : {}),
    ...(disturbance ? { disturbance } : {}),
  };
}

/**
 * The memory a cycle commits: reconcile's, naming the stored fault reset it applied (so a restart
 * from it does not apply that reset again to a newer latch) and the autotune request acted on and
 * result stored, whatever reconcile keeps of them.
 */
export function committedMemory(
  reconciled: LoopMemory,
  prepared: Pick<PreparedCycle, 'memory' | 'faultResetGeneration'>,
): CycleMemory {
  const { faultResetGeneration } = prepared;
  return {
    ...reconciled,
    ...(faultResetGeneration === undefined ? {} : { faultResetGeneration }),
    ...autotuneMarkOf(prepared.memory),
  };
}

/** When the loop must run next: reconcile's wake, or the next schedule point or profile step if sooner. */
export function cycleWakeMs(
  reconcileWakeMs: number,
  prepared: Pick<PreparedCycle, 'nextChangeAtMs'>,
): number {
  const changeAtMs = prepared.nextChangeAtMs;
  return changeAtMs === undefined ? reconcileWakeMs : Math.min(reconcileWakeMs, changeAtMs);
}
