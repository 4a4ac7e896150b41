import type Database from 'better-sqlite3';
import {
  type EventRecord,
  type EventsFilter,
  eventsQuery,
  toStoredEvent,
  writeEvent,
} from './desired-events.js';
import type { LoopDesiredRow, StoredEvent } from './desired-records.js';
import { differingLoops } from './desired-restore.js';
import { DesiredStoreChanges } from './desired-store-changes.js';
import { durably } from './durability.js';
import type { EventFeed } from './event-feed.js';
import type { StoreObserver } from './observer.js';
import type { StoredTuning } from './tuning-records.js';
import { tuningHistory } from './tunings.js';

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

/**
 * The class is built in three layers: desired-store-core.ts (the database, statements, memory
 * and how an operation commits), desired-store-changes.ts (the change paths), and here the
 * reads and the node's bookkeeping (meta, applied configs, removals, the event log).
 */
export class DesiredStore extends DesiredStoreChanges {
  /** `db` must be migrated (openStore does it); `nowMs` stamps every row. */
  constructor(
    db: Database.Database,
    nowMs: () => number,
    private readonly options: DesiredStoreOptions = {},
  ) {
    super(db, nowMs, options);
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
    // Oldest first in time, as the API gives them (stable: the log's order at equal times): the
    // routine events a flush wrote in a batch were recorded before commands written since.
    return rows
      .reverse()
      .map(toStoredEvent)
      .sort((a, b) => a.atMs - b.atMs);
  }
}
