import type Database from 'better-sqlite3';

/**
 * Two kinds of commit on the daemon's one connection, told apart by `PRAGMA synchronous`, which
 * SQLite lets a connection change between transactions (never inside one):
 *
 * - batched history (StateStore.flush: memory, status, samples, routine events), every
 *   `storage.memoryFlushS`, under NORMAL: under WAL a commit is in the OS's hands at once
 *   (it survives the process crashing) and reaches the disk at the next checkpoint. A power cut
 *   loses at most the commits since then — by design, to spare SD cards;
 * - desired state (setpoint, mode, preset, profile, fault reset, autotune request, tuning
 *   accepted or restored, an applied config), through {@link durably}, under FULL: SQLite
 *   fsyncs the WAL before the commit returns, so a change answered as stored survives a power
 *   cut at any moment (test/faults/power-cut.fault.ts). These are rare (tens a day), so the
 *   extra fsync each costs little (npm run bench:storage measures it).
 *
 * The WAL is one file appended in order, so the fsync of a desired-state commit also makes the
 * history commits before it durable; nothing is reordered.
 */

/** The connection's level between durable commits (database.ts sets it at open). */
export const BATCH_SYNCHRONOUS = 'NORMAL';
/** The level of a desired-state commit: the WAL fsynced before COMMIT returns. */
export const DURABLE_SYNCHRONOUS = 'FULL';

/**
 * Runs `work` in one immediate transaction whose commit is on disk (fsynced) before this
 * returns; throws what `work` or the commit threw (rolled back). Called inside another
 * transaction, `work` becomes part of it (a savepoint) and that one's commit decides: SQLite
 * refuses to change the level mid-transaction. An in-memory database has no disk to sync.
 */
export function durably<T>(db: Database.Database, work: () => T): T {
  const transaction = db.transaction(work);
  if (db.inTransaction || db.memory) return transaction.immediate();
  db.pragma(`synchronous = ${DURABLE_SYNCHRONOUS}`);
  try {
    return transaction.immediate();
  } finally {
    // Outside a transaction this only sets a flag on the connection; should it ever fail, the
    // connection stays at FULL: every commit durable, slower, never less safe.
    try {
      db.pragma(`synchronous = ${BATCH_SYNCHRONOUS}`);
    } catch {
      // see above
    }
  }
}
