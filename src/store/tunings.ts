import { liveRow } from './desired-changes.js';
import { writeEvent } from './desired-events.js';
import {
  type DesiredRecord,
  type LoopDesiredRow,
  type StoredEvent,
  toDesiredRow,
} from './desired-records.js';
import { type DesiredStatements, nextGeneration } from './desired-statements.js';
import { toStoredTuning, toTuningRecord } from './tuning-codec.js';
import {
  checkedTuning,
  type NewTuning,
  type StoredTuning,
  type TuningChangeSource,
  type TuningRecord,
  type TuningSource,
  UnknownTuningError,
} from './tuning-records.js';

/**
 * Versioned tunings: DesiredStore.recordTuning's and applyTuning's work inside their
 * transactions, and the reads that put the tuning in force into a loop's desired state.
 *
 * Proposing a tuning (recordTuning without `apply`) adds history only: what the loop runs does
 * not change, so its generation does not either (the loop has nothing to act on). Making one
 * the tuning in force, going back to an earlier one or to the file's gains is a change of
 * desired state: the next generation, and a 'tuning-applied' event.
 */

/** `row` as memory holds it, with the tuning it names read (inside the caller's transaction). */
export function withTuning(stmt: DesiredStatements, row: DesiredRecord): LoopDesiredRow {
  if (row.tuning_version === null) return toDesiredRow(row);
  const stored = stmt.tuning.get(row.loop, row.tuning_version);
  return toDesiredRow(row, stored === undefined ? undefined : toStoredTuning(stored));
}

/** Every live loop's desired state with its tuning in force (constructor, reloads). */
export function liveDesiredRows(stmt: DesiredStatements): LoopDesiredRow[] {
  const active = new Map(stmt.activeTunings.all().map((row) => [row.loop, toStoredTuning(row)]));
  return stmt.liveRows.all().map((row) => toDesiredRow(row, active.get(row.loop)));
}

/**
 * The loop's next tuning version: above every version it has and every version it had in a
 * file its desired state was carried over from (`last_tuning_version`).
 */
export function nextTuningVersion(stmt: DesiredStatements, row: DesiredRecord): number {
  const stored = stmt.maxTuningVersion.get(row.loop)?.version ?? 0;
  return Math.max(stored, row.last_tuning_version ?? 0) + 1;
}

/** Inserts a tunings row, with its lower side's gains (schema version 6) when it has them. */
export function insertTuningRow(stmt: DesiredStatements, record: TuningRecord): void {
  // The statement names every column: a record that leaves the optional ones out stores NULL.
  stmt.insertTuning.run({
    setpoint_weight: null,
    lower_kp: null,
    lower_ti_s: null,
    lower_td_s: null,
    lower_setpoint_weight: null,
    ...record,
  });
}

/** Who did what, for a tuning's event. */
interface TuningCommand {
  loop: string;
  /** The event's source and the stored `tuning_source`. */
  by: TuningChangeSource;
  requestId?: string;
}

/** recordTuning's work: the stored version, and the committed row when it was applied. */
export function recordTuningInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  command: TuningCommand & { tuning: NewTuning; source: TuningSource; apply: boolean },
): { version: number; committed: DesiredRecord } {
  const { loop, tuning, source, apply, by, requestId } = command;
  const detailsJson = checkedTuning(loop, tuning);
  const row = liveRow(stmt, loop);
  const now = nowMs();
  const version = nextTuningVersion(stmt, row);
  insertTuningRow(stmt, toTuningRecord(loop, version, now, source, tuning, detailsJson));
  const committed: DesiredRecord = { ...row, last_tuning_version: version };
  const summary = {
    version,
    tuningSource: source,
    gains: tuning.gains,
    ...(tuning.lowerGains === undefined ? {} : { lowerGains: tuning.lowerGains }),
    ...(tuning.model === undefined ? {} : { model: tuning.model }),
    ...(requestId === undefined ? {} : { requestId }),
  };
  // Stored for a person to put in force, or in force at once with its generation.
  let event: Pick<StoredEvent, 'kind' | 'message' | 'data'>;
  if (apply) {
    const generation = nextGeneration(stmt);
    Object.assign(committed, {
      tuning_version: version,
      tuning_source: by,
      generation,
      updated_at_ms: now,
    });
    event = {
      kind: 'tuning-applied',
      message: `tuning ${version} (${source}) applied on storing (${by}): ${gainsText(tuning)}`,
      data: { ...summary, from: versionName(row.tuning_version), to: version, generation, recorded: true },
    };
  } else {
    event = {
      kind: 'tuning-proposed',
      message: `tuning ${version} proposed (${source}): ${gainsText(tuning)}`,
      data: summary,
    };
  }
  stmt.upsert.run(committed);
  writeEvent(stmt, { atMs: now, loop, source: by, ...event });
  return { version, committed };
}

/** applyTuning's work; `committed` is absent when the version asked for was already in force. */
export function applyTuningInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  command: TuningCommand & { version: number | 'config' },
): { changed: boolean; generation: number; committed?: DesiredRecord } {
  const { loop, version, by, requestId } = command;
  const row = liveRow(stmt, loop);
  let tuning: StoredTuning | undefined;
  if (version !== 'config') {
    const stored = Number.isInteger(version) ? stmt.tuning.get(loop, version) : undefined;
    if (stored === undefined) throw new UnknownTuningError(loop, version);
    tuning = toStoredTuning(stored);
  }
  const target = tuning?.version ?? null;
  if (row.tuning_version === target) return { changed: false, generation: row.generation };

  const now = nowMs();
  const generation = nextGeneration(stmt);
  const committed: DesiredRecord = {
    ...row,
    tuning_version: target,
    tuning_source: by,
    generation,
    updated_at_ms: now,
  };
  stmt.upsert.run(committed);
  const what = tuning === undefined ? "the config file's gains" : `tuning ${tuning.version}`;
  writeEvent(stmt, {
    atMs: now,
    loop,
    kind: 'tuning-applied',
    source: by,
    message: `${what} applied (${by})${tuning === undefined ? '' : `: ${gainsText(tuning)}`}`,
    data: {
      from: versionName(row.tuning_version),
      to: versionName(target),
      generation,
      ...(tuning === undefined ? {} : { gains: tuning.gains }),
      ...(tuning?.lowerGains === undefined ? {} : { lowerGains: tuning.lowerGains }),
      ...(requestId === undefined ? {} : { requestId }),
    },
  });
  return { changed: true, generation, committed };
}

/** A loop's tunings, newest first, each with whether it is in force. */
export function tuningHistory(
  stmt: DesiredStatements,
  loop: string,
): Array<StoredTuning & { active: boolean }> {
  const row = stmt.anyRow.get(loop);
  // A removed loop's tunings are history, none in force.
  const active = row === undefined || row.removed_at_ms !== null ? null : row.tuning_version;
  return stmt.tuningsNewestFirst
    .all(loop)
    .map((stored) => ({ ...toStoredTuning(stored), active: stored.version === active }));
}

/** A version as events name it: the number, or 'config' for the file's gains. */
export function versionName(version: number | null): number | 'config' {
  return version ?? 'config';
}

function gainsText({ gains, lowerGains }: NewTuning): string {
  const side = (g: typeof gains) => {
    const weight = g.setpointWeight === undefined ? '' : `, setpointWeight ${g.setpointWeight}`;
    return `kp ${g.kp}, tiS ${g.tiS}, tdS ${g.tdS}${weight}`;
  };
  return lowerGains === undefined ? side(gains) : `raise ${side(gains)}; lower ${side(lowerGains)}`;
}
