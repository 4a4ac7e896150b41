import type Database from 'better-sqlite3';

/**
 * Schema migrations, versioned through SQLite's `PRAGMA user_version` (0 for a new, empty file).
 *
 * Rules for adding a version (zigbee2mqtt-style one-step migrations):
 * - append `{ version: LATEST + 1, ... }`; never edit a step that has shipped — a Pi in the field
 *   may be at any earlier version and replays the steps from there;
 * - a step runs inside a transaction with the `user_version` bump, so a crash mid-step leaves the
 *   file at the previous version, and the step runs again on the next start;
 * - `PRAGMA foreign_keys` and `journal_mode` cannot change inside a transaction: a step must not
 *   rely on toggling them;
 * - keep rows: test/store/migrations.test.ts seeds every table at version v−1 and checks that the
 *   rows survive the step to v.
 */
export interface Migration {
  /** The `user_version` the file has after this step; steps are numbered 1, 2, 3… without gaps. */
  version: number;
  /** One line, logged when the step runs. */
  description: string;
  up: (db: Database.Database) => void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'desired state (configs, loops), loop memory, events',
    up: (db) => {
      db.exec(`
        -- 'lastGeneration': the node's one monotonic generation counter (configs and runtime changes).
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

        -- Every distinct applied config text, by the generation it got.
        CREATE TABLE configs (
          generation INTEGER PRIMARY KEY,
          hash TEXT NOT NULL,
          text TEXT NOT NULL,
          applied_at_ms INTEGER NOT NULL
        );

        -- Desired state per loop. file_* hold what the config file last said, so that a re-applied
        -- file only overrides a runtime change when the file itself changed that field.
        -- section_hash: hash of the loop's config section, so a change to its other parameters
        -- (gains, limits, actuators) bumps the loop's generation too.
        -- removed_at_ms: set when the loop left the config; the row is deleted once its finalizer ran.
        CREATE TABLE loop_desired (
          loop TEXT PRIMARY KEY,
          setpoint REAL NOT NULL,
          setpoint_source TEXT NOT NULL,
          file_setpoint REAL NOT NULL,
          mode TEXT NOT NULL,
          mode_source TEXT NOT NULL,
          file_mode TEXT NOT NULL,
          section_hash TEXT NOT NULL,
          generation INTEGER NOT NULL,
          updated_at_ms INTEGER NOT NULL,
          removed_at_ms INTEGER
        ) WITHOUT ROWID;

        -- A loop's controller memory (integral, latched faults, autotune results) and last status.
        CREATE TABLE loop_state (
          loop TEXT PRIMARY KEY,
          memory_json TEXT,
          status_json TEXT,
          saved_at_ms INTEGER NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE events (
          id INTEGER PRIMARY KEY,
          at_ms INTEGER NOT NULL,
          loop TEXT,
          kind TEXT NOT NULL,
          source TEXT,
          message TEXT NOT NULL,
          data_json TEXT
        );
        CREATE INDEX events_at ON events(at_ms);
        CREATE INDEX events_loop_at ON events(loop, at_ms);
      `);
    },
  },
  {
    version: 2,
    description: 'history samples',
    up: (db) => {
      db.exec(`
        -- One row per reading a loop used (resolution_s 0), or per downsampled bucket
        -- (resolution_s = bucket length) once older than the raw retention.
        -- action: the loop's action during the sample (downsampled: the most frequent one).
        CREATE TABLE samples (
          loop TEXT NOT NULL,
          at_ms INTEGER NOT NULL,
          setpoint REAL,
          measured REAL,
          output REAL,
          action TEXT,
          resolution_s INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (loop, at_ms)
        ) WITHOUT ROWID;
      `);
    },
  },
];

/** The schema version this code writes and understands. */
export const LATEST_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;

/** The file was written by a newer homeostat: this code must not touch it. */
export class NewerSchemaError extends Error {
  constructor(
    readonly fileVersion: number,
    readonly knownVersion: number,
  ) {
    super(`database schema version ${fileVersion} is newer than this homeostat knows (${knownVersion})`);
    this.name = 'NewerSchemaError';
  }
}

/** The schema version of an open database file (`PRAGMA user_version`). */
export function schemaVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the file from its version up to `toVersion` (default: LATEST_VERSION), one step per
 * version, each step in its own transaction. Running it again is a no-op.
 * Throws NewerSchemaError when the file is newer than `toVersion`.
 * `toVersion` exists for tests that build a file at an older version.
 */
export function migrate(
  db: Database.Database,
  toVersion: number = LATEST_VERSION,
): { from: number; to: number } {
  const from = schemaVersion(db);
  if (from > toVersion) throw new NewerSchemaError(from, toVersion);
  for (const step of MIGRATIONS) {
    if (step.version <= from || step.version > toVersion) continue;
    db.transaction(() => {
      step.up(db);
      // user_version lives in the file header, written by this same transaction: it commits
      // (or rolls back) together with the step.
      db.pragma(`user_version = ${step.version}`);
    }).immediate();
  }
  return { from, to: schemaVersion(db) };
}
