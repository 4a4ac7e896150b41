import type { Logger } from 'pino';
import { shiftLoopMemory } from '../core/clock-step.js';
import type { ActuatorCommand } from '../core/command.js';
import type { LatchedFault } from '../core/effect-watch.js';
import {
  applyStoredFaultReset,
  type FaultResetMark,
  resettableFault,
  type StoredFaultReset,
} from '../core/fault-reset.js';
import type { LoopSpec } from '../core/loop-spec.js';
import { loopActuators } from '../core/loop-spec.js';
import { resumeLoopMemory } from '../core/loop-state.js';
import {
  initialLoopMemory,
  type LoopDesired,
  type LoopMemory,
  type LoopObserved,
  type ReconcileResult,
  reconcile,
} from '../core/reconcile.js';
import { combineReadings, type SensorSetResult } from '../core/sensor-set.js';
import { type LoopStatus, markCycleFailed } from '../core/status.js';
import type { ActuatorLevel, Condition, Reading } from '../core/types.js';
import type { ActuatorDriver } from '../drivers/types.js';
import type { AutotuneRequest, NewTuning } from '../store/desired-store.js';
import type { Clock } from '../time/clock.js';
import { type DriveSafeOptions, driveSafe, type SafeOutcome } from './drive-safe.js';
import type { EffectiveDesired, ScheduleRow, ScheduleStatus } from './effective-desired.js';
import { availability, observeActuators, WriteFailureStreak, writeCommands } from './loop-reconciler-act.js';
import { autotuneMarkOf, LoopTunings } from './loop-reconciler-tuning.js';
import type { CycleResult } from './loop-runner.js';
import type {
  ActiveTuning,
  AutotuneDefaults,
  AutotuneEvent,
  AutotuneMark,
  TuningStatus,
} from './loop-tuning.js';

/**
 * Desired state as a cycle reads it: reconcile's, plus the last fault reset stored for the loop
 * (see core/fault-reset.ts; absent: never reset), the tuning in force (absent: the config's
 * gains), the highest tuning version stored, and the last autotune request (applied once).
 */
export type CycleDesired = LoopDesired & {
  faultReset?: StoredFaultReset;
  tuning?: ActiveTuning;
  lastTuningVersion?: number;
  /** `source`: who asked, when the store keeps it (a cancel's reason names it). */
  autotuneRequest?: AutotuneRequest & { source?: string };
  /**
   * The stored schedule state: the preset selected, the last manual change, the
   * profile started. `setpoint`/`mode` above are the manual ones; the `schedule` option turns
   * them into the effective ones at the cycle's `now`.
   */
  preset?: string;
  changedAtMs?: number;
  profileRun?: ScheduleRow['profileRun'];
};

/** A loop's status as the runtime publishes it: reconcile's, with the tunings and schedule parts. */
export type PublishedLoopStatus = LoopStatus & { tuning?: TuningStatus; schedule?: ScheduleStatus };

export interface LoopReconcilerOptions {
  spec: LoopSpec;
  /** Desired state, read fresh every cycle (the store's in-memory copy: never SQLite on the control path). */
  desired: () => CycleDesired;
  /** Latest good reading of the loop's sensor (from the sampler). */
  latestReading: () => Reading | undefined;
  /**
   * A loop with several sensors (spec.sensorSet): the latest reading of each, by sensor id,
   * combined every cycle (core/sensor-set.ts) in place of latestReading.
   */
  sensorReadings?: () => Record<string, Reading | undefined>;
  /** Latest readings of the loop's interlock sensors, by sensor id. */
  interlockReadings?: () => Record<string, Reading | undefined>;
  /**
   * Latest reading of the loop's disturbance sensor (its PID's feedforward), if it names one.
   * Judged by the core (feedforward.ts): missing, stale or implausible falls back to the model.
   */
  disturbanceReading?: () => Reading | undefined;
  actuators: Map<string, ActuatorDriver>;
  clock: Clock;
  logger: Logger;
  /** Called with the status after every cycle, successful or not. */
  onStatus?: (status: LoopStatus) => void;
  /** Called after every cycle that reconciled (also when a write failed) with what it decided. */
  onCycle?: (cycle: CompletedCycle) => void;
  /** Stored memory to resume from; reconciled with the actuators' real state on the first cycle. */
  memory?: LoopMemory;
  /** Stored status: shown until the first cycle, and its observedGeneration carried over. */
  status?: LoopStatus;
  /** The loop's config `autotune` section, read at every request (absent: the defaults). */
  autotuneDefaults?: () => AutotuneDefaults | undefined;
  /**
   * Stores a finished autotune's result as the loop's next tuning (DesiredStore.recordTuning),
   * applied when `apply`; returns its version. Throws when it cannot: retried next cycle.
   * Absent: results stay in memory and status only.
   */
  recordTuning?: (tuning: NewTuning, apply: boolean) => { version: number };
  /**
   * The effective setpoint and mode at the cycle's `now` from the stored desired state (presets,
   * weekly schedule, profiles: effective-desired.ts), with the `schedule` status part. Absent,
   * or a result without `schedule` (a loop without any): the stored setpoint and mode as they are.
   */
  schedule?: (desired: CycleDesired, nowMs: number) => EffectiveDesired;
}

