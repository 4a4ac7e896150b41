import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { type BackoffOptions, backoffDelayMs } from '../time/backoff.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import { closeStore, openStandIn, openStore } from './database.js';
import { DesiredStore } from './desired-store.js';
import { EventFeed } from './event-feed.js';
import {
  classifyStorageError,
  describeProblem,
  HEALTHY,
  type StorageHealth,
  type StorageProblem,
} from './health.js';
import type { StoreObserver } from './observer.js';
import { pruneHistory, type RetentionOptions } from './retention.js';
import { StateStore } from './state-store.js';
import {
  carryLoopStates,
  closeQuietly,
  type HandoverEvent,
  type RunningState,
  writeDesiredInto,
} from './store-handover.js';
import {
  damagedEvent,
  logDamageRecovered,
  openedEvent,
  type RecoveryTarget,
  replaceDamaged,
  standInMessage,
} from './store-recovery.js';

// Defined with the handover it describes (store-handover.ts); importers keep this module's path.
export type { RunningState } from './store-handover.js';

export interface StoreSupervisorOptions {
  path: string;
  clock: Clock;
  logger: Logger;
  retention?: RetentionOptions;
  /** Attempts to open the file after it could not be: capped backoff. Default 1 s doubling to 30 s. */
  reopen?: BackoffOptions;
}

/**
 * The write that ends a streak of failures: the batched flush (it carries everything held back,
 * and the daemon runs it every storage.memoryFlushS whatever happens). A smaller write going
 * through says little: on a nearly full disk a command or the hourly prune (deletes) may fit
 * where the flush does not, and ending the streak on it would log the failure again each time.
 */
const STREAK_ENDING = new Set(['flush']);

/**
 * Keeps the daemon's store usable whatever happens to its file, so that storage never stops
 * regulation (the loops read desired state from memory; see DesiredStore):
 *
 * - a file that cannot be opened (full disk, unwritable directory, another writer's lock) is
 *   replaced by an in-memory stand-in, and opened again with capped backoff; once it opens,
 *   the desired state in memory and every loop's memory are carried over into it;
 * - a file found damaged while running (SQLITE_CORRUPT/NOTADB on any read or write) is moved
 *   aside as at start-up and a fresh one takes the running config, the desired state in memory
 *   and the loops' memory (latched faults), without a restart;
 * - other failures (full, locked, read-only) are shown and retried by whoever wrote: the batched
 *   flush at its next turn, a command by its sender (it was answered rejected).
 *
 * Every failure shows as `health()` (the StorageHealthy condition), and is logged once per
 * streak of failures, with the recovery logged once.
 *
 * `events` tells every event both stores record as it happens (the HTTP API's live stream); it
 * is the same feed, with the same listeners, whatever database the stores move to.
 */
export class StoreSupervisor implements StoreObserver {
  readonly desired: DesiredStore;
  readonly state: StateStore;
  /** Every event recorded, once it counts (see EventFeed); kept across every change of database. */
  readonly events: EventFeed;
  private db: Database.Database;
  /** False while on the in-memory stand-in. */
  private onFile: boolean;
  private current: StorageHealth = HEALTHY;
  private readonly listeners: Array<(health: StorageHealth) => void> = [];
  private streak: { problem: StorageProblem; failures: number; sinceMs: number } | undefined;
  private running: RunningState | undefined;
  private reopenTimer: TimerHandle | undefined;
  private reopenFailures = 0;
  private recoveryTimer: TimerHandle | undefined;
  private closed = false;
  private failures = 0;

  constructor(private readonly opts: StoreSupervisorOptions) {
    const nowMs = () => opts.clock.nowMs();
    let db: Database.Database;
    let openError: unknown;
    let recovered: { movedTo: string; reason: string } | undefined;
    try {
      const opened = openStore({ path: opts.path, logger: opts.logger, nowMs });
      db = opened.db;
      recovered = opened.recovered;
      this.onFile = true;
    } catch (error) {
      openError = error;
      db = openStandIn(opts.logger);
      this.onFile = false;
    }
    this.db = db;
    this.events = new EventFeed((error) =>
      opts.logger.error({ err: error }, 'event feed listener failed; the event is recorded'),
    );
    this.desired = new DesiredStore(db, nowMs, {
      observer: this,
      // Announced there, once: a deferred event is not the desired store's to announce.
      deferEvent: (event) => this.state.addEvent(event),
      feed: this.events,
    });
    this.state = new StateStore(db, this, { feed: this.events });
    if (recovered) this.desired.recordEvent(openedEvent(opts.path, recovered));
    if (openError !== undefined) this.standInAfter(openError);
  }

