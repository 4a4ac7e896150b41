import type Database from 'better-sqlite3';
import type { DesiredRecord, LoopDesiredRow } from './desired-records.js';
import { type DesiredStatements, prepareStatements } from './desired-statements.js';
import { durably } from './durability.js';
import type { EventFeed } from './event-feed.js';
import { refusedChange } from './health.js';
import { decodeStateRow, type StateRow } from './loop-state-codec.js';
import { observed, type StoreObserver } from './observer.js';
import { liveDesiredRows, withTuning } from './tunings.js';

/** What the way every operation runs is told of (DesiredStoreOptions has them). */
export interface OperationHooks {
  /** Told of every operation's outcome. */
  observer?: StoreObserver;
  /** Told of every event an operation wrote, once it committed. */
  feed?: EventFeed;
}

/**
 * What a DesiredStore works on and how each of its operations runs: the database and its
 * prepared statements, the live desired state kept in memory (see DesiredStore), and the
 * commits that keep the two in step. DesiredStoreChanges adds the change paths, DesiredStore
 * the reads and the node's bookkeeping.
 */
export class DesiredStoreCore {
  protected stmt: DesiredStatements;
  /** Live loops' desired state as last committed, by loop (see DesiredStore's module comment). */
  protected readonly live = new Map<string, LoopDesiredRow>();

  /** `db` must be migrated (openStore does it); `nowMs` stamps every row. */
  constructor(
    protected db: Database.Database,
    protected readonly nowMs: () => number,
    private readonly hooks: OperationHooks = {},
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
   * One change of any loops' desired state: `work` runs in one durable transaction and says
   * whether it wrote rows; if so, once committed, memory takes the file's live rows.
   */
  protected commitReloading<T>(operation: string, work: () => { result: T; reload: boolean }): T {
    let liveAfter: LoopDesiredRow[] | undefined;
    return this.observe(
      operation,
      () =>
        durably(this.db, () => {
          const { result, reload } = work();
          if (reload) liveAfter = liveDesiredRows(this.stmt);
          return result;
        }),
      () => {
        if (liveAfter) this.reloadLive(liveAfter);
      },
    );
  }

  /**
   * One runtime change of one loop's desired state: `work` runs in an immediate transaction and
   * returns the row it committed (absent: it changed nothing); once committed, that row (with the
   * tuning in force) is what `desired(loop)` answers. A database that refuses it throws
   * refusedChange, and memory keeps the state before.
   */
  protected commitLoopChange<T extends { committed?: DesiredRecord }>(
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

  /**
   * Runs one store operation, telling the observer how it went (see observed). The events it
   * wrote are announced on the feed once it returned (committed), after `afterCommit` put the
   * outcome in memory, so a listener reading desired state sees the change it is told about.
   * When it throws (rolled back), they are dropped.
   */
  protected observe<T>(operation: string, run: () => T, afterCommit?: (result: T) => void): T {
    const { written } = this.stmt;
    written.length = 0;
    let result: T;
    try {
      result = observed(this.hooks.observer, operation, run);
    } catch (error) {
      written.length = 0;
      throw error;
    }
    const committed = written.splice(0);
    try {
      afterCommit?.(result);
    } finally {
      for (const event of committed) this.hooks.feed?.announce(event);
    }
    return result;
  }

  /** The loop's memory as its last flush stored it (StateStore); undefined when none or unreadable. */
  protected storedMemory(loop: string): unknown {
    const row = this.db
      .prepare<[string], StateRow>('SELECT state, memory_json, status_json FROM loop_state WHERE loop = ?')
      .get(loop);
    return row === undefined ? undefined : decodeStateRow(row).memory;
  }

  protected reloadLive(rows: readonly LoopDesiredRow[]): void {
    this.live.clear();
    for (const row of rows) this.live.set(row.loop, row);
  }
}