/** What one successful cycle saw and did. */
export interface CompletedCycle {
  loop: string;
  nowMs: number;
  reading: Reading | undefined;
  memory: LoopMemory;
  status: LoopStatus;
  commands: ActuatorCommand[];
  /** What the autotune did this cycle (started, refused, done, aborted), for the event log. */
  events: AutotuneEvent[];
  /**
   * Rare state this cycle changed that a crash must not lose (an autotune request acted on, a
   * run ended, a result stored): the memory should be written now, not with the next batch.
   */
  writeNow: boolean;
}

/** What a cycle observed before reconciling. */
interface ObservedCycle {
  desired: CycleDesired;
  actuators: Record<string, ActuatorLevel>;
}

/** A cycle's inputs to reconcile (LoopReconciler.prepare). */
interface PreparedCycle {
  /** The desired state in force now (the schedule's setpoint and mode, when it has one). */
  desired: CycleDesired;
  observed: LoopObserved;
  scheduled: EffectiveDesired | undefined;
  faultResetGeneration: number | undefined;
}

/** What a cycle saw and how its writes went, for its commit. */
interface CycleOutcome {
  reading: Reading | undefined;
  /** The stored fault reset the cycle's memory applied (core/fault-reset.ts). */
  faultResetGeneration: number | undefined;
  /** What the cycle's memory remembers of autotune requests and results (loop-tuning.ts). */
  autotuneMark: AutotuneMark;
  /** The autotune request's event (a refusal), if the cycle applied one. */
  requestEvent: AutotuneEvent | undefined;
  writeFailures: string[];
  nowMs: number;
  /** The `schedule` status part (a loop with presets, a schedule or profiles). */
  schedule?: ScheduleStatus;
}

/**
 * A loop with several sensors: each one's latest reading, judged and combined at this cycle's
 * `now` (core/sensor-set.ts). Undefined for a loop with one sensor. Without `sensorReadings`
 * every sensor is missing: the loop is held safe, never regulating on one sensor unjudged.
 * `previousAtMs`: the last combined reading's time, so the new one's never goes back.
 */
function observeSensorSet(
  spec: LoopSpec,
  opts: Pick<LoopReconcilerOptions, 'sensorReadings'>,
  nowMs: number,
  previousAtMs: number | undefined,
): SensorSetResult | undefined {
  if (!spec.sensorSet) return undefined;
  return combineReadings(spec.sensorSet, opts.sensorReadings?.() ?? {}, nowMs, spec, previousAtMs);
}

/** Conditions of the whole node that every loop shows. */
export type NodeConditionType = 'StorageHealthy' | 'ApiServing' | 'NodeIdUnique';
const NODE_CONDITION_ORDER: readonly NodeConditionType[] = ['StorageHealthy', 'ApiServing', 'NodeIdUnique'];

/** A node condition's value: healthy or not, why, and what to do. */
export interface NodeHealth {
  healthy: boolean;
  reason: string;
  message: string;
}
/**
 * Reconciles one loop, one cycle at a time: observe everything fresh → reconcile (pure) → act
 * on the differences.
 * The runner decides when it runs; this decides nothing about time except reading the clock.
 */
