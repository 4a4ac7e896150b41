import type Database from 'better-sqlite3';
import type { Presets } from '../core/schedule/types.js';
import { isActive } from '../core/tuning/autotune.js';
import type { Mode } from '../core/types.js';
import { applyConfigInTransaction } from './apply-config.js';
import {
  type AutotuneCommand,
  requestAutotuneInTransaction,
  resetFaultInTransaction,
  setDesiredInTransaction,
} from './desired-changes.js';
import {
  type EventRecord,
  type EventsFilter,
  eventsQuery,
  toStoredEvent,
  writeEvent,
} from './desired-events.js';
import {
  type ApplyConfigResult,
  assertFiniteSetpoint,
  type ChangeSource,
  type ConfigLoop,
  type DesiredRecord,
  type LoopDesiredRow,
  type StoredEvent,
  sha256,
} from './desired-records.js';
import { differingLoops, restoreInTransaction } from './desired-restore.js';
import { type DesiredStatements, prepareStatements } from './desired-statements.js';
import { durably } from './durability.js';
import type { EventFeed } from './event-feed.js';
import { refusedChange } from './health.js';
import { decodeStateRow, type StateRow } from './loop-state-codec.js';
import { observed, type StoreObserver } from './observer.js';
import {
  type ProfileCommand,
  profileCommandInTransaction,
  type RebaseScope,
  rebaseSchedulesInTransaction,
  selectPresetInTransaction,
} from './schedule-changes.js';
import {
  type AutotuneRequest,
  checkedAutotuneOptions,
  type NewTuning,
  type StoredTuning,
  TuningError,
} from './tuning-records.js';
import {
  applyTuningInTransaction,
  liveDesiredRows,
  recordTuningInTransaction,
  tuningHistory,
  withTuning,
} from './tunings.js';

/**
 * Versioned desired state: what each loop is asked to do (setpoint, mode), where that came from,
 * and the generation at which it last changed.
 *
 * Generations are one monotonic counter for the node (meta 'lastGeneration'), shared by applied
 * configs and runtime changes, so every change of desired state has a unique, increasing number;
 * a loop's `generation` is the number of the last change that concerned it, and its status
 * reports the generation it has acted on (`observedGeneration`).
 *
 * Precedence between the file and runtime changes (MQTT, CLI, Home Assistant): the newer intent
 * wins, per field. Re-applying a file overrides a runtime setpoint only if the file itself changed
 * that setpoint since it was last applied; otherwise the runtime value stays in force, across
 * restarts (the failure "restored setpoint overridden by the file" of other thermostats).
 *
 * Every change is committed before the method returns, and durably (durability.ts: the WAL
 * fsynced before the commit returns), so a change answered as stored survives a power cut:
 * these writes are rare and critical. Routine events (`recordEvent`) and `setMeta` are not
 * desired state and commit like the batched history.
 *
 * The live desired state is also kept in memory, updated only after a commit: `desired()` and
 * `allDesired()` answer from it and never touch SQLite, so the control path (every loop cycle
 * reads its desired state) neither blocks on nor fails with the database. The file is written
 * through, and read only when the store is opened or moved to another file (`useDatabase`).
 *
 * Every event an operation writes is announced on the `feed` option (the HTTP API's live stream)
 * once that operation committed, after memory was updated; an operation that throws (rolled
 * back) announces nothing.
 *
 * Tunings are versioned per loop (tunings.ts): the desired state names the one in force, or
 * none for the config file's gains. A re-applied file puts its gains back in force only when it
 * changed them since it was last applied; otherwise a tuning chosen at runtime stays in force
 * across reloads and restarts (newer intent wins, as for setpoints).
 *
 * The work inside the transactions is in their own modules: apply-config.ts (applyConfig),
 * desired-changes.ts (setDesired, resetFault, requestAutotune), tunings.ts (recordTuning,
 * applyTuning, tunings), desired-restore.ts (restoreDesired, readBack);
 * the statements in desired-statements.ts, the event log's rows in desired-events.ts, the row
 * shapes in desired-records.ts.
 */

