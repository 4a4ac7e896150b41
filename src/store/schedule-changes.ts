import {
  pauseProfileRun,
  rebaseProfileRun,
  resumeProfileRun,
  startProfileRun,
} from '../core/schedule/profile.js';
import type { Presets } from '../core/schedule/types.js';
import { liveRow } from './desired-changes.js';
import { writeDesiredChangeEvent, writeEvent } from './desired-events.js';
import { type ChangeSource, type DesiredRecord, profileRunOf, storeProfileRun } from './desired-records.js';
import { type DesiredStatements, nextGeneration } from './desired-statements.js';

/**
 * Presets and profiles as desired state: DesiredStore.selectPreset's,
 * profileCommand's and rebaseSchedules' work inside their transactions. Like setDesired's: the
 * next generation, an event, and no write at all for a repeat (a QoS 1 duplicate).
 */

/** What DesiredStore.profileCommand takes. */
/**
 * `restart`: start the profile already started from its beginning (it has finished; the
 * caller knows, it has the steps). Without it, starting the started profile is a duplicate.
 */
export type ProfileCommand =
  | { action: 'start'; name: string; restart?: boolean }
  | { action: 'pause' | 'resume' | 'stop' };

const PAST: Record<ProfileCommand['action'], string> = {
  start: 'started',
  pause: 'paused',
  resume: 'resumed',
  stop: 'stopped',
};

type Written = { changed: boolean; generation: number; committed?: DesiredRecord };

/**
 * A preset selected by hand (`name`), or none (`null`: clears the preset only; the stored
 * setpoint stays). Selecting puts the preset's setpoint (and mode, if it has one) in the stored
 * setpoint/mode, so the manual base stays meaningful if the preset is later removed. Whether
 * the name is one of the loop's presets is the caller's to check; an unknown one throws here.
 */
export function selectPresetInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  request: {
    loop: string;
    name: string | null;
    presets: Presets;
    source: ChangeSource;
    requestId?: string;
    /** The preset asked for is the stored one but a schedule or profile overrides it now: take over. */
    override?: boolean;
  },
): Written {
  const { loop, name, presets, source, requestId } = request;
  const row = liveRow(stmt, loop);
  if ((row.preset ?? null) === name && request.override !== true)
    return { changed: false, generation: row.generation };
  const preset = name === null ? undefined : Object.hasOwn(presets, name) ? presets[name] : undefined;
  if (name !== null && preset === undefined) throw new Error(`loop "${loop}": unknown preset "${name}"`);
  const now = nowMs();
  const generation = nextGeneration(stmt);
  const next: DesiredRecord = { ...row, generation, updated_at_ms: now, preset: name, changed_at_ms: now };
  const recorded = { now, loop, source, generation, requestId };
  if (preset !== undefined) {
    if (preset.setpoint !== row.setpoint) {
      next.setpoint = preset.setpoint;
      next.setpoint_source = source;
      writeDesiredChangeEvent(stmt, 'setpoint', { ...recorded, from: row.setpoint, to: preset.setpoint });
    }
    if (preset.mode !== undefined && preset.mode !== row.mode) {
      next.mode = preset.mode;
      next.mode_source = source;
      writeDesiredChangeEvent(stmt, 'mode', { ...recorded, from: row.mode, to: preset.mode });
    }
  }
  stmt.upsert.run(next);
  writeEvent(stmt, {
    atMs: now,
    loop,
    kind: 'preset-changed',
    source,
    message: `preset ${row.preset ?? 'none'} → ${name ?? 'none'} (${source})`,
    data: { from: row.preset, to: name, generation, ...(requestId === undefined ? {} : { requestId }) },
  });
  return { changed: true, generation, committed: next };
}

/**
 * Start (a new run, also over a running one of another or the same name: a restart only when
 * the name differs, else a repeat), pause, resume or stop a profile. Pause when paused or none,
 * resume when running or none, stop when none: no-ops. Whether the name is one of the loop's
 * profiles is the caller's to check.
 */