export class LoopReconciler {
  /**
   * With the generation of the last stored fault reset it applied (core/fault-reset.ts) and
   * what it did with autotune requests and results (loop-tuning.ts).
   */
  private memory: LoopMemory & FaultResetMark & AutotuneMark;
  private spec: LoopSpec;
  private configValidity: Condition | undefined;
  /**
   * Conditions of the whole node, set by the daemon: `StorageHealthy` (with a supervised
   * store), `ApiServing` (with the HTTP API on); absent otherwise.
   */
  private readonly nodeConditions = new Map<NodeConditionType, Condition>();
  /** The desired state of the last cycle: used when reading it fails (see run). */
  private lastDesired: CycleDesired | undefined;
  private resumed = false;
  private lastStatus: PublishedLoopStatus | undefined;
  private observedGeneration = 0;
  /** Wall-clock steps not yet applied to memory, ms (see shiftTimes). */
  private pendingShiftMs = 0;
  /** Every wall-clock step of this process, ms (see storedResetInMemoryFrame). */
  private shiftTotalMs = 0;
  /** The newest reset this process committed, with the shift total at that moment. */
  private committedReset: { generation: number; shiftTotalMs: number } | undefined;
  /**
   * The last combined reading's time of a sensor set (its next is never stamped before it: a
   * member dropping out must not move the PID's and the history's time back). Starts from the
   * stored PID's last reading time; moves with wall-clock steps like memory.
   */
  private sensorSetAtMs: number | undefined;
  private readonly writeFailures: WriteFailureStreak;
  private readonly tunings: LoopTunings;

  constructor(private readonly opts: LoopReconcilerOptions) {
    this.memory = opts.memory ?? initialLoopMemory();
    this.sensorSetAtMs = opts.memory?.pid.lastAtMs;
    this.tunings = new LoopTunings(opts, opts.memory, opts.desired);
    this.spec = opts.spec;
    this.lastStatus = opts.status;
    this.observedGeneration = opts.status?.observedGeneration ?? 0;
    this.writeFailures = new WriteFailureStreak(opts.logger);
  }

  get status(): PublishedLoopStatus | undefined {
    return this.lastStatus;
  }

  get loopMemory(): LoopMemory {
    return this.memory;
  }

  /**
   * One cycle: observe → reconcile → act → commit. A failed cycle shows `Reconciled=False` with
   * the error on the last status and throws (the runner retries with backoff).
   */
  async run(): Promise<CycleResult> {
    const spec = this.spec;
    let nowMs = this.opts.clock.nowMs();
    // A wall-clock step noticed before this cycle (or by the read above): memory moves with it.
    const earlyShiftMs = this.takeShift();
    this.shiftMemory(earlyShiftMs);
    try {
      let observed = await this.observe(spec, nowMs);
      // A step noticed while observing: readings have moved already, so memory and this cycle's
      // `now` move too (nothing between here and reconcile awaits, so no step can slip in).
      const lateShiftMs = this.takeShift();
      this.shiftMemory(lateShiftMs);
      nowMs += lateShiftMs;
      if (earlyShiftMs !== 0 || lateShiftMs !== 0) observed = await this.desiredAfterStep(observed);
      return await this.reconcileAndAct(spec, observed, nowMs);
    } catch (error) {
      if (this.lastStatus) {
        const message = error instanceof Error ? error.message : String(error);
        this.publish(markCycleFailed(this.lastStatus, this.observedGeneration, message, nowMs));
      }
      throw error;
    }
  }

  /**
   * After a clock step, the desired state read again: the daemon moves the stored schedule times
   * (a profile's start, a manual change's stamp) in a microtask it queued when it noticed the
   * step (daemon/clock-step.ts), which may be after this cycle read them. Yielding one microtask
   * lets it run first (microtasks run in order); without this the cycle would evaluate the
   * schedule at the new clock with the old times (a profile a day ahead: its crash step).
   */
  private async desiredAfterStep(observed: ObservedCycle): Promise<ObservedCycle> {
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    return { ...observed, desired: this.readDesired() };
  }

  /** Everything fresh: desired state and the actuators' levels (adopted on the first cycle). */
  private async observe(spec: LoopSpec, nowMs: number): Promise<ObservedCycle> {
    const desired = this.readDesired();
    const actuators = await observeActuators(this.spec, this.opts);
    if (!this.resumed) {
      // Observe first, then act: adopt what the actuators really do before the first command.
      const relayIds = loopActuators(spec)
        .filter(({ actuator }) => actuator.kind === 'relay')
        .map(({ actuator }) => actuator.id);
      // this.memory, not the stored one: a clock step before the first cycle has moved it.
      this.memory = resumeLoopMemory(this.memory, relayIds, actuators, nowMs);
      this.resumed = true;
    }
    return { desired, actuators };
  }

