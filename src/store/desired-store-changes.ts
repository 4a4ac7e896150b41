import type { Presets } from '../core/schedule/types.js';
import type { Mode } from '../core/types.js';
import { applyConfigInTransaction } from './apply-config.js';
import { assertAutotuneCommand, duplicateStart } from './autotune-command.js';
import {
  type AutotuneCommand,
  requestAutotuneInTransaction,
  resetFaultInTransaction,
  setDesiredInTransaction,
} from './desired-changes.js';
import {
  type ApplyConfigResult,
  assertFiniteSetpoint,
  type ChangeSource,
  type ConfigLoop,
  type LoopDesiredRow,
  sha256,
} from './desired-records.js';
import { restoreInTransaction } from './desired-restore.js';
import { DesiredStoreCore } from './desired-store-core.js';
import { durably } from './durability.js';
import { refusedChange } from './health.js';
import {
  type ProfileCommand,
  profileCommandInTransaction,
  type RebaseScope,
  rebaseSchedulesInTransaction,
  selectPresetInTransaction,
} from './schedule-changes.js';
import { type NewTuning, TuningError } from './tuning-records.js';
import { applyTuningInTransaction, recordTuningInTransaction } from './tunings.js';

/**
 * DesiredStore's change paths: every operation that changes desired state (see DesiredStore's
 * module comment for precedence, durability and memory). Each checks what it is given, runs its
 * work (apply-config.ts, desired-changes.ts, schedule-changes.ts, tunings.ts, desired-restore.ts)
 * in one transaction committed before it returns, and puts the outcome in memory once committed.
 */
export class DesiredStoreChanges extends DesiredStoreCore {
  /**
   * Applies a validated config text (see desired-store.ts for precedence). The same content
   * hash as the latest applied config changes nothing; otherwise the config gets the next
   * generation, and so does each loop whose desired setpoint/mode or section actually changed.
   * One transaction, committed before returning.
   */
  applyConfig(input: { text: string; loops: Record<string, ConfigLoop> }): ApplyConfigResult {
    const hash = sha256(input.text);
    return this.commitReloading('applyConfig', () => {
      const result = applyConfigInTransaction(this.stmt, this.nowMs, input, hash);
      // An unchanged config wrote nothing: memory is already the file's.
      return { result, reload: result.changed };
    });
  }

  /**
   * A runtime change of setpoint and/or mode (already validated by the caller). Asking for the
   * current values is a no-op (QoS 1 redelivery): `{ changed: false, generation: <the loop's> }`,
   * unless `override` says a schedule or profile is in force over them (then it is a manual
   * change that takes over). Otherwise the change gets the next generation and is committed
   * before returning.
   * Throws for an unknown or removed loop.
   */
  setDesired(
    loop: string,
    change: { setpoint?: number; mode?: Mode },
    source: ChangeSource,
    requestId?: string,
    options: { override?: boolean } = {},
  ): { changed: boolean; generation: number } {
    if (change.setpoint !== undefined) assertFiniteSetpoint(loop, change.setpoint);
    const written = this.commitLoopChange('setDesired', loop, () =>
      setDesiredInTransaction(this.stmt, this.nowMs, { loop, change, source, requestId, ...options }),
    );
    return { changed: written.changed, generation: written.generation };
  }

  /**
   * A preset selected by hand (`name`), or none (`null`: clears the preset only). Selecting
   * stores the preset's setpoint (and mode) as the manual ones and stamps the manual change
   * (changedAtMs: the override rule). The preset already selected is a no-op (QoS 1
   * redelivery): `{ changed: false, generation: <the loop's> }`. Otherwise the next generation,
   * a 'preset-changed' event (and setpoint/mode ones), committed before returning. Unknown
   * names are the caller's to refuse (from the config); one not in `presets` throws, as does an
   * unknown or removed loop.
   */
  selectPreset(
    loop: string,
    name: string | null,
    presets: Presets,
    source: ChangeSource,
    requestId?: string,
    options: { override?: boolean } = {},
  ): { changed: boolean; generation: number } {
    const written = this.commitLoopChange('selectPreset', loop, () =>
      selectPresetInTransaction(this.stmt, this.nowMs, {
        loop,
        name,
        presets,
        source,
        ...(requestId === undefined ? {} : { requestId }),
        ...options,
      }),
    );
    return { changed: written.changed, generation: written.generation };
  }

