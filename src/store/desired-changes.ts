import type { Mode } from '../core/types.js';
import { writeDesiredChangeEvent, writeEvent } from './desired-events.js';
import type { ChangeSource, DesiredRecord } from './desired-records.js';
import { type DesiredStatements, nextGeneration } from './desired-statements.js';
import { type AutotuneOptions, checkedAutotuneOptions } from './tuning-records.js';

/**
 * Runtime changes of desired state (MQTT, CLI, Home Assistant): DesiredStore.setDesired's and
 * DesiredStore.resetFault's and DesiredStore.requestAutotune's work inside their transactions. Each returns the row it wrote (the
 * caller puts it in memory once committed), with its events written after it.
 */

/** The stored row of a loop a runtime change may concern; throws for an unknown or removed loop. */
export function liveRow(stmt: DesiredStatements, loop: string): DesiredRecord {
  const row = stmt.anyRow.get(loop);
  if (row === undefined) throw new Error(`unknown loop "${loop}"`);
  if (row.removed_at_ms !== null) throw new Error(`loop "${loop}" was removed from the config`);
  return row;
}

/** What setDesiredInTransaction is asked. */
interface SetDesiredRequest {
  loop: string;
  change: { setpoint?: number; mode?: Mode };
  source: ChangeSource;
  requestId?: string;
  /**
   * The values asked for are the stored ones, but a schedule or profile overrides them now:
   * asking again is a manual change that takes over (the override rule, core/schedule), not a
   * duplicate. The caller decides it (it knows the schedule; DesiredCommands).
   */
  override?: boolean;
}

/** What a runtime change of setpoint and/or mode changes of the stored row. */
interface DesiredDelta {
  setpointChanged: boolean;
  modeChanged: boolean;
  /** A setpoint given by hand leaves the preset even when it equals the preset's (shown as none). */
  presetLeft: boolean;
  /** Nothing differs, but the change takes over from a schedule or profile (`override`). */
  retaken: boolean;
}

/** A runtime change of setpoint and/or mode; `committed` is absent when it changed nothing. */
export function setDesiredInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  request: SetDesiredRequest,
): { changed: boolean; generation: number; committed?: DesiredRecord } {
  const { loop, change, source, requestId } = request;
  const row = liveRow(stmt, loop);
  const delta = desiredDelta(row, request);
  if (!delta.setpointChanged && !delta.modeChanged && !delta.presetLeft && !delta.retaken) {
    return { changed: false, generation: row.generation };
  }

  const now = nowMs();
  const generation = nextGeneration(stmt);
  // A manual change (the override rule, core/schedule): stamped; a setpoint leaves the preset.
  const next: DesiredRecord = {
    ...row,
    generation,
    updated_at_ms: now,
    changed_at_ms: now,
    ...(change.setpoint === undefined ? {} : { preset: null }),
  };
  writeTakeoverEvents(stmt, row, request, delta, { now, generation });
  const recorded = { now, loop, source, generation, requestId };
  if (delta.setpointChanged && change.setpoint !== undefined) {
    next.setpoint = change.setpoint;
    next.setpoint_source = source;
    writeDesiredChangeEvent(stmt, 'setpoint', {
      ...recorded,
      from: row.setpoint,
      to: change.setpoint,
    });
  }
  if (delta.modeChanged && change.mode !== undefined) {
    next.mode = change.mode;
    next.mode_source = source;
    writeDesiredChangeEvent(stmt, 'mode', { ...recorded, from: row.mode, to: change.mode });
  }
  stmt.upsert.run(next);
  return { changed: true, generation, committed: next };
}

function desiredDelta(row: DesiredRecord, request: SetDesiredRequest): DesiredDelta {
  const { change } = request;
  const setpointChanged = change.setpoint !== undefined && change.setpoint !== row.setpoint;
  const modeChanged = change.mode !== undefined && change.mode !== row.mode;
  const presetLeft = change.setpoint !== undefined && row.preset !== null && row.preset !== undefined;
  const retaken = request.override === true && !setpointChanged && !modeChanged && !presetLeft;
  return { setpointChanged, modeChanged, presetLeft, retaken };
}

