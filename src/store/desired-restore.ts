import { writeEvent } from './desired-events.js';
import { type DesiredRecord, type LoopDesiredRow, sameReset } from './desired-records.js';
import { type DesiredStatements, nextGeneration } from './desired-statements.js';

/**
 * Storage failover, the desired-state side: carrying the runtime changes kept in memory into
 * another file (restoreDesired), and reading the file back to find damage the control path would
 * not see (readBack). See DesiredStore.restoreDesired and DesiredStore.readBack.
 */

/**
 * restoreDesired's work inside its transaction: takes over each remembered setpoint or mode that
 * does not come from the file and differs from the stored one, and the latest fault reset.
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
    const next = withRemembered(row, want);
    if (next === undefined) continue;
    next.generation = nextGeneration(stmt);
    next.updated_at_ms = nowMs();
    stmt.upsert.run(next);
    writeEvent(stmt, {
      atMs: next.updated_at_ms,
      loop: want.loop,
      kind: 'desired-restored',
      message: `setpoint ${next.setpoint} (${next.setpoint_source}), mode ${next.mode} (${next.mode_source}) carried over from memory`,
      data: { generation: next.generation, setpoint: next.setpoint, mode: next.mode },
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
  if (next.setpoint === row.setpoint && next.mode === row.mode && !resetChanged) return undefined;
  return next;
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
        !sameReset(remembered.faultReset, row)
      );
    })
    .map((row) => row.loop);
  if (stored.length !== live.size)
    differing.push(...[...live.keys()].filter((l) => !stored.some((r) => r.loop === l)));
  return differing;
}
