import type Database from 'better-sqlite3';
import { redactConfigText } from '../redact.js';
import { sha256 } from './desired-records.js';

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
    description: 'history samples; loop state as one compact blob',
    up: (db) => {
      db.exec(`
        -- History: one row per loop per flush (or per run of downsampled buckets), its samples
        -- packed in 'data' (see encodeSamples in state-store.ts): ~5 bytes a reading instead of
        -- ~55 for a row of columns. A rowid table without secondary index, so a flush appends to
        -- the last page only; history queries scan it (a few MB after a year of retention).
        -- at_ms/until_ms: first and last sample of the row. resolution_s: 0 for readings, else
        -- the bucket length of downsampled averages (see retention.ts).
        CREATE TABLE samples (
          id INTEGER PRIMARY KEY,
          loop TEXT NOT NULL,
          at_ms INTEGER NOT NULL,
          until_ms INTEGER NOT NULL,
          resolution_s INTEGER NOT NULL,
          data BLOB NOT NULL
        );

        -- loop_state as a rowid table with a 'state' blob (memory and status deflated, ~250
        -- bytes): it fits in the row's page, where the WITHOUT ROWID layout of version 1 spilled
        -- it to overflow pages (one more page written per save). memory_json/status_json keep
        -- what version 1 wrote until the loop is saved again.
        CREATE TABLE loop_state_v2 (
          loop TEXT PRIMARY KEY,
          state BLOB,
          memory_json TEXT,
          status_json TEXT,
          saved_at_ms INTEGER NOT NULL
        );
        INSERT INTO loop_state_v2 (loop, memory_json, status_json, saved_at_ms)
          SELECT loop, memory_json, status_json, saved_at_ms FROM loop_state;
        DROP TABLE loop_state;
        ALTER TABLE loop_state_v2 RENAME TO loop_state;

        -- Every event written touched this index's page for its loop: one page more written
        -- per flush and loop. Queries by loop read the table in id order instead (a few
        -- thousand events per loop with 90 days' retention).
        DROP INDEX events_loop_at;
      `);
    },
  },
  {
    version: 3,
    description: 'passwords inside broker URLs redacted from stored configs and events',
    up: (db) => {
      // Before this version a password written into mqtt.url was stored in clear with the
      // config text (and in backups of this file). The hash is recomputed over the redacted
      // text, which is what applyConfig hashes now: the same file keeps its generation.
      const configs = db.prepare<[], { generation: number; text: string }>(
        'SELECT generation, text FROM configs',
      );
      const updateConfig = db.prepare<[string, string, number]>(
        'UPDATE configs SET text = ?, hash = ? WHERE generation = ?',
      );
      for (const { generation, text } of configs.all()) {
        const redacted = redactConfigText(text);
        if (redacted !== text) updateConfig.run(redacted, sha256(redacted), generation);
      }
      const events = db.prepare<[], { id: number; message: string; data_json: string | null }>(
        'SELECT id, message, data_json FROM events',
      );
      const updateEvent = db.prepare<[string, string | null, number]>(
        'UPDATE events SET message = ?, data_json = ? WHERE id = ?',
      );
      for (const { id, message, data_json } of events.all()) {
        const redactedMessage = redactConfigText(message);
        const redactedData = data_json === null ? null : redactConfigText(data_json);
        if (redactedMessage !== message || redactedData !== data_json)
          updateEvent.run(redactedMessage, redactedData, id);
      }
    },
  },
  {
    version: 4,
    description: 'fault reset as desired state (loop_desired.fault_reset_at_ms, fault_reset_generation)',
    up: (db) => {
      db.exec(`
        -- The last fault reset a person asked for (NULL: never): the clock time it was
        -- received and the generation it got. Committed like a setpoint, so a crash before the
        -- loop's memory is flushed cannot bring a reset latch back: the loop applies each reset
        -- once (by generation), to a latch latched at or before that time.
        ALTER TABLE loop_desired ADD COLUMN fault_reset_at_ms INTEGER;
        ALTER TABLE loop_desired ADD COLUMN fault_reset_generation INTEGER;
      `);
    },
  },
  {
    version: 5,
    description: 'versioned tunings (tunings table); active tuning and autotune request in loop_desired',
    up: (db) => {
      db.exec(`
        -- Every tuning a loop got (autotune result or gains entered by hand), version 1, 2, 3… per
        -- loop. Rows are never deleted, not even when the loop is removed and finalized: the
        -- history stays restorable and a loop re-added under the same name continues the
        -- numbering (a version names one set of gains forever). Model columns are NULL without
        -- a model; a standard error is NULL when unknown (NaN: fewer than 2 cycles).
        -- details_json: the autotune summary (duration, cycles, noise, band, modulation), never
        -- filtered on in SQL, bounded so a bug cannot fill the disk through it.
        CREATE TABLE tunings (
          loop TEXT NOT NULL,
          version INTEGER NOT NULL CHECK (version >= 1),
          created_at_ms INTEGER NOT NULL,
          source TEXT NOT NULL CHECK (source IN ('autotune', 'manual')),
          kp REAL NOT NULL,
          ti_s REAL NOT NULL,
          td_s REAL NOT NULL,
          -- Setpoint weight b (NULL: none; the config's b stays), from the autotune's model.
          setpoint_weight REAL CHECK (setpoint_weight IS NULL OR (setpoint_weight >= 0 AND setpoint_weight <= 1)),
          model_gain REAL,
          model_time_constant_s REAL,
          model_dead_time_s REAL,
          model_ambient REAL,
          se_gain REAL,
          se_time_constant_s REAL,
          se_dead_time_s REAL,
          rms_residual REAL,
          details_json TEXT CHECK (details_json IS NULL OR length(CAST(details_json AS BLOB)) <= 16384),
          PRIMARY KEY (loop, version)
        );

        -- tuning_version: the tuning in force (NULL: the config file's gains); tuning_source: who
        -- chose it (NULL: the file). last_tuning_version: the highest version the loop was given,
        -- carried into a fresh file with the desired state so a version is never reused.
        -- file_gains_json: the PID gains the file had when last applied (NULL: not known), so a
        -- re-applied file overrides the active tuning only when the file changed its gains.
        ALTER TABLE loop_desired ADD COLUMN tuning_version INTEGER;
        ALTER TABLE loop_desired ADD COLUMN tuning_source TEXT;
        ALTER TABLE loop_desired ADD COLUMN last_tuning_version INTEGER;
        ALTER TABLE loop_desired ADD COLUMN file_gains_json TEXT;

        -- The last autotune request (NULL: never), like the fault reset: 'start' or 'cancel', the
        -- clock time it was received, its generation (the loop acts on each request once) and
        -- its options (side, closedLoopS, maxDurationS) as JSON.
        ALTER TABLE loop_desired ADD COLUMN autotune_action TEXT;
        ALTER TABLE loop_desired ADD COLUMN autotune_requested_at_ms INTEGER;
        ALTER TABLE loop_desired ADD COLUMN autotune_generation INTEGER;
        ALTER TABLE loop_desired ADD COLUMN autotune_options_json TEXT;
      `);
    },
  },
  {
    version: 6,
    description: "the lower side's gains of a tuning (split range: heater and cooler tuned apart)",
    up: (db) => {
      db.exec(`
        -- A loop with a heater and a cooler keeps gains per side: kp, ti_s, td_s and
        -- setpoint_weight are the raise side's, these the lower side's. All NULL: the tuning has
        -- one gain set for both sides (every row written before this version).
        ALTER TABLE tunings ADD COLUMN lower_kp REAL CHECK (lower_kp IS NULL OR lower_kp > 0);
        ALTER TABLE tunings ADD COLUMN lower_ti_s REAL CHECK (lower_ti_s IS NULL OR lower_ti_s >= 0);
        ALTER TABLE tunings ADD COLUMN lower_td_s REAL CHECK (lower_td_s IS NULL OR lower_td_s >= 0);
        ALTER TABLE tunings ADD COLUMN lower_setpoint_weight REAL
          CHECK (lower_setpoint_weight IS NULL OR (lower_setpoint_weight >= 0 AND lower_setpoint_weight <= 1));
      `);
    },
  },
  {
    version: 7,
    description:
      'presets, schedules and profiles: the preset selected, the last manual change, the profile started',
    up: (db) => {
      db.exec(`
        -- preset: the preset selected by hand (NULL: none). changed_at_ms: the last manual change of
        -- setpoint, mode or preset (the override rule; NULL: none since this version, i.e. never
        -- overrides). profile*: the profile started (NULL: none) and its run's times
        -- (core/schedule/profile.ts): started, paused (while paused), the ended pauses' total, resumed.
        ALTER TABLE loop_desired ADD COLUMN preset TEXT;
        ALTER TABLE loop_desired ADD COLUMN changed_at_ms INTEGER;
        ALTER TABLE loop_desired ADD COLUMN profile TEXT;
        ALTER TABLE loop_desired ADD COLUMN profile_started_at_ms INTEGER;
        ALTER TABLE loop_desired ADD COLUMN profile_paused_at_ms INTEGER;
        ALTER TABLE loop_desired ADD COLUMN profile_paused_total_ms INTEGER;
        ALTER TABLE loop_desired ADD COLUMN profile_resumed_at_ms INTEGER;
      `);
    },
  },
  {
    version: 8,
    description: 'values recorded beside a loop without regulating (recorded_samples)',
    up: (db) => {
      db.exec(`
        -- Sensors a loop records (loops.<id>.record: outdoor temperature, a hydrometer's gravity),
        -- laid out like samples: one row per loop, sensor and flush (or run of downsampled
        -- buckets), its points packed in 'data' (recorded-codec.ts: ~4 bytes a point, a gap as a
        -- point without value); a rowid table without secondary index, so a flush appends to
        -- the last page. resolution_s: 0 for readings, else the bucket length (retention).
        CREATE TABLE recorded_samples (
          id INTEGER PRIMARY KEY,
          loop TEXT NOT NULL,
          sensor TEXT NOT NULL,
          at_ms INTEGER NOT NULL,
          until_ms INTEGER NOT NULL,
          resolution_s INTEGER NOT NULL,
          data BLOB NOT NULL
        );
      `);
    },
  },
  {
    version: 9,
    description: 'the alert outbox (alert_outbox): alerts kept until each channel took them',
    up: (db) => {
      db.exec(`
        -- One row per alert and channel (store/alert-outbox.ts), written when the alert is raised
        -- and marked delivered_at_ms once the channel took it; undelivered rows are sent again
        -- after a restart, in id order per channel. 'notice': the alert as JSON (alerts/notice.ts).
        CREATE TABLE alert_outbox (
          id INTEGER PRIMARY KEY,
          channel TEXT NOT NULL,
          notice TEXT NOT NULL,
          created_at_ms INTEGER NOT NULL,
          attempts INTEGER NOT NULL DEFAULT 0,
          last_error TEXT,
          delivered_at_ms INTEGER
        );
        CREATE INDEX alert_outbox_undelivered ON alert_outbox (channel, id) WHERE delivered_at_ms IS NULL;
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

/**
 * Page size of a new database file, bytes. SQLite writes whole pages: every commit costs
 * (page size + 24) bytes in the WAL per b-tree page it touches, however few bytes changed, and
 * homeostat's batched commits touch a few pages to add a few hundred bytes. With 512 (SQLite's
 * smallest) they write a sixth to two fifths of what the default 4096 does (npm run
 * bench:storage). Takes effect only when set before the first table and before WAL mode
 * (openStore's first pragma); a file made with another size keeps it.
 */
export const PAGE_SIZE_BYTES = 512;
