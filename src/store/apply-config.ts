import { writeDesiredChangeEvent, writeEvent } from './desired-events.js';
import {
  type ApplyConfigResult,
  assertFiniteSetpoint,
  type ConfigLoop,
  type DesiredRecord,
} from './desired-records.js';
import { type DesiredStatements, nextGeneration } from './desired-statements.js';
import { fileGainsJson } from './tuning-records.js';
import { versionName } from './tunings.js';

/**
 * DesiredStore.applyConfig's work inside its transaction, as named steps: a config whose hash is
 * the latest changes nothing; otherwise the config gets the next generation, each loop of the
 * file is added or merged (the file's value wins only for a field the file changed), loops the
 * file no longer has are marked removed, and 'config-applied' closes the record. A tuning in
 * force gives way to the file's gains only when the file changed those gains (newer intent). Each loop's row
 * is written before its events, loop after loop, in the file's order.
 */

/** One applyConfig run: what every step writes with and into. */
interface ApplyRun {
  stmt: DesiredStatements;
  now: number;
  generation: number;
  result: ApplyConfigResult;
}

/** Runs inside the caller's transaction; returns what it did. */
export function applyConfigInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  input: { text: string; loops: Record<string, ConfigLoop> },
  hash: string,
): ApplyConfigResult {
  const latest = stmt.latestConfig.get();
  if (latest?.hash === hash) {
    return {
      generation: latest.generation,
      changed: false,
      addedLoops: [],
      changedLoops: [],
      removedLoops: [],
    };
  }
  const now = nowMs();
  const generation = nextGeneration(stmt);
  stmt.insertConfig.run(generation, hash, input.text, now);
  const result: ApplyConfigResult = {
    generation,
    changed: true,
    addedLoops: [],
    changedLoops: [],
    removedLoops: [],
  };
  const run: ApplyRun = { stmt, now, generation, result };

  for (const [loop, file] of Object.entries(input.loops)) applyFileLoop(run, loop, file);
  markRemovedLoops(run, input.loops);

  writeEvent(stmt, {
    atMs: now,
    kind: 'config-applied',
    source: 'file',
    message: `config generation ${generation} applied`,
    data: {
      generation,
      hash,
      addedLoops: result.addedLoops,
      changedLoops: result.changedLoops,
      removedLoops: result.removedLoops,
    },
  });
  return result;
}

function applyFileLoop(run: ApplyRun, loop: string, file: ConfigLoop): void {
  assertFiniteSetpoint(loop, file.setpoint);
  const row = run.stmt.anyRow.get(loop);
  // A loop removed earlier but not yet finalized counts as new: it starts from the file,
  // not from runtime changes made before it was removed.
  if (row === undefined || row.removed_at_ms !== null) addLoop(run, loop, file);
  else mergeLoop(run, loop, row, file);
}

function addLoop({ stmt, now, generation, result }: ApplyRun, loop: string, file: ConfigLoop): void {
  stmt.upsert.run({
    loop,
    setpoint: file.setpoint,
    setpoint_source: 'file',
    file_setpoint: file.setpoint,
    mode: file.mode,
    mode_source: 'file',
    file_mode: file.mode,
    section_hash: file.sectionHash,
    generation,
    updated_at_ms: now,
    removed_at_ms: null,
    // A loop (re-)added starts without a reset: a latch of its earlier life is gone.
    fault_reset_at_ms: null,
    fault_reset_generation: null,
    // It starts on the file's gains; its earlier tunings stay in the history (restorable), and
    // their versions are not given again.
    tuning_version: null,
    tuning_source: null,
    last_tuning_version: stmt.maxTuningVersion.get(loop)?.version ?? null,
    file_gains_json: file.gains === undefined ? null : fileGainsJson(file.gains),
    autotune_action: null,
    autotune_requested_at_ms: null,
    autotune_generation: null,
    autotune_options_json: null,
    // No preset, no manual change yet (the schedule is in force at once), no profile started.
    preset: null,
    changed_at_ms: null,
    profile: null,
    profile_started_at_ms: null,
    profile_paused_at_ms: null,
    profile_paused_total_ms: null,
    profile_resumed_at_ms: null,
  });
  result.addedLoops.push(loop);
  writeEvent(stmt, {
    atMs: now,
    loop,
    kind: 'loop-added',
    source: 'file',
    message: `loop ${loop} added (generation ${generation})`,
    data: { generation, setpoint: file.setpoint, mode: file.mode },
  });
}