  /**
   * Starts, pauses, resumes or stops the loop's profile (stored desired state: a restart
   * resumes it at the right step). A start while another runs restarts with the new name; the
   * same name again, a pause when paused or none, a resume when running or none, a stop when
   * none: no-ops (`changed: false`). Otherwise the next generation and a 'profile-<action>'
   * event, committed before returning. Unknown profile names are the caller's to refuse;
   * throws for an unknown or removed loop.
   */
  profileCommand(
    loop: string,
    command: ProfileCommand,
    source: ChangeSource,
    requestId?: string,
  ): { changed: boolean; generation: number } {
    const written = this.commitLoopChange('profileCommand', loop, () =>
      profileCommandInTransaction(this.stmt, this.nowMs, {
        loop,
        command,
        source,
        ...(requestId === undefined ? {} : { requestId }),
      }),
    );
    return { changed: written.changed, generation: written.generation };
  }

  /**
   * The wall clock stepped by `stepMs` (clock-step.ts): every live loop's profile times and
   * last manual change within `scope` (the times this process recorded under the old clock;
   * all without one) move with it, so a profile step is neither skipped nor repeated and a
   * manual hold keeps its length. One transaction, committed before returning; the rows
   * changed get the next generation. Throws refusedChange when the database refuses it
   * (memory keeps the times before).
   *
   * Called while another of this store's transactions is open (a clock read inside it noticed
   * the step), it defers itself until that one has ended: run nested, its writes would be
   * undone by the outer one writing the row it read before (on disk and in memory). A deferred
   * rebase the database refuses is reported to the observer (health) only.
   */
  rebaseSchedules(stepMs: number, scope?: RebaseScope): void {
    if (stepMs === 0 || !Number.isFinite(stepMs)) return;
    if (this.db.inTransaction) {
      queueMicrotask(() => {
        try {
          this.rebaseSchedules(stepMs, scope);
        } catch {
          // reported by observe (health); nobody is left to tell
        }
      });
      return;
    }
    try {
      this.commitReloading('rebaseSchedules', () => {
        const written = rebaseSchedulesInTransaction(this.stmt, this.nowMs, stepMs, scope);
        return { result: undefined, reload: written.length > 0 };
      });
    } catch (error) {
      throw refusedChange(error, this.db.name);
    }
  }

  /**
   * A person's fault reset (MQTT fault/reset, the Home Assistant button), stored as desired
   * state: the clock time it was received (`requestedAtMs`) with the next generation, and a
   * 'fault-reset' event, in one transaction committed before returning, so a crash right after
   * cannot bring the latch back while the event log says it was reset. The loop applies it once
   * (core/fault-reset.ts). Whether anything is latched is the caller's to check (the daemon).
   * Throws for an unknown or removed loop, and when the database refuses the write.
   */
  resetFault(
    loop: string,
    reset: { requestedAtMs: number; source: string; requestId?: string; fault?: string },
  ): { generation: number } {
    const { requestedAtMs } = reset;
    if (!Number.isFinite(requestedAtMs))
      throw new Error(`loop "${loop}": fault reset time must be a finite number, got ${requestedAtMs}`);
    const { committed } = this.commitLoopChange('resetFault', loop, () => ({
      committed: resetFaultInTransaction(this.stmt, this.nowMs, loop, reset),
    }));
    return { generation: committed!.generation };
  }

