import type Database from 'better-sqlite3';
import type { DesiredRecord, StoredEvent } from './desired-records.js';
import type { TuningRecord } from './tuning-records.js';

/**
 * The statements DesiredStore runs, prepared once (the tables exist once the db is migrated),
 * and `written`: the events the operation in progress wrote (see EventLog in desired-events.ts;
 * DesiredStore empties it at every operation's start and end).
 */
export function prepareStatements(db: Database.Database) {
  return { written: [] as StoredEvent[], ...desiredStatements(db), ...tuningStatements(db) };
}

/** The statements on desired state: the generation counter, applied configs, loops, the event log. */
function desiredStatements(db: Database.Database) {
  return {
    getGeneration: db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'lastGeneration'"),
    setGeneration: db.prepare<[string]>(
      "INSERT INTO meta (key, value) VALUES ('lastGeneration', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ),
    latestConfig: db.prepare<[], { generation: number; hash: string; text: string; applied_at_ms: number }>(
      'SELECT generation, hash, text, applied_at_ms FROM configs ORDER BY generation DESC LIMIT 1',
    ),
    insertConfig: db.prepare<[number, string, string, number]>(
      'INSERT INTO configs (generation, hash, text, applied_at_ms) VALUES (?, ?, ?, ?)',
    ),
    anyRow: db.prepare<[string], DesiredRecord>('SELECT * FROM loop_desired WHERE loop = ?'),
    liveRows: db.prepare<[], DesiredRecord>(
      'SELECT * FROM loop_desired WHERE removed_at_ms IS NULL ORDER BY loop',
    ),
    upsert: db.prepare<[DesiredRecord]>(
      `INSERT OR REPLACE INTO loop_desired (loop, setpoint, setpoint_source, file_setpoint, mode, mode_source,
         file_mode, section_hash, generation, updated_at_ms, removed_at_ms, fault_reset_at_ms, fault_reset_generation,
         tuning_version, tuning_source, last_tuning_version, file_gains_json,
         autotune_action, autotune_requested_at_ms, autotune_generation, autotune_options_json,
         preset, changed_at_ms, profile, profile_started_at_ms, profile_paused_at_ms,
         profile_paused_total_ms, profile_resumed_at_ms)
       VALUES (@loop, @setpoint, @setpoint_source, @file_setpoint, @mode, @mode_source,
         @file_mode, @section_hash, @generation, @updated_at_ms, @removed_at_ms, @fault_reset_at_ms, @fault_reset_generation,
         @tuning_version, @tuning_source, @last_tuning_version, @file_gains_json,
         @autotune_action, @autotune_requested_at_ms, @autotune_generation, @autotune_options_json,
         @preset, @changed_at_ms, @profile, @profile_started_at_ms, @profile_paused_at_ms,
         @profile_paused_total_ms, @profile_resumed_at_ms)`,
    ),
    markRemoved: db.prepare<[number, string]>('UPDATE loop_desired SET removed_at_ms = ? WHERE loop = ?'),
    deleteRemoved: db.prepare<[string]>(
      'DELETE FROM loop_desired WHERE loop = ? AND removed_at_ms IS NOT NULL',
    ),
    deleteLoopState: db.prepare<[string]>('DELETE FROM loop_state WHERE loop = ?'),
    pending: db.prepare<[], { loop: string }>(
      'SELECT loop FROM loop_desired WHERE removed_at_ms IS NOT NULL ORDER BY loop',
    ),
    insertEvent: db.prepare<[number, string | null, string, string | null, string, string | null]>(
      'INSERT INTO events (at_ms, loop, kind, source, message, data_json) VALUES (?, ?, ?, ?, ?, ?)',
    ),
  };
}

/** The statements on versioned tunings (tunings.ts). */
function tuningStatements(db: Database.Database) {
  return {
    tuning: db.prepare<[string, number], TuningRecord>(
      'SELECT * FROM tunings WHERE loop = ? AND version = ?',
    ),
    tuningsNewestFirst: db.prepare<[string], TuningRecord>(
      'SELECT * FROM tunings WHERE loop = ? ORDER BY version DESC',
    ),
    maxTuningVersion: db.prepare<[string], { version: number | null }>(
      'SELECT max(version) AS version FROM tunings WHERE loop = ?',
    ),
    /** The tunings live loops have in force. */
    activeTunings: db.prepare<[], TuningRecord>(
      `SELECT t.* FROM tunings t JOIN loop_desired d ON d.loop = t.loop AND d.tuning_version = t.version
       WHERE d.removed_at_ms IS NULL`,
    ),
    insertTuning: db.prepare<[TuningRecord]>(
      `INSERT INTO tunings (loop, version, created_at_ms, source, kp, ti_s, td_s, setpoint_weight,
         lower_kp, lower_ti_s, lower_td_s, lower_setpoint_weight,
         model_gain, model_time_constant_s, model_dead_time_s, model_ambient, se_gain,
         se_time_constant_s, se_dead_time_s, rms_residual, details_json)
       VALUES (@loop, @version, @created_at_ms, @source, @kp, @ti_s, @td_s, @setpoint_weight,
         @lower_kp, @lower_ti_s, @lower_td_s, @lower_setpoint_weight,
         @model_gain, @model_time_constant_s, @model_dead_time_s, @model_ambient, @se_gain,
         @se_time_constant_s, @se_dead_time_s, @rms_residual, @details_json)`,
    ),
  };
}

export type DesiredStatements = ReturnType<typeof prepareStatements>;

/**
 * Takes the node's next generation (meta 'lastGeneration' + 1) and stores it: call inside the
 * transaction that writes the change it numbers.
 */
export function nextGeneration(stmt: DesiredStatements): number {
  const generation = Number(stmt.getGeneration.get()?.value ?? 0) + 1;
  stmt.setGeneration.run(String(generation));
  return generation;
}