  /** The database in use (the stand-in while the file cannot be opened). For tests and the CLI close. */
  get database(): Database.Database {
    return this.db;
  }

  /** True while the file could not be opened and an in-memory stand-in is in use. */
  get onStandIn(): boolean {
    return !this.onFile;
  }

  health(): StorageHealth {
    return this.current;
  }

  /**
   * Store operations the database refused since start (full, locked, unwritable, damaged,
   * failed), for metrics; refusals that are not storage failures (an unknown loop) are not
   * counted. Every failed attempt counts, retries included.
   */
  get failedOperations(): number {
    return this.failures;
  }

  /** Called with every change of health (the daemon updates every loop's StorageHealthy). */
  onHealthChange(listener: (health: StorageHealth) => void): void {
    this.listeners.push(listener);
  }

  /**
   * The file is open but cannot take the config at start (a full disk under an existing file):
   * the daemon regulates on the stand-in, from the config, and the file is tried again later.
   */
  fallBackToStandIn(error: unknown): void {
    this.standInAfter(error);
  }

  /** The daemon tells what a new database must be given (see RunningState). */
  attach(running: RunningState): void {
    this.running = running;
  }

  /** History retention and the events cap (hourly, by the daemon). */
  prune(nowMs: number): void {
    const { retention } = this.opts;
    this.observe('prune', () => pruneHistory(this.db, nowMs, retention));
  }

  /**
   * After each flush (the daemon's timer, off the control path): reads the desired rows back,
   * so damage to pages the loops never read is found and recovered within a flush period.
   */
  check(): void {
    if (!this.onFile || this.recoveryTimer) return;
    const differing = this.desired.readBack();
    if (differing.length > 0) {
      this.opts.logger.warn(
        { loops: differing },
        `desired state in ${this.opts.path} differs from memory for ${differing.join(', ')}: memory is used`,
      );
    }
  }

  /** Stops retrying and closes the database (after the daemon's last flush). */
  close(): void {
    this.closed = true;
    if (this.reopenTimer) this.opts.clock.clearTimer(this.reopenTimer);
    if (this.recoveryTimer) this.opts.clock.clearTimer(this.recoveryTimer);
    // Left in rollback mode: readable by group members while the daemon is stopped.
    if (this.onFile) closeStore(this.db);
    else closeQuietly(this.db);
  }

  succeeded(operation: string): void {
    if (!this.onFile || this.streak === undefined || !STREAK_ENDING.has(operation)) return;
    const { failures, sinceMs, problem } = this.streak;
    this.streak = undefined;
    const seconds = Math.round((this.opts.clock.nowMs() - sinceMs) / 1000);
    this.opts.logger.info(
      { db: this.opts.path, failures, seconds, problem },
      `database ${this.opts.path} writable again after ${failures} failed operation(s) over ${seconds} s`,
    );
    this.setHealth(HEALTHY);
  }

  failed(operation: string, error: unknown): void {
    const problem = classifyStorageError(error);
    if (problem === undefined) return;
    this.failures++;
    if (!this.onFile || this.closed) return;
    if (problem === 'Corrupt') {
      this.scheduleRecovery(error);
      return;
    }
    const message = describeProblem(problem, this.opts.path, error);
    if (this.streak?.problem === problem) {
      this.streak.failures++;
      this.opts.logger.debug({ err: error, operation }, `database still failing: ${operation}`);
    } else {
      // Once per streak (and again if the kind of failure changes): never once per write.
      this.streak = { problem, failures: 1, sinceMs: this.opts.clock.nowMs() };
      this.opts.logger.error({ err: error, db: this.opts.path, operation }, message);
    }
    this.setHealth({ healthy: false, reason: problem, message });
  }

  private observe<T>(operation: string, run: () => T): T {
    try {
      const result = run();
      this.succeeded(operation);
      return result;
    } catch (error) {
      this.failed(operation, error);
      throw error;
    }
  }

  private setHealth(health: StorageHealth): void {
    if (health.reason === this.current.reason && health.message === this.current.message) return;
    this.current = health;
    for (const listener of this.listeners) {
      // Called from timers (recovery, reopen): a listener that throws must not end the process.
      try {
        listener(health);
      } catch (error) {
        this.opts.logger.error({ err: error }, 'storage health listener failed');
      }
    }
  }

  /**
   * A damaged file: recovered from a timer, not inside the store operation that met the damage
   * (the caller sees its error; the next operations go to the fresh file).
   */
  private scheduleRecovery(error: unknown): void {
    if (this.recoveryTimer) return;
    const message = describeProblem('Corrupt', this.opts.path, error);
    this.opts.logger.error({ err: error, db: this.opts.path }, message);
    this.setHealth({ healthy: false, reason: 'Corrupt', message });
    this.recoveryTimer = this.opts.clock.setTimer(() => {
      this.recoveryTimer = undefined;
      this.recover(error);
    }, 0);
  }

