import type { Logger } from 'pino';
import type { LoopSpec } from '../core/loop-spec.js';
import type { LoopMemory } from '../core/loop-state.js';
import type { AutotuneMemory } from '../core/tuning/autotune.js';
import {
  type ActiveTuning,
  type AutotuneDefaults,
  type AutotuneEvent,
  type AutotuneMark,
  autotuneMarkOf,
  autotuneTransition,
  mayApplyUnseen,
  type TuningStatus,
  tuningStatus,
  unrecordedTuning,
} from '../core/tuning/loop-tuning.js';
import type { NewTuning } from '../core/tuning/stored-tuning.js';

/** What a loop's tunings need from the reconciler's options (see LoopReconcilerOptions). */
export interface LoopTuningPort {
  logger: Logger;
  autotuneDefaults?: () => AutotuneDefaults | undefined;
  recordTuning?: (tuning: NewTuning, apply: boolean) => { version: number };
}

/** The desired state a loop's tunings read (CycleDesired's part). */
export interface TuningDesired {
  tuning?: ActiveTuning;
  lastTuningVersion?: number;
}

/** A memory with its autotune marks. */
type MarkedMemory = LoopMemory & AutotuneMark;

/**
 * One loop's tunings in the cycle (LoopReconciler): the gains in force, the stored autotune
 * request acted on once, a finished run's result stored once, the events and the status part.
 * The decisions are pure (core/prepare-cycle.ts, core/tuning/); this keeps what one cycle hands
 * to the next, logs, and stores a result.
 */
export class LoopTunings {
  /** The autotune as the last cycle left it (at start: as stored, before a restart aborted it). */
  private seen: AutotuneMemory | undefined;
  /** Why the last finished run's result could not be stored (retried every cycle). */
  private unrecorded: string | undefined;
  /** The tuning version whose gains the last cycle used ('config': the file's). */
  private gainsInForce: number | 'config' = 'config';
  /** The marks the last cycle committed (what changed since, for writeNow). */
  private committed: AutotuneMark = {};

  /**
   * The newest stored autotune request's generation when this loop was built (the process
   * started, or a reload rebuilt it): a request not newer than it was stored before, and a start
   * the memory has not acted on is then one a crash interrupted. `unknown` until desired state
   * could be read (a damaged store at start): then the first cycle's request counts as before.
   */
  private requestGenerationAtStart: number | undefined | 'unknown';

  constructor(
    private readonly port: LoopTuningPort,
    stored: LoopMemory | undefined,
    desiredAtStart: () => { autotuneRequest?: { generation: number } },
  ) {
    this.seen = stored?.autotune;
    try {
      this.requestGenerationAtStart = desiredAtStart().autotuneRequest?.generation;
    } catch {
      this.requestGenerationAtStart = 'unknown';
    }
  }

  /** A change of the gains in force (core/prepare-cycle.ts specInForce) is logged once. */
  noteGains(inForce: number | 'config'): void {
    if (inForce === this.gainsInForce) return;
    this.port.logger.info(
      { tuning: inForce },
      inForce === 'config' ? 'regulating with the config file gains' : `regulating with tuning ${inForce}`,
    );
    this.gainsInForce = inForce;
  }

  /**
   * What the core needs to act on the stored request (core/tuning/autotune-request.ts): the
   * config's defaults, and whether the request was stored before this loop was built. Reads no
   * state it changes: requestActedOn settles it once the cycle got that far.
   */
  requestContext(request: { generation: number } | undefined): {
    defaults: AutotuneDefaults | undefined;
    storedBeforeStart: boolean;
  } {
    const defaults = this.port.autotuneDefaults?.();
    const atStart =
      this.requestGenerationAtStart === 'unknown' ? request?.generation : this.requestGenerationAtStart;
    const storedBeforeStart = request !== undefined && atStart !== undefined && request.generation <= atStart;
    return { defaults, storedBeforeStart };
  }

  /** The cycle acted on the stored request: an unknown generation at start is this one's. */
  requestActedOn(request: { generation: number } | undefined): void {
    if (this.requestGenerationAtStart === 'unknown') this.requestGenerationAtStart = request?.generation;
  }

  /**
   * After reconcile: the result stored if a run finished, the cycle's events (the request's,
   * the run's change, a failed store), whether the memory must be written now, and the status
   * part. `spec`: the loop's (file) spec.
   */
  commit<M extends MarkedMemory>(
    spec: LoopSpec,
    desired: TuningDesired,
    marked: M,
    requestEvent: AutotuneEvent | undefined,
  ): { memory: M; events: AutotuneEvent[]; writeNow: boolean; status: TuningStatus } {
    const recorded = this.recordResult(spec, desired.tuning, marked);
    const memory = recorded.memory;
    const events = [requestEvent, autotuneTransition(this.seen, memory.autotune), recorded.event].filter(
      (event): event is AutotuneEvent => event !== undefined,
    );
    const writeNow =
      events.length > 0 ||
      memory.autotuneRequestGeneration !== this.committed.autotuneRequestGeneration ||
      memory.tuningRecorded !== this.committed.tuningRecorded;
    this.seen = memory.autotune;
    this.committed = autotuneMarkOf(memory);
    return { memory, events, writeNow, status: tuningStatus(spec, desired, memory, this.unrecorded) };
  }

  /**
   * A finished run's result not stored yet is stored now (once: the memory then names the run;
   * the daemon's recordTuning also finds a result stored before a crash lost that mark). A
   * failure leaves the result in memory and status, and is retried next cycle.
   */
  private recordResult<M extends MarkedMemory>(
    spec: LoopSpec,
    active: ActiveTuning | undefined,
    memory: M,
  ): { memory: M; event?: AutotuneEvent } {
    // The side not tuned keeps the gains in force (the tuning only while it is the PID's).
    const inForce = spec.controller.type === 'pid' ? active : undefined;
    const tuning = unrecordedTuning(memory, { spec, tuning: inForce });
    const record = this.port.recordTuning;
    if (tuning === undefined || record === undefined || memory.autotune === undefined) {
      this.unrecorded = undefined;
      return { memory };
    }
    const apply = (this.port.autotuneDefaults?.()?.autoApply ?? false) && mayApplyUnseen(spec, tuning);
    try {
      const { version } = record(tuning, apply);
      this.unrecorded = undefined;
      return { memory: { ...memory, tuningRecorded: { startedAtMs: memory.autotune.startedAtMs, version } } };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const first = this.unrecorded === undefined;
      this.unrecorded = message;
      if (!first) return { memory };
      this.port.logger.error({ err: error }, 'autotune result could not be stored: retrying every cycle');
      const event: AutotuneEvent = {
        kind: 'autotune-unrecorded',
        message: `autotune result not stored yet (retrying): ${message}`,
      };
      return { memory, event };
    }
  }
}