export type { AutotuneCommand } from './desired-changes.js';
// The shapes of desired state live in desired-records.ts; importers keep this module's path.
export type {
  ApplyConfigResult,
  ChangeSource,
  ConfigLoop,
  DesiredRecord,
  LoopDesiredRow,
  StoredEvent,
} from './desired-records.js';
export { sha256 } from './desired-records.js';
export type { ProfileCommand, RebaseScope } from './schedule-changes.js';
export {
  type AutotuneOptions,
  type AutotuneRequest,
  MAX_TUNING_DETAILS_BYTES,
  type NewTuning,
  type StoredTuning,
  type TuningChangeSource,
  TuningError,
  type TuningGains,
  type TuningModel,
  type TuningSource,
  UnknownTuningError,
} from './tuning-records.js';

/** Options of a DesiredStore run by the daemon. */
export interface DesiredStoreOptions {
  /** Told of every operation's outcome (health, recovery of a damaged file). */
  observer?: StoreObserver;
  /**
   * An event `recordEvent` could not write at once (disk full, locked): handed here to be
   * written later (the batched state store retries it at every flush) instead of throwing.
   * Without it, recordEvent throws like every other write. The event is not announced on
   * `feed` by this store then: whoever takes it does (StateStore.addEvent).
   */
  deferEvent?: (event: StoredEvent) => void;
  /** Told of every event this store wrote, once its operation committed (see the class comment). */
  feed?: EventFeed;
}

export class DesiredStore {
  private stmt: DesiredStatements;
  /** Live loops' desired state as last committed, by loop (see the module comment). */
  private readonly live = new Map<string, LoopDesiredRow>();

  /** `db` must be migrated (openStore does it); `nowMs` stamps every row. */
  constructor(
    private db: Database.Database,
    private readonly nowMs: () => number,
    private readonly options: DesiredStoreOptions = {},
  ) {
    this.stmt = prepareStatements(db);
    this.reloadLive(liveDesiredRows(this.stmt));
  }

  /**
   * Moves the store to another (migrated) database: a recovered or reopened file. The desired
   * state in memory becomes that file's; carry what must survive over first (`restoreDesired`
   * on a DesiredStore of the new file).
   */
  useDatabase(db: Database.Database): void {
    const stmt = prepareStatements(db);
    const rows = liveDesiredRows(stmt);
    this.db = db;
    this.stmt = stmt;
    this.reloadLive(rows);
  }