  private recover(error: unknown): void {
    if (this.closed) return;
    const reason = error instanceof Error ? error.message : String(error);
    const damaged = this.db;
    try {
      const { db, movedTo } = replaceDamaged(this.recoveryTarget());
      this.adopt(db, damagedEvent(reason, movedTo));
      closeQuietly(damaged);
      logDamageRecovered(this.recoveryTarget(), movedTo, reason);
    } catch (replaceError) {
      this.standInAfter(replaceError);
    }
  }

  /**
   * Moves the stores to `db`, after writing into it what the daemon holds in memory: the
   * running config, the desired state (generations continue), every loop's memory and status.
   * Throws (leaving the stores where they were, `db` closed) when `db` cannot take them.
   */
  private adopt(db: Database.Database, event?: HandoverEvent): void {
    const recorded = writeDesiredInto(db, () => this.opts.clock.nowMs(), this.desired, this.running, event);
    const previous = this.db;
    this.db = db;
    this.onFile = db.name !== ':memory:';
    this.desired.useDatabase(db);
    this.state.useDatabase(db);
    carryLoopStates(previous, db, this.state, this.running);
    this.streak = undefined;
    this.reopenFailures = 0;
    this.setHealth(HEALTHY);
    // Now that they are in the database the stores use (a listener may read it back).
    for (const recordedEvent of recorded) this.events.announce(recordedEvent);
    try {
      this.state.flush();
    } catch {
      // Reported by the observer; the daemon's next flush retries.
    }
  }

  /**
   * The file cannot be used: regulate on an in-memory stand-in that holds the desired state
   * (the running config and what is in memory), and try the file again with capped backoff.
   */
  private standInAfter(error: unknown): void {
    const problem = classifyStorageError(error) ?? 'Failed';
    const message = standInMessage(problem, this.opts.path, error);
    if (this.onFile) {
      const previous = this.db;
      try {
        this.adopt(openStandIn(this.opts.logger));
      } catch {
        // An in-memory database does not fail to take a few rows; if it did, the stores stay.
      }
      if (this.db !== previous) closeQuietly(previous);
    }
    this.onFile = false;
    if (this.streak?.problem !== problem) {
      this.streak = { problem, failures: 1, sinceMs: this.opts.clock.nowMs() };
      this.opts.logger.error({ err: error, db: this.opts.path }, message);
    } else this.streak.failures++;
    this.setHealth({ healthy: false, reason: problem, message });
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.closed || this.reopenTimer) return;
    this.reopenFailures++;
    const delayMs = backoffDelayMs(
      this.reopenFailures,
      this.opts.reopen ?? { initialMs: 1_000, maxMs: 30_000 },
    );
    this.reopenTimer = this.opts.clock.setTimer(() => {
      this.reopenTimer = undefined;
      this.reopen();
    }, delayMs);
  }

  /** Where the file is and how a replacement is opened (store-recovery.ts). */
  private recoveryTarget(): RecoveryTarget {
    return { path: this.opts.path, logger: this.opts.logger, nowMs: () => this.opts.clock.nowMs() };
  }

  /** One attempt to open the file and carry the stand-in's state over into it. */
  private reopen(): void {
    if (this.closed || this.onFile) return;
    const standIn = this.db;
    try {
      // No quick_check: the loops run meanwhile, and it reads the whole file; damage is still
      // found by the first read or write that meets it.
      const { db, recovered } = openStore({
        path: this.opts.path,
        logger: this.opts.logger,
        nowMs: () => this.opts.clock.nowMs(),
        quickCheck: false,
      });
      this.adopt(db, openedEvent(this.opts.path, recovered));
      closeQuietly(standIn);
      const seconds = this.streak ? Math.round((this.opts.clock.nowMs() - this.streak.sinceMs) / 1000) : 0;
      this.opts.logger.info(
        { db: this.opts.path, seconds },
        `database ${this.opts.path} opened; the state kept in memory was carried over into it`,
      );
    } catch (error) {
      const problem = classifyStorageError(error) ?? 'Failed';
      const message = standInMessage(problem, this.opts.path, error);
      if (this.streak?.problem !== problem) {
        this.streak = { problem, failures: 1, sinceMs: this.opts.clock.nowMs() };
        this.opts.logger.error({ err: error, db: this.opts.path }, message);
      } else {
        this.streak.failures++;
        this.opts.logger.debug({ err: error }, 'database still cannot be opened');
      }
      this.setHealth({ healthy: false, reason: problem, message });
      this.scheduleReopen();
    }
  }
}