/** The stored row with the file's values, where the file has the newer intent. */
function withFileValues(row: DesiredRecord, file: ConfigLoop): DesiredRecord {
  const next: DesiredRecord = {
    ...row,
    file_setpoint: file.setpoint,
    file_mode: file.mode,
    section_hash: file.sectionHash,
  };
  // Newer intent wins: the file's value takes over only when the file changed that field.
  if (file.setpoint !== row.file_setpoint) {
    next.setpoint = file.setpoint;
    next.setpoint_source = 'file';
  }
  if (file.mode !== row.file_mode) {
    next.mode = file.mode;
    next.mode_source = 'file';
  }
  // Gains the caller did not pass, or that were not known before (a file stored by an older
  // version): nothing says the file changed them, the tuning in force stays.
  if (file.gains !== undefined) {
    const gains = fileGainsJson(file.gains);
    if (row.file_gains_json !== null && gains !== row.file_gains_json) {
      next.tuning_version = null;
      next.tuning_source = null;
    }
    next.file_gains_json = gains;
  }
  return next;
}

/** A loop the store has: merges the file in, bumps its generation if anything changed, records why. */
function mergeLoop(
  { stmt, now, generation, result }: ApplyRun,
  loop: string,
  row: DesiredRecord,
  file: ConfigLoop,
): void {
  const next = withFileValues(row, file);
  const setpointChanged = next.setpoint !== row.setpoint;
  const modeChanged = next.mode !== row.mode;
  const sectionChanged = next.section_hash !== row.section_hash;
  const tuningChanged = next.tuning_version !== row.tuning_version;
  // A file that changed the setpoint or mode is a manual change like any other (the override
  // rule, core/schedule): stamped, and a new setpoint leaves the preset.
  if (setpointChanged) next.preset = null;
  if (setpointChanged || modeChanged) next.changed_at_ms = now;
  if (setpointChanged || modeChanged || sectionChanged || tuningChanged) {
    next.generation = generation;
    next.updated_at_ms = now;
    result.changedLoops.push(loop);
  }
  stmt.upsert.run(next);

  const change = { now, loop, source: 'file' as const, generation };
  if (setpointChanged)
    writeDesiredChangeEvent(stmt, 'setpoint', {
      ...change,
      from: row.setpoint,
      to: next.setpoint,
    });
  if (modeChanged) writeDesiredChangeEvent(stmt, 'mode', { ...change, from: row.mode, to: next.mode });
  if (tuningChanged) {
    writeEvent(stmt, {
      atMs: now,
      loop,
      kind: 'tuning-applied',
      source: 'file',
      message: `the config file's gains applied: the file changed them (tuning ${row.tuning_version} set aside)`,
      data: {
        from: versionName(row.tuning_version),
        to: versionName(next.tuning_version),
        generation,
        reason: 'config-gains-changed',
      },
    });
  }
  if (sectionChanged && !setpointChanged && !modeChanged) {
    writeEvent(stmt, {
      atMs: now,
      loop,
      kind: 'loop-config-changed',
      source: 'file',
      message: `loop ${loop} configuration changed`,
      data: { generation },
    });
  }
}

/** Live loops the file no longer has: marked removed (the daemon finalizes them). */
function markRemovedLoops(
  { stmt, now, generation, result }: ApplyRun,
  loops: Record<string, ConfigLoop>,
): void {
  for (const row of stmt.liveRows.all()) {
    if (Object.hasOwn(loops, row.loop)) continue;
    stmt.markRemoved.run(now, row.loop);
    result.removedLoops.push(row.loop);
    writeEvent(stmt, {
      atMs: now,
      loop: row.loop,
      kind: 'loop-removed',
      source: 'file',
      message: `loop ${row.loop} removed from the config`,
      data: { generation },
    });
  }
}