  /**
   * Stores a new tuning of `loop` as its next version (1, 2, 3…, never reused) and commits it
   * before returning. `apply: false` proposes it: history only, an event 'tuning-proposed', no
   * new generation (what the loop runs does not change). `apply: true` (the user accepted it
   * beforehand, or the loop's config applies autotune results) also puts it in force: the next
   * generation and one event 'tuning-applied' (data.recorded: true). `source`: where the gains
   * came from; `by`: who stored it (event source; required for 'manual', default 'autotune' for
   * an autotune's result stored by the daemon itself). Throws TuningError for invalid gains, model or details over
   * MAX_TUNING_DETAILS_BYTES (nothing written), and for an unknown or removed loop.
   */
  recordTuning(
    loop: string,
    tuning: NewTuning,
    options:
      | { apply: boolean; source: 'autotune'; by?: ChangeSource; requestId?: string }
      | { apply: boolean; source: 'manual'; by: ChangeSource; requestId?: string },
  ): { version: number; generation?: number } {
    const { apply, source, by, requestId } = options;
    if (source !== 'autotune' && source !== 'manual')
      throw new TuningError(
        `loop "${loop}": tuning source must be "autotune" or "manual", got ${String(source)}`,
      );
    const written = this.commitLoopChange('recordTuning', loop, () =>
      recordTuningInTransaction(this.stmt, this.nowMs, {
        loop,
        tuning,
        source,
        apply,
        by: by ?? 'autotune',
        requestId,
      }),
    );
    return apply
      ? { version: written.version, generation: written.committed!.generation }
      : { version: written.version };
  }

  /**
   * Puts a stored tuning of `loop` in force (accepting a proposal, or restoring an earlier one),
   * or the config file's gains (`'config'`). The one already in force changes nothing (QoS 1
   * redelivery): `{ changed: false, generation: <the loop's> }`, no event. Otherwise the next
   * generation and a 'tuning-applied' event, committed before returning. Throws
   * UnknownTuningError for a version the loop does not have (nothing written), and for an
   * unknown or removed loop.
   */
  applyTuning(
    loop: string,
    version: number | 'config',
    source: ChangeSource,
    requestId?: string,
  ): { changed: boolean; generation: number } {
    const written = this.commitLoopChange('applyTuning', loop, () =>
      applyTuningInTransaction(this.stmt, this.nowMs, { loop, version, by: source, requestId }),
    );
    return { changed: written.changed, generation: written.generation };
  }

  /**
   * A request to start or cancel `loop`'s autotune, stored as desired state like a fault
   * reset: the next generation, and an 'autotune-requested' or 'autotune-cancel-requested'
   * event, committed before returning. Every request gets a new generation (the loop acts on
   * each once), except a duplicate start (duplicateStart: a QoS 1 redelivery, a second press):
   * the same request, answered with the stored one's generation and nothing written.
   * Throws TuningError for invalid options, and for an unknown or removed loop.
   */
  requestAutotune(loop: string, request: AutotuneCommand): { generation: number; duplicate?: true } {
    assertAutotuneCommand(loop, request);
    const { committed, duplicateOf } = this.commitLoopChange('requestAutotune', loop, () => {
      const stored = this.live.get(loop);
      if (stored !== undefined && duplicateStart(loop, request, stored, this.storedMemory(loop)))
        return { committed: undefined, duplicateOf: stored.generation };
      return {
        committed: requestAutotuneInTransaction(this.stmt, this.nowMs, loop, request),
        duplicateOf: undefined,
      };
    });
    if (duplicateOf !== undefined) return { generation: duplicateOf, duplicate: true };
    return { generation: committed!.generation };
  }

  /**
   * Writes the runtime changes kept in memory into this store's file (a fresh one after a
   * damaged file was moved aside, or the real file opened after running on a stand-in). Apply
   * the config first: values from the file come from there. A setpoint or mode whose source is
   * not the file (MQTT, CLI, Home Assistant) and differs from the stored one is taken over with
   * its source, a new generation and a 'desired-restored' event. One transaction. Loops the file
   * does not know are skipped. Returns the loops it changed.
   */
  restoreDesired(rows: readonly LoopDesiredRow[]): string[] {
    return this.commitReloading('restoreDesired', () => ({
      result: restoreInTransaction(this.stmt, this.nowMs, rows),
      reload: true,
    }));
  }

  /**
   * Makes the next generation at least `floor + 1`: a fresh file continues the numbering the
   * loops have seen (generations never go back, even across a recovery).
   */
  raiseGenerationFloor(floor: number): void {
    this.observe('raiseGenerationFloor', () =>
      durably(this.db, () => {
        const stored = Number(this.stmt.getGeneration.get()?.value ?? 0);
        if (stored < floor) this.stmt.setGeneration.run(String(floor));
      }),
    );
  }
}
