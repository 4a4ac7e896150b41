import { writeEvent } from './desired-events.js';
import {
  type DesiredRecord,
  type LoopDesiredRow,
  sameAutotuneRequest,
  sameReset,
  sameScheduleState,
  storeProfileRun,
} from './desired-records.js';
import { type DesiredStatements, nextGeneration } from './desired-statements.js';
import { sameTuning, toStoredTuning, toTuningRecord } from './tuning-codec.js';
import { checkedAutotuneOptions, type StoredTuning } from './tuning-records.js';
import { insertTuningRow, nextTuningVersion } from './tunings.js';

/**
 * Storage failover, the desired-state side: carrying the runtime changes kept in memory into
 * another file (restoreDesired), and reading the file back to find damage the control path would
 * not see (readBack). See DesiredStore.restoreDesired and DesiredStore.readBack.
 */

/**
 * restoreDesired's work inside its transaction: takes over each remembered setpoint or mode that
 * does not come from the file and differs from the stored one, the latest fault reset and
 * autotune request, and the tuning in force when a person or the autotune chose it (stored
 * into this file when it lacks it; history other than that tuning stays in the old file).
 * Returns the loops it changed.
 */
export function restoreInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  rows: readonly LoopDesiredRow[],
): string[] {
  const restored: string[] = [];
  for (const want of rows) {
    const row = stmt.anyRow.get(want.loop);
    if (row === undefined || row.removed_at_ms !== null) continue;
    const remembered = withRemembered(row, want);
    const next = remembered ?? { ...row };
    const tuningChanged = withRememberedTuning(stmt, next, want);
    if (remembered === undefined && !tuningChanged) {
      // Only the version floor may have risen: no change of desired state, no generation.
      if (next.last_tuning_version !== row.last_tuning_version) stmt.upsert.run(next);
      continue;
    }
    next.generation = nextGeneration(stmt);
    next.updated_at_ms = nowMs();
    stmt.upsert.run(next);
    writeEvent(stmt, {
      atMs: next.updated_at_ms,
      loop: want.loop,
      kind: 'desired-restored',
      message: `setpoint ${next.setpoint} (${next.setpoint_source}), mode ${next.mode} (${next.mode_source}), ${next.tuning_version === null ? "the file's gains" : `tuning ${next.tuning_version}`} carried over from memory`,
      data: {
        generation: next.generation,
        setpoint: next.setpoint,
        mode: next.mode,
        tuning: next.tuning_version ?? 'config',
        ...(next.preset === null ? {} : { preset: next.preset }),
        ...(next.profile === null ? {} : { profile: next.profile }),
      },
    });
    restored.push(want.loop);
  }
  return restored;
}

/** `row` with what memory (`want`) holds that the file lacks; undefined when nothing differs. */
function withRemembered(row: DesiredRecord, want: LoopDesiredRow): DesiredRecord | undefined {
  const next: DesiredRecord = { ...row };
  if (want.setpointSource !== 'file' && want.setpoint !== row.setpoint) {
    next.setpoint = want.setpoint;
    next.setpoint_source = want.setpointSource;
  }
  if (want.modeSource !== 'file' && want.mode !== row.mode) {
    next.mode = want.mode;
    next.mode_source = want.modeSource;
  }
  // The reset in memory is the latest. It keeps its generation: a loop's memory names
  // the reset it applied by it, so no loop applies it twice.
  const resetChanged = want.faultReset !== undefined && !sameReset(want.faultReset, row);
  if (resetChanged && want.faultReset) {
    next.fault_reset_at_ms = want.faultReset.atMs;
    next.fault_reset_generation = want.faultReset.generation;
  }
  // Same for the autotune request: the loop acts on it once, by its generation.
  const request = want.autotuneRequest;
  const requestChanged = request !== undefined && !sameAutotuneRequest(request, row);
  if (requestChanged && request) {
    next.autotune_action = request.action;
    next.autotune_requested_at_ms = request.atMs;
    next.autotune_generation = request.generation;
    next.autotune_options_json = checkedAutotuneOptions(want.loop, request.options);
  }
  // The preset, the last manual change and the profile started: desired state of a person's,
  // carried over as they are (a profile keeps its start, so it resumes at the right step).
  const scheduleChanged = !sameScheduleState(want, row);
  if (scheduleChanged) {
    next.preset = want.preset ?? null;
    next.changed_at_ms = want.changedAtMs ?? null;
    storeProfileRun(next, want.profileRun);
  }
  if (
    next.setpoint === row.setpoint &&
    next.mode === row.mode &&
    !resetChanged &&
    !requestChanged &&
    !scheduleChanged
  )
    return undefined;
  return next;
}

/**
 * Takes over the tuning in force from memory into `next` (changed in place) when a person or the
 * autotune chose it and the file has another; stores the tuning when the file lacks it (under a
 * new version if this file gave its number to other gains). Raises the version floor in any
 * case. Returns whether the tuning in force changed.
 */
function withRememberedTuning(stmt: DesiredStatements, next: DesiredRecord, want: LoopDesiredRow): boolean {
  const floor = Math.max(next.last_tuning_version ?? 0, want.lastTuningVersion ?? 0);
  if (floor > 0) next.last_tuning_version = floor;
  const source = want.tuningSource ?? 'file';
  if (source === 'file') return false;
  const version = want.tuning === undefined ? null : storedVersionOf(stmt, next, want.tuning);
  if (version === next.tuning_version) return false;
  next.tuning_version = version;
  next.tuning_source = source;
  return true;
}

/** The version under which this file has `tuning`, storing it first when it lacks it. */
function storedVersionOf(stmt: DesiredStatements, row: DesiredRecord, tuning: StoredTuning): number {
  const stored = stmt.tuning.get(row.loop, tuning.version);
  if (stored !== undefined && sameTuning(toStoredTuning(stored), tuning)) return tuning.version;
  const version = stored === undefined ? tuning.version : nextTuningVersion(stmt, row);
  const details = tuning.details === undefined ? null : JSON.stringify(tuning.details);
  insertTuningRow(
    stmt,
    toTuningRecord(row.loop, version, tuning.createdAtMs, tuning.source, tuning, details),
  );
  row.last_tuning_version = Math.max(row.last_tuning_version ?? 0, version);
  return version;
}

/**
 * The loops whose stored desired state (`stored`: the file's live rows) differs from `live`
 * (memory), or that only one of them has.
 */
export function differingLoops(
  stored: readonly DesiredRecord[],
  live: ReadonlyMap<string, LoopDesiredRow>,
): string[] {
  const differing = stored
    .filter((row) => {
      const remembered = live.get(row.loop);
      return (
        !remembered ||
        remembered.setpoint !== row.setpoint ||
        remembered.mode !== row.mode ||
        remembered.generation !== row.generation ||
        !sameReset(remembered.faultReset, row) ||
        (remembered.tuning?.version ?? null) !== row.tuning_version ||
        !sameAutotuneRequest(remembered.autotuneRequest, row) ||
        !sameScheduleState(remembered, row)
      );
    })
    .map((row) => row.loop);
  if (stored.length !== live.size)
    differing.push(...[...live.keys()].filter((l) => !stored.some((r) => r.loop === l)));
  return differing;
}
