import { shiftLoopMemory } from '../core/clock-step.js';
import type { LatchedFault } from '../core/effect-watch.js';
import { resettableFault, type StoredFaultReset } from '../core/fault-reset.js';
import type { LoopSpec } from '../core/loop-spec.js';
import { loopActuators } from '../core/loop-spec.js';
import { initialLoopMemory, type LoopMemory, resumeLoopMemory } from '../core/loop-state.js';
import {
  type CycleDesired,
  type CycleMemory,
  type CycleReadings,
  committedMemory,
  cycleWakeMs,
  type PreparedCycle,
  prepareCycle,
} from '../core/prepare-cycle.js';
import { type ReconcileResult, reconcile } from '../core/reconcile.js';
import { markCycleFailed } from '../core/status.js';
import type { ActuatorLevel } from '../core/types.js';
import { type DriveSafeOptions, driveSafe, type SafeOutcome } from './drive-safe.js';
import { availability, observeActuators, WriteFailureStreak, writeCommands } from './loop-reconciler-act.js';
import { LoopConditions, type NodeConditionType, type NodeHealth } from './loop-reconciler-conditions.js';
import type { LoopReconcilerOptions, PublishedLoopStatus } from './loop-reconciler-options.js';
import { LoopTunings } from './loop-reconciler-tuning.js';
import type { CycleResult } from './loop-runner.js';

// The cycle's desired state is the core's (core/prepare-cycle.ts); importers keep this name.
export type { CycleDesired } from '../core/prepare-cycle.js';
export type { NodeConditionType, NodeHealth } from './loop-reconciler-conditions.js';
export type {
  CompletedCycle,
  LoopReconcilerOptions,
  PublishedLoopStatus,
} from './loop-reconciler-options.js';

/** What a cycle observed before reconciling. */
interface ObservedCycle {
  desired: CycleDesired;
  actuators: Record<string, ActuatorLevel>;
}

/**
 * Reconciles one loop, one cycle at a time: observe everything fresh → decide (pure: the cycle's
 * inputs by core/prepare-cycle.ts, then reconcile) → act on the differences → commit.
 * The runner decides when it runs; this decides nothing about time except reading the clock.
 */
export class LoopReconciler {
  /** With the stored fault reset and autotune requests it applied (core/prepare-cycle.ts). */
  private memory: CycleMemory;
  private spec: LoopSpec;
  /** `ConfigValid` and the whole node's conditions, set by the daemon. */
  private readonly conditions = new LoopConditions();
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
    try {
      // Everything from the schedule to reconcile: a throw anywhere here (a schedule or sensor set
      // defect, a reading callback) must not freeze the actuators where they are.
      prepared = this.prepare(spec, observedCycle, nowMs);
      result = reconcile(prepared.spec, prepared.desired, prepared.observed, this.memory, nowMs);
    } catch (error) {
      await this.driveSafe(`reconcile failed: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
    this.sensorSetAtMs = prepared.sensorSetAtMs;
    const writeFailures = await writeCommands(this.spec, result.commands, this.opts);
    this.commit(spec, prepared, result, writeFailures, nowMs);
    // Woken at the next schedule point or profile step, not only at the next resync.
    return { nextWakeMs: cycleWakeMs(result.nextWakeMs, prepared) };
  }

  /**
   * The cycle's readings, read now, and what the core decides from them before reconcile
   * (core/prepare-cycle.ts): the desired state in force at this cycle's final `now` (after any
   * clock step moved it), the memory with the stored fault reset and autotune request applied,
   * the observations, the gains in force. May throw: run inside the guard that drives safe.
   */
  private prepare(
    spec: LoopSpec,
    { desired: stored, actuators }: ObservedCycle,
    nowMs: number,
  ): PreparedCycle {
    const request = stored.autotuneRequest;
    const prepared = prepareCycle(
      {
        spec,
        stored,
        memory: this.memory,
        faultReset: this.storedResetInMemoryFrame(stored.faultReset),
        readings: this.readings(spec, actuators),
        sensorSetAtMs: this.sensorSetAtMs,
        schedule: this.opts.schedule,
        autotune: this.tunings.requestContext(request),
      },
      nowMs,
    );
    this.memory = prepared.memory;
    this.tunings.noteGains(prepared.gainsInForce);
    this.tunings.requestActedOn(request);
    return prepared;
  }

  /** The latest readings of the loop's sensors and what its actuators' devices say of themselves. */
  private readings(spec: LoopSpec, actuators: Record<string, ActuatorLevel>): CycleReadings {
    const { opts } = this;
    // A sensor set without `sensorReadings` has every sensor missing: held safe, never unjudged.
    const sensors = spec.sensorSet ? { sensors: opts.sensorReadings?.() } : { latest: opts.latestReading() };
    return {
      ...sensors,
      actuators,
      interlocks: opts.interlockReadings?.(),
      disturbance: opts.disturbanceReading?.(),
      availability: availability(spec, opts).availability,
    };
  }

  /**
   * Committed even when a write failed: a fault latched, a relay window started or a retry
   * scheduled in this cycle must not be lost. An unconfirmed command is retried on its own
   * schedule (command memory, backing off per actuator), so one unreachable plug neither
   * fails the loop nor delays its other actuators (a GPIO heater's pulse end, a safe state).
   */
  private commit(
    spec: LoopSpec,
    prepared: PreparedCycle,
    result: ReconcileResult,
    writeFailures: string[],
    nowMs: number,
  ): void {
    const { desired, schedule } = prepared;
    const tuned = this.tunings.commit(
      spec,
      desired,
      committedMemory(result.memory, prepared),
      prepared.requestEvent,
    );
    this.memory = tuned.memory;
    const status: PublishedLoopStatus = {
      ...result.status,
      tuning: tuned.status,
      ...(schedule === undefined ? {} : { schedule }),
    };
    this.writeFailures.report(writeFailures);
    if (writeFailures.length > 0) {
      const message = `actuator write failed: ${writeFailures.join('; ')}`;
      this.publish(markCycleFailed(status, this.observedGeneration, message, nowMs));
    } else {
      this.observedGeneration = desired.generation;
      this.publish(status);
    }
    this.opts.onCycle?.({
      loop: spec.id,
      nowMs,
      reading: prepared.observed.reading,
      memory: this.memory,
      status,
      commands: result.commands,
      events: tuned.events,
      writeNow: tuned.writeNow,
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
    const generation = this.lastStatus?.generation ?? 0;
    if (this.conditions.setNodeCondition(type, health, nowMs, generation) && this.lastStatus)
      this.publish(this.lastStatus);
  }

  /** The `ConfigValid` condition: False while the file on disk is invalid (the last good one runs). */
  setConfigValidity(valid: boolean, message: string, nowMs: number, reason?: string): void {
    const generation = this.lastStatus?.generation ?? 0;
    if (this.conditions.setConfigValidity(valid, message, nowMs, reason, generation) && this.lastStatus)
      this.publish(this.lastStatus);
  }

  private publish(status: PublishedLoopStatus): void {
    // Conditions the runtime sets, not reconcile: appended in a fixed order after reconcile's.
    this.lastStatus = this.conditions.applyTo(status);
    this.opts.onStatus?.(this.lastStatus);
  }
}