export function profileCommandInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  request: { loop: string; command: ProfileCommand; source: ChangeSource; requestId?: string },
): Written {
  const { loop, command, source, requestId } = request;
  const row = liveRow(stmt, loop);
  const run = profileRunOf(row);
  const now = nowMs();
  let after: ReturnType<typeof profileRunOf>;
  switch (command.action) {
    case 'start':
      // The same profile started again while it is started: a duplicate (QoS 1), not a restart.
      if (run?.name === command.name && command.restart !== true)
        return { changed: false, generation: row.generation };
      after = { name: command.name, ...startProfileRun(now) };
      break;
    case 'pause':
      if (run === undefined || run.pausedAtMs !== undefined)
        return { changed: false, generation: row.generation };
      after = { ...run, ...pauseProfileRun(run, now) };
      break;
    case 'resume':
      if (run === undefined || run.pausedAtMs === undefined)
        return { changed: false, generation: row.generation };
      after = { name: run.name, ...resumeProfileRun(run, now) };
      break;
    case 'stop':
      if (run === undefined) return { changed: false, generation: row.generation };
      after = undefined;
      break;
    default:
      throw new Error(
        `loop "${loop}": unknown profile action ${String((command as { action: unknown }).action)}`,
      );
  }
  const generation = nextGeneration(stmt);
  const next: DesiredRecord = { ...row, generation, updated_at_ms: now };
  storeProfileRun(next, after);
  stmt.upsert.run(next);
  const name = after?.name ?? run?.name;
  writeEvent(stmt, {
    atMs: now,
    loop,
    kind: `profile-${command.action}`,
    source,
    message:
      command.action === 'start' && run !== undefined
        ? `profile ${run.name} stopped, ${command.name} started (${source})`
        : `profile ${name} ${PAST[command.action]} (${source})`,
    data: { profile: name, generation, ...(requestId === undefined ? {} : { requestId }) },
  });
  return { changed: true, generation, committed: next };
}

/**
 * Which stored times a clock step moves (DesiredStore.rebaseSchedules). Times are in the frame
 * before the step.
 */
export interface RebaseScope {
  /**
   * Only times in [fromMs, toMs] move: those the process that saw the step recorded under the
   * old clock (from its start to the step). A time from an earlier run was recorded under the
   * clock of then (a Pi without a real-time clock boots in 1970 or at its last shutdown, and the
   * boot-time NTP step must not move a profile started days before under a correct clock).
   */
  fromMs: number;
  toMs: number;
  /**
   * The live rows' generations when the step was noticed. A row written since (the change
   * whose clock read noticed the step, before this rebase ran) keeps the times stamped at that
   * write, its `updated_at_ms`: they are already on the new clock.
   */
  generations?: ReadonlyMap<string, number>;
}

/**
 * A clock step of `stepMs`: every live loop's profile times and last manual change within
 * `scope` (all without one) move with it (rebaseProfileRun), so a step is neither skipped nor
 * repeated and a manual hold keeps its length. The rows written get one next generation; a
 * 'profile-rebased' event per loop whose profile moved. Returns the rows written.
 */
export function rebaseSchedulesInTransaction(
  stmt: DesiredStatements,
  nowMs: () => number,
  stepMs: number,
  scope?: RebaseScope,
): DesiredRecord[] {
  if (stepMs === 0 || !Number.isFinite(stepMs)) return [];
  const written: DesiredRecord[] = [];
  let generation: number | undefined;
  for (const row of stmt.liveRows.all()) {
    const writtenSince =
      scope?.generations !== undefined && scope.generations.get(row.loop) !== row.generation;
    const moves = (tMs: number): boolean =>
      scope === undefined ||
      (tMs >= scope.fromMs && tMs <= scope.toMs && !(writtenSince && tMs === row.updated_at_ms));
    const run = profileRunOf(row);
    const movedRun =
      run === undefined ? undefined : { name: run.name, ...rebaseProfileRun(run, stepMs, moves) };
    const runMoved =
      run !== undefined &&
      (movedRun!.startedAtMs !== run.startedAtMs ||
        movedRun!.pausedAtMs !== run.pausedAtMs ||
        movedRun!.resumedAtMs !== run.resumedAtMs);
    const changedMoves = row.changed_at_ms !== null && moves(row.changed_at_ms);
    if (!runMoved && !changedMoves) continue;
    // One generation for the whole step, as a config applies one to every loop it changed.
    generation ??= nextGeneration(stmt);
    const next: DesiredRecord = { ...row, generation, updated_at_ms: nowMs() };
    if (runMoved) storeProfileRun(next, movedRun);
    if (changedMoves) next.changed_at_ms = row.changed_at_ms! + stepMs;
    stmt.upsert.run(next);
    written.push(next);
    if (runMoved) {
      writeEvent(stmt, {
        atMs: nowMs(),
        loop: row.loop,
        kind: 'profile-rebased',
        message: `profile ${run!.name} moved with a clock step of ${stepMs / 1000} s`,
        data: { profile: run!.name, stepMs, generation },
      });
    }
  }
  return written;
}