  /**
   * Applies a validated config text (see the module comment for precedence). The same content
   * hash as the latest applied config changes nothing; otherwise the config gets the next
   * generation, and so does each loop whose desired setpoint/mode or section actually changed.
   * One transaction, committed before returning.
   */
  applyConfig(input: { text: string; loops: Record<string, ConfigLoop> }): ApplyConfigResult {
    const hash = sha256(input.text);
    let liveAfter: LoopDesiredRow[] | undefined;
    return this.observe(
      'applyConfig',
      () =>
        durably(this.db, (): ApplyConfigResult => {
          const result = applyConfigInTransaction(this.stmt, this.nowMs, input, hash);
          // An unchanged config wrote nothing: memory is already the file's.
          if (result.changed) liveAfter = liveDesiredRows(this.stmt);
          return result;
        }),
      () => {
        if (liveAfter) this.reloadLive(liveAfter);
      },
    );
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
    let liveAfter: LoopDesiredRow[] | undefined;
    try {
      this.observe(
        'rebaseSchedules',
        () =>
          durably(this.db, () => {
            const written = rebaseSchedulesInTransaction(this.stmt, this.nowMs, stepMs, scope);
            if (written.length > 0) liveAfter = liveDesiredRows(this.stmt);
          }),
        () => {
          if (liveAfter) this.reloadLive(liveAfter);
        },
      );
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
   * A loop's tunings, newest first, each with `active` (in force now). Read from the file (for
   * plan, status, the dashboard; not the control path, which reads `desired(loop).tuning`).
   * A removed loop's history is kept: its tunings are listed, none active; [] for a loop
   * never tuned.
   */
  tunings(loop: string): Array<StoredTuning & { active: boolean }> {
    return this.observe('tunings', () => tuningHistory(this.stmt, loop));
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
    const { action, requestedAtMs } = request;
    if (action !== 'start' && action !== 'cancel')
      throw new TuningError(
        `loop "${loop}": autotune action must be "start" or "cancel", got ${String(action)}`,
      );
    if (!Number.isFinite(requestedAtMs))
      throw new TuningError(
        `loop "${loop}": autotune request time must be a finite number, got ${requestedAtMs}`,
      );
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

  /** The loop's memory as its last flush stored it (StateStore); undefined when none or unreadable. */
  private storedMemory(loop: string): unknown {
    const row = this.db
      .prepare<[string], StateRow>('SELECT state, memory_json, status_json FROM loop_state WHERE loop = ?')
      .get(loop);
    return row === undefined ? undefined : decodeStateRow(row).memory;
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
    let restored: string[] = [];
    let liveAfter: LoopDesiredRow[] | undefined;
    this.observe(
      'restoreDesired',
      () =>
        durably(this.db, () => {
          restored = restoreInTransaction(this.stmt, this.nowMs, rows);
          liveAfter = liveDesiredRows(this.stmt);
        }),
      () => {
        if (liveAfter) this.reloadLive(liveAfter);
      },
    );
    return restored;
  }

  /**
   * A loop's current desired state; undefined for unknown and removed loops. From memory: never
   * touches SQLite (the control path calls it every cycle).
   */
  desired(loop: string): LoopDesiredRow | undefined {
    const row = this.live.get(loop);
    return row === undefined ? undefined : { ...row };
  }

  /** Every live loop's desired state, by loop name (from memory, like `desired`). */
  allDesired(): LoopDesiredRow[] {
    return [...this.live.values()].sort((a, b) => (a.loop < b.loop ? -1 : 1)).map((row) => ({ ...row }));
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

  /**
   * Reads the live rows back from the file and returns the loops whose stored desired state
   * differs from memory. The control path never reads the file, so damage to these pages
   * would go unseen until the next command; the daemon calls this at every flush to find it
   * early (the observer then recovers the file).
   */
  readBack(): string[] {
    const stored = this.observe('readBack', () => this.stmt.liveRows.all());
    return differingLoops(stored, this.live);
  }

  /** The highest generation any live loop has (0 without loops). */
  highestGeneration(): number {
    let highest = 0;
    for (const row of this.live.values()) highest = Math.max(highest, row.generation);
    return highest;
  }

  /** The most recently applied config; undefined before the first. */
  latestConfig(): { generation: number; hash: string; text: string; appliedAtMs: number } | undefined {
    const row = this.observe('latestConfig', () => this.stmt.latestConfig.get());
    if (row === undefined) return undefined;
    return { generation: row.generation, hash: row.hash, text: row.text, appliedAtMs: row.applied_at_ms };
  }

  /**
   * A small piece of node state that must survive restarts (e.g. what MQTT last published);
   * undefined when it was never stored or cannot be read now (it never throws).
   */
  getMeta(key: string): string | undefined {
    try {
      const row = this.observe('getMeta', () =>
        this.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key),
      );
      return row?.value;
    } catch {
      // Unknown, as if never stored: what reads it (what MQTT last published) redoes its work.
      // The observer has the error (a damaged file is recovered).
      return undefined;
    }
  }

  /** Stores it at once (one small transaction). */
  setMeta(key: string, value: string): void {
    this.observe('setMeta', () =>
      this.db
        .prepare(
          'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
        )
        .run(key, value),
    );
  }

  /** Applied config texts, newest first (for finding the last one that defined a removed loop). */
  configsNewestFirst(): Array<{ generation: number; text: string }> {
    return this.observe('configsNewestFirst', () =>
      this.db
        .prepare<[], { generation: number; text: string }>(
          'SELECT generation, text FROM configs ORDER BY generation DESC',
        )
        .all(),
    ).map((row) => ({ generation: row.generation, text: row.text }));
  }

  /**
   * Forgets a removed loop once its finalizer ran: deletes its desired row and its saved memory
   * (a loop added later under the same name starts clean), and records 'loop-finalized'.
   * A no-op for a loop that is not pending removal (e.g. re-added meanwhile).
   */
  markRemovalFinalized(loop: string): void {
    this.observe('markRemovalFinalized', () =>
      durably(this.db, () => {
        if (this.stmt.deleteRemoved.run(loop).changes === 0) return;
        this.stmt.deleteLoopState.run(loop);
        writeEvent(this.stmt, {
          atMs: this.nowMs(),
          loop,
          kind: 'loop-finalized',
          message: `loop ${loop} finalized`,
        });
      }),
    );
  }

  /** Loops removed from the config whose finalizer has not completed (kept across restarts). */
  pendingRemovals(): string[] {
    return this.observe('pendingRemovals', () => this.stmt.pending.all()).map((row) => row.loop);
  }

  /** Appends to the event log, stamped now. `data` must be JSON-serializable. */
  recordEvent(event: {
    loop?: string;
    kind: string;
    source?: string;
    message: string;
    data?: unknown;
  }): void {
    const atMs = this.nowMs();
    try {
      this.observe('recordEvent', () => writeEvent(this.stmt, { atMs, ...event }));
    } catch (error) {
      const defer = this.options.deferEvent;
      if (!defer) throw error;
      // An event is history, not desired state: it waits for the next flush rather than fail
      // the caller (a rejected command must still get its result).
      defer({ atMs, ...event });
    }
  }

  /**
   * Events, oldest first. `sinceMs`/`untilMs`: at or after / at or before that time; `loop`,
   * `kind`: that loop's, that kind's only (all in SQL); `limit`: the newest `limit` of those.
   */
  events(opts: EventsFilter = {}): StoredEvent[] {
    const { sql, params } = eventsQuery(opts);
    const rows = this.observe('events', () =>
      this.db.prepare<Array<string | number>, EventRecord>(sql).all(...params),
    );
    return rows.reverse().map(toStoredEvent);
  }

  /**
   * Runs one store operation, telling the observer how it went (see observed). The events it
   * wrote are announced on the feed once it returned (committed), after `afterCommit` put the
   * outcome in memory, so a listener reading desired state sees the change it is told about.
   * When it throws (rolled back), they are dropped.
   */
  /**
   * One runtime change of one loop's desired state: `work` runs in an immediate transaction and
   * returns the row it committed (absent: it changed nothing); once committed, that row (with the
   * tuning in force) is what `desired(loop)` answers. A database that refuses it throws
   * refusedChange, and memory keeps the state before.
   */
  private commitLoopChange<T extends { committed?: DesiredRecord }>(
    operation: string,
    loop: string,
    work: () => T,
  ): Omit<T, 'committed'> & { committed: LoopDesiredRow | undefined } {
    try {
      return this.observe(
        operation,
        () =>
          durably(this.db, () => {
            const result = work();
            return { ...result, committed: result.committed && withTuning(this.stmt, result.committed) };
          }),
        ({ committed }) => {
          if (committed) this.live.set(loop, committed);
        },
      );
    } catch (error) {
      throw refusedChange(error, this.db.name);
    }
  }

  private observe<T>(operation: string, run: () => T, afterCommit?: (result: T) => void): T {
    const { written } = this.stmt;
    written.length = 0;
    let result: T;
    try {
      result = observed(this.options.observer, operation, run);
    } catch (error) {
      written.length = 0;
      throw error;
    }
    const committed = written.splice(0);
    try {
      afterCommit?.(result);
    } finally {
      for (const event of committed) this.options.feed?.announce(event);
    }
    return result;
  }

  private reloadLive(rows: readonly LoopDesiredRow[]): void {
    this.live.clear();
    for (const row of rows) this.live.set(row.loop, row);
  }
}

/** How close to the stored start request a same start counts as its duplicate, ms. */
export const DUPLICATE_START_WINDOW_MS = 30_000;

/**
 * Whether `request` repeats the stored start request (a QoS 1 redelivery, a second press of the
 * button): a start with the same options, received within DUPLICATE_START_WINDOW_MS of it, while
 * that one is still to come (the loop has not acted on it) or its run is going. Stored again,
 * it would get a generation of its own and the loop would refuse it ("already running"). A
 * start after the stored one was refused or its run ended is a new request. `memory`: the loop's
 * memory as stored (a loop acting on a request writes it at once).
 */
export function duplicateStart(
  loop: string,
  request: AutotuneCommand,
  row: LoopDesiredRow,
  memory: unknown,
): boolean {
  const stored: AutotuneRequest | undefined = row.autotuneRequest;
  if (request.action !== 'start' || stored?.action !== 'start' || stored.optionsUnreadable) return false;
  if (Math.abs(request.requestedAtMs - stored.atMs) > DUPLICATE_START_WINDOW_MS) return false;
  if (checkedAutotuneOptions(loop, request.options ?? {}) !== checkedAutotuneOptions(loop, stored.options))
    return false;
  const marks = (memory ?? {}) as {
    autotuneRequestGeneration?: unknown;
    autotuneRefused?: { generation?: unknown };
    autotune?: Parameters<typeof isActive>[0];
  };
  if (marks.autotuneRequestGeneration !== stored.generation) return true;
  return marks.autotuneRefused?.generation !== stored.generation && isActive(marks.autotune);
}