  /**
   * Reconcile (pure) on the latest readings, then act on the differences and commit. Called
   * right after the late clock shift: nothing before reconcile awaits.
   */
  private async reconcileAndAct(
    spec: LoopSpec,
    observedCycle: ObservedCycle,
    nowMs: number,
  ): Promise<CycleResult> {
    let prepared: PreparedCycle;
    let result: ReconcileResult;
    let requestEvent: AutotuneEvent | undefined;
    try {
      // Everything from the schedule to reconcile: a throw anywhere here (a schedule or sensor set
      // defect, a reading callback) must not freeze the actuators where they are.
      prepared = this.prepare(spec, observedCycle, nowMs);
      const { desired, observed } = prepared;
      const tuned = this.tunings.spec(spec, desired);
      // A stored start or cancel acts once (by generation), on this cycle's observations.
      const requested = this.tunings.applyRequest(tuned, desired, observed, this.memory, nowMs);
      this.memory = requested.memory;
      requestEvent = requested.event;
      result = reconcile(tuned, desired, observed, this.memory, nowMs);
    } catch (error) {
      await this.driveSafe(`reconcile failed: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
    const { desired, observed, scheduled, faultResetGeneration } = prepared;
    const schedule = scheduled?.schedule;
    const reading = observed.reading;
    if (observed.sensorSet?.reading) this.sensorSetAtMs = observed.sensorSet.reading.atMs;
    const autotuneMark = autotuneMarkOf(this.memory);
    const writeFailures = await writeCommands(this.spec, result.commands, this.opts);
    this.commit(spec, desired, result, {
      reading,
      faultResetGeneration,
      autotuneMark,
      requestEvent,
      writeFailures,
      nowMs,
      ...(schedule === undefined ? {} : { schedule }),
    });
    // Woken at the next schedule point or profile step, not only at the next resync.
    const changeAtMs = schedule === undefined ? undefined : scheduled?.nextChangeAtMs;
    return {
      nextWakeMs: changeAtMs === undefined ? result.nextWakeMs : Math.min(result.nextWakeMs, changeAtMs),
    };
  }

  /**
   * The cycle's desired state in force (schedule) and its observations (readings, a sensor set
   * combined), with the stored fault reset applied to memory. May throw: run inside the guard
   * that drives the actuators safe.
   */
  private prepare(
    spec: LoopSpec,
    { desired: stored, actuators }: ObservedCycle,
    nowMs: number,
  ): PreparedCycle {
    // The setpoint and mode in force now (a schedule, a profile, a preset): evaluated at this
    // cycle's final `now`, after any clock step moved it.
    const scheduled = this.opts.schedule?.(stored, nowMs);
    const schedule = scheduled?.schedule;
    const desired: CycleDesired =
      schedule === undefined || scheduled === undefined
        ? stored
        : { ...stored, setpoint: scheduled.setpoint, mode: scheduled.mode };
    // A reset stored as desired state clears the latch before reconcile sees it, in the
    // cycle that first reads it and again after a crash brought an older memory back.
    this.memory = applyStoredFaultReset(this.memory, this.storedResetInMemoryFrame(desired.faultReset));
    const { faultResetGeneration } = this.memory;
    const sensorSet = observeSensorSet(spec, this.opts, nowMs, this.sensorSetAtMs);
    const reading = sensorSet ? sensorSet.reading : this.opts.latestReading();
    const interlocks = this.opts.interlockReadings?.();
    const disturbance = this.opts.disturbanceReading?.();
    const observed: LoopObserved = {
      ...(reading ? { reading } : {}),
      ...(sensorSet ? { sensorSet } : {}),
      actuators,
      ...availability(spec, this.opts),
      ...(interlocks ? { interlocks } : {}),
      ...(disturbance ? { disturbance } : {}),
    };
    return { desired, observed, scheduled, faultResetGeneration };
  }

  /**
   * Committed even when a write failed: a fault latched, a relay window started or a retry
   * scheduled in this cycle must not be lost. An unconfirmed command is retried on its own
   * schedule (command memory, backing off per actuator), so one unreachable plug neither
   * fails the loop nor delays its other actuators (a GPIO heater's pulse end, a safe state).
   */
  private commit(spec: LoopSpec, desired: CycleDesired, result: ReconcileResult, cycle: CycleOutcome): void {
    const { reading, faultResetGeneration, autotuneMark, requestEvent, writeFailures, nowMs } = cycle;
    // The reset this memory applied is named in it whatever reconcile keeps: stored with it,
    // so a restart from this memory does not apply that reset again to a newer latch. The
    // same for the autotune request acted on and the result stored.
    const marked = {
      ...result.memory,
      ...(faultResetGeneration === undefined ? {} : { faultResetGeneration }),
      ...autotuneMark,
    };
    const tuned = this.tunings.commit(spec, desired, marked, requestEvent);
    this.memory = tuned.memory;
    const { events, writeNow } = tuned;
    const status: PublishedLoopStatus = {
      ...result.status,
      tuning: tuned.status,
      ...(cycle.schedule === undefined ? {} : { schedule: cycle.schedule }),
    };
    this.writeFailures.report(writeFailures);
    if (writeFailures.length > 0) {
      this.publish(
        markCycleFailed(
          status,
          this.observedGeneration,
          `actuator write failed: ${writeFailures.join('; ')}`,
          nowMs,
        ),
      );
    } else {
      this.observedGeneration = desired.generation;
      this.publish(status);
    }
    this.opts.onCycle?.({
      loop: spec.id,
      nowMs,
      reading,
      memory: this.memory,
      status,
      commands: result.commands,
      events,
      writeNow,
    });
  }

  /**
   * Drives every actuator of the loop to its safe level, all at once (see runtime/drive-safe.ts:
   * a slow or unreachable device never delays another). Never throws. `event`: record the
   * call's one event (the daemon passes its store's event log).
   */
  async driveSafe(
    reason: string,
    event?: Pick<DriveSafeOptions, 'recordEvent' | 'eventKind' | 'eventSource'>,
  ): Promise<SafeOutcome> {
    const targets = loopActuators(this.spec).map(({ actuator }) => ({
      id: actuator.id,
      safeLevel: actuator.safeLevel,
      driver: this.opts.actuators.get(actuator.id),
    }));
    return driveSafe(targets, { reason, logger: this.opts.logger, loop: this.spec.id, ...event });
  }

  /**
   * The wall clock stepped by `deltaMs` (see Clock.onStep). Applied at the start of the next
   * cycle, or before reconcile if a cycle is observing now, never to a cycle's result
   * mid-flight (it would be overwritten), so every time in memory keeps its distance from now.
   */
  shiftTimes(deltaMs: number): void {
    if (!Number.isFinite(deltaMs)) return;
    this.pendingShiftMs += deltaMs;
    this.shiftTotalMs += deltaMs;
  }

  /** A reset of this loop was committed now (as `generation`): see storedResetInMemoryFrame. */
  resetCommitted(generation: number): void {
    this.committedReset = { generation, shiftTotalMs: this.shiftTotalMs };
  }

  /**
   * A stored reset's time moved by the wall-clock steps since it was committed, as every time
   * in memory was (a latch stepped forward must not look newer than the reset that covers it).
   * A reset committed before this process started saw none of its steps.
   */
  private storedResetInMemoryFrame(reset: StoredFaultReset | undefined): StoredFaultReset | undefined {
    if (reset === undefined) return undefined;
    const committed = this.committedReset;
    const atCommitMs = committed?.generation === reset.generation ? committed.shiftTotalMs : 0;
    const shiftedMs = this.shiftTotalMs - atCommitMs;
    return shiftedMs === 0 ? reset : { ...reset, atMs: reset.atMs + shiftedMs };
  }

  /** Memory, and the last combined reading's time with it, moved by a wall-clock step. */
  private shiftMemory(deltaMs: number): void {
    this.memory = shiftLoopMemory(this.memory, deltaMs);
    if (this.sensorSetAtMs !== undefined) this.sensorSetAtMs += deltaMs;
  }

  private takeShift(): number {
    const deltaMs = this.pendingShiftMs;
    this.pendingShiftMs = 0;
    return deltaMs;
  }

  /**
   * The latched fault a reset asked for at `requestedAtMs` would clear; undefined when none is
   * latched (or only one latched after it). The daemon answers "nothing to reset" from it
   * before storing a reset.
   */
  latchedFaultAt(requestedAtMs: number): LatchedFault | undefined {
    return resettableFault(this.memory, requestedAtMs);
  }

  /**
   * A latched fault found in the database after this loop started without it (it started on
   * the in-memory stand-in): held from the next cycle on. False when one is already latched.
   * The memory forgets which stored reset it applied: a reset newer than this latch (committed
   * while the file was away) is applied to it again at the next cycle, by time, and an older
   * one leaves it latched.
   */
  adoptLatchedFault(fault: LatchedFault): boolean {
    if (this.memory.latchedFault) return false;
    const { faultResetGeneration: _forgotten, ...memory } = this.memory;
    this.memory = { ...memory, latchedFault: fault };
    return true;
  }

  /**
   * A reloaded config changed this loop's settings: the next cycle uses them, from the same
   * memory (the PID re-bases on new gains, so the output continues where it was).
   */
  updateSpec(spec: LoopSpec): void {
    this.spec = spec;
  }

  /**
   * Desired state for this cycle. Reading it must never stop regulation: if it throws, the last
   * cycle's desired state is used (the error is logged at debug: the store reports it); only a
   * loop that never had one fails the cycle (inside run's error handling: Reconciled=False).
   */
  private readDesired(): CycleDesired {
    try {
      this.lastDesired = this.opts.desired();
    } catch (error) {
      if (!this.lastDesired) throw error;
      this.opts.logger.debug({ err: error }, 'desired state unreadable: regulating on the last known one');
    }
    return this.lastDesired;
  }

  /**
   * The `StorageHealthy` condition (the daemon's database): False names the problem and what to
   * do. Regulation does not depend on it; it is shown so a person fixes the disk.
   */
  setStorageHealth(health: NodeHealth, nowMs: number): void {
    this.setNodeCondition('StorageHealthy', health, nowMs);
  }

  /**
   * A condition of the whole node shown on this loop (StorageHealthy, ApiServing): False names
   * the problem and what to do. Regulation never depends on it.
   */
  setNodeCondition(type: NodeConditionType, health: NodeHealth, nowMs: number): void {
    const status = health.healthy ? 'True' : 'False';
    const before = this.nodeConditions.get(type);
    if (before?.status === status && before.reason === health.reason && before.message === health.message)
      return;
    this.nodeConditions.set(type, {
      type,
      status,
      reason: health.reason,
      message: health.message,
      lastTransitionMs: before && before.status === status ? before.lastTransitionMs : nowMs,
      observedGeneration: this.lastStatus?.generation ?? 0,
    });
    if (this.lastStatus) this.publish(this.lastStatus);
  }

  /** The `ConfigValid` condition: False while the file on disk is invalid (the last good one runs). */
  setConfigValidity(valid: boolean, message: string, nowMs: number, reason?: string): void {
    const status = valid ? 'True' : 'False';
    const unchanged = this.configValidity?.status === status && this.configValidity.message === message;
    if (unchanged) return;
    this.configValidity = {
      type: 'ConfigValid',
      status,
      reason: reason ?? (valid ? 'Applied' : 'Invalid'),
      message,
      lastTransitionMs:
        this.configValidity && this.configValidity.status === status
          ? this.configValidity.lastTransitionMs
          : nowMs,
      observedGeneration: this.lastStatus?.generation ?? 0,
    };
    if (this.lastStatus) this.publish(this.lastStatus);
  }

  private publish(status: PublishedLoopStatus): void {
    // Conditions the runtime sets, not reconcile: appended in a fixed order after reconcile's.
    const nodeConditions = NODE_CONDITION_ORDER.map((type) => this.nodeConditions.get(type));
    for (const extra of [this.configValidity, ...nodeConditions]) {
      if (!extra) continue;
      const conditions = status.conditions.filter((c) => c.type !== extra.type);
      status = {
        ...status,
        conditions: [...conditions, { ...extra, observedGeneration: status.generation }],
      };
    }
    this.lastStatus = status;
    this.opts.onStatus?.(status);
  }
}