/**
 * The events written before the setpoint and mode ones: 'manual-override' (the stored values
 * asked for again over a schedule or profile) and 'preset-changed' (a setpoint leaves the preset).
 */
function writeTakeoverEvents(
  stmt: DesiredStatements,
  row: DesiredRecord,
  request: SetDesiredRequest,
  delta: DesiredDelta,
  at: { now: number; generation: number },
): void {
  const { loop, change, source, requestId } = request;
  const { now, generation } = at;
  if (delta.retaken) {
    const what = [
      ...(change.setpoint === undefined ? [] : [`setpoint ${row.setpoint}`]),
      ...(change.mode === undefined ? [] : [`mode ${row.mode}`]),
    ].join(', ');
    writeEvent(stmt, {
      atMs: now,
      loop,
      kind: 'manual-override',
      source,
      message: `${what} asked for again: takes over from the schedule (${source})`,
      data: { ...change, generation, ...(requestId === undefined ? {} : { requestId }) },
    });
  }
  if (delta.presetLeft) {
    writeEvent(stmt, {
      atMs: now,
      loop,
      kind: 'preset-changed',
      source,
      message: `preset ${row.preset} → none (${source})`,
      data: { from: row.preset, to: null, generation, ...(requestId === undefined ? {} : { requestId }) },
    });
  }
}

/** A person's fault reset, stored with the next generation and a 'fault-reset' event. */
export function resetFaultInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  loop: string,
  reset: { requestedAtMs: number; source: string; requestId?: string; fault?: string },
): DesiredRecord {
  const { requestedAtMs, source, requestId, fault } = reset;
  const row = liveRow(stmt, loop);
  const now = nowMs();
  const next = nextGeneration(stmt);
  const committed: DesiredRecord = {
    ...row,
    generation: next,
    updated_at_ms: now,
    fault_reset_at_ms: requestedAtMs,
    fault_reset_generation: next,
  };
  stmt.upsert.run(committed);
  const what = fault === undefined ? 'latched fault' : `latched fault ${fault}`;
  writeEvent(stmt, {
    atMs: now,
    loop,
    kind: 'fault-reset',
    source,
    message: `${what} reset (${source})`,
    data: {
      generation: next,
      requestedAtMs,
      ...(fault === undefined ? {} : { fault }),
      ...(requestId === undefined ? {} : { requestId }),
    },
  });
  return committed;
}

/** What DesiredStore.requestAutotune takes. */
export interface AutotuneCommand {
  action: 'start' | 'cancel';
  /** When it was received, clock ms. */
  requestedAtMs: number;
  options?: AutotuneOptions;
  source: ChangeSource;
  requestId?: string;
}

/**
 * A request to start or cancel a loop's autotune, stored like a fault reset: the next
 * generation, and an 'autotune-requested' / 'autotune-cancel-requested' event. Whether the loop
 * can run one (mode, faults, a run in progress) is the daemon's to decide when it acts on it.
 */
export function requestAutotuneInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  loop: string,
  request: AutotuneCommand,
): DesiredRecord {
  const { action, requestedAtMs, options = {}, source, requestId } = request;
  const optionsJson = checkedAutotuneOptions(loop, options);
  const row = liveRow(stmt, loop);
  const now = nowMs();
  const generation = nextGeneration(stmt);
  const committed: DesiredRecord = {
    ...row,
    generation,
    updated_at_ms: now,
    autotune_action: action,
    autotune_requested_at_ms: requestedAtMs,
    autotune_generation: generation,
    autotune_options_json: optionsJson,
  };
  stmt.upsert.run(committed);
  const stored = JSON.parse(optionsJson) as AutotuneOptions;
  writeEvent(stmt, {
    atMs: now,
    loop,
    kind: action === 'start' ? 'autotune-requested' : 'autotune-cancel-requested',
    source,
    message: action === 'start' ? `autotune requested (${source})` : `autotune cancel requested (${source})`,
    data: {
      generation,
      requestedAtMs,
      ...(action === 'start' ? { options: stored } : {}),
      ...(requestId === undefined ? {} : { requestId }),
    },
  });
  return committed;
}
