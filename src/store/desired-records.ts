import { createHash } from 'node:crypto';
import type { StoredFaultReset } from '../core/fault-reset.js';
import type { ProfileRun } from '../core/schedule/types.js';
import type { Mode } from '../core/types.js';
import {
  type AutotuneRequest,
  parseAutotuneOptions,
  type StoredTuning,
  type TuningChangeSource,
  type TuningGains,
} from './tuning-records.js';

/**
 * The shapes of desired state: as the daemon reads it (LoopDesiredRow), as applyConfig takes the
 * file (ConfigLoop), and as SQLite stores it (DesiredRecord), with the conversions between them.
 * DesiredStore (desired-store.ts) re-exports the public ones.
 */

/** Who asked for a change of desired state ('http': the HTTP API and its dashboard). */
export type ChangeSource = 'file' | 'mqtt' | 'http' | 'cli' | 'homeassistant';

/** A loop's current desired state. */
export interface LoopDesiredRow {
  loop: string;
  /** In the unit of the loop's sensor (°C, %RH). */
  setpoint: number;
  setpointSource: ChangeSource;
  mode: Mode;
  modeSource: ChangeSource;
  /** The generation of the last change to this loop's desired state or config section. */
  generation: number;
  /** When that change was stored, ms since epoch. */
  updatedAtMs: number;
  /**
   * The last fault reset asked for (absent: never): the clock time it was received and the
   * generation it got. The loop applies it once, to a fault latched at or before that time
   * (core/fault-reset.ts).
   */
  faultReset?: StoredFaultReset;
  /** The tuning in force (absent: the config file's gains), with its model and details. */
  tuning?: StoredTuning;
  /** Who chose the tuning in force (absent: the file; 'autotune': applied automatically). */
  tuningSource?: TuningChangeSource;
  /**
   * The highest tuning version this loop was given (absent: none). Higher than
   * `tuning.version`: a newer tuning was proposed and not applied. Carried into another file
   * with the desired state, so versions are never reused.
   */
  lastTuningVersion?: number;
  /** The last autotune request (absent: never); the loop acts on each once, by generation. */
  autotuneRequest?: AutotuneRequest;
  /** The preset selected by hand (absent: none; a manual setpoint change clears it). */
  preset?: string;
  /**
   * The last manual change of setpoint, mode or preset (any source, and a re-applied file that
   * changed them), ms: a change after the schedule's latest point overrides it (core/schedule).
   * Absent: none stored (rows from before schema version 7).
   */
  changedAtMs?: number;
  /** The profile started (running, paused or finished) until stopped: its name and run. */
  profileRun?: { name: string } & ProfileRun;
}

/** One line of the event log; `data` is any JSON value. */
export interface StoredEvent {
  atMs: number;
  loop?: string;
  kind: string;
  source?: string;
  message: string;
  data?: unknown;
}

/** What applyConfig did. */
export interface ApplyConfigResult {
  /** The generation of the applied config (unchanged when the text was already the latest). */
  generation: number;
  /** False when the text had the same hash as the latest applied config: nothing was written. */
  changed: boolean;
  /** Loops new to the store (or re-added after a removal): they start from the file's values. */
  addedLoops: string[];
  /** Loops whose desired setpoint/mode or config section changed: they got `generation`. */
  changedLoops: string[];
  /** Loops no longer in the file: the daemon runs their finalizer, then markRemovalFinalized. */
  removedLoops: string[];
}

/** The file's view of one loop, as applyConfig takes it. */
export interface ConfigLoop {
  setpoint: number;
  mode: Mode;
  /** Hash of the loop's config section (e.g. sha256 of its canonical JSON). */
  sectionHash: string;
  /**
   * The PID gains of the loop's controller (absent: not a PID, or not passed). When a
   * re-applied file changed them since it was last applied, the active tuning gives way to
   * them; without them a tuning survives every config change.
   */
  gains?: TuningGains & { lower?: TuningGains };
}

/** Hex SHA-256 of a UTF-8 text. */
export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A `loop_desired` row as stored (also read directly by tests that inspect the file). */
export interface DesiredRecord {
  loop: string;
  setpoint: number;
  setpoint_source: string;
  file_setpoint: number;
  mode: string;
  mode_source: string;
  file_mode: string;
  section_hash: string;
  generation: number;
  updated_at_ms: number;
  removed_at_ms: number | null;
  /** Schema version 4; NULL when never reset. */
  fault_reset_at_ms: number | null;
  fault_reset_generation: number | null;
  /** Schema version 5; NULL: the file's gains / the file / no tuning / not known. */
  tuning_version: number | null;
  tuning_source: string | null;
  last_tuning_version: number | null;
  file_gains_json: string | null;
  /** Schema version 5; NULL when never requested. */
  autotune_action: string | null;
  autotune_requested_at_ms: number | null;
  autotune_generation: number | null;
  autotune_options_json: string | null;
  /** Schema version 7; NULL: no preset / no manual change stored / no profile started. */
  preset: string | null;
  changed_at_ms: number | null;
  profile: string | null;
  profile_started_at_ms: number | null;
  profile_paused_at_ms: number | null;
  profile_paused_total_ms: number | null;
  profile_resumed_at_ms: number | null;
}

/**
 * The row as the daemon reads it; `tuning`: the stored tuning `row.tuning_version` names
 * (absent when it names none, or one the file lacks: the file's gains apply then).
 */
export function toDesiredRow(row: DesiredRecord, tuning?: StoredTuning): LoopDesiredRow {
  const desired: LoopDesiredRow = {
    loop: row.loop,
    setpoint: row.setpoint,
    // Written only from ChangeSource/Mode values by DesiredStore.
    setpointSource: row.setpoint_source as ChangeSource,
    mode: row.mode as Mode,
    modeSource: row.mode_source as ChangeSource,
    generation: row.generation,
    updatedAtMs: row.updated_at_ms,
    ...(row.fault_reset_at_ms === null || row.fault_reset_generation === null
      ? {}
      : { faultReset: { atMs: row.fault_reset_at_ms, generation: row.fault_reset_generation } }),
  };
  if (tuning !== undefined && tuning.version === row.tuning_version) desired.tuning = tuning;
  if (row.tuning_source !== null && row.tuning_source !== 'file')
    desired.tuningSource = row.tuning_source as TuningChangeSource;
  if (row.last_tuning_version !== null) desired.lastTuningVersion = row.last_tuning_version;
  const request = autotuneRequestOf(row);
  if (request) desired.autotuneRequest = request;
  if (row.preset !== null && row.preset !== undefined) desired.preset = row.preset;
  if (row.changed_at_ms !== null && row.changed_at_ms !== undefined) desired.changedAtMs = row.changed_at_ms;
  const run = profileRunOf(row);
  if (run) desired.profileRun = run;
  return desired;
}

/** The stored profile run of `row`; undefined when none is started. */
export function profileRunOf(row: DesiredRecord): LoopDesiredRow['profileRun'] {
  if (row.profile === null || row.profile === undefined) return undefined;
  if (row.profile_started_at_ms === null || row.profile_started_at_ms === undefined) return undefined;
  return {
    name: row.profile,
    startedAtMs: row.profile_started_at_ms,
    pausedTotalMs: row.profile_paused_total_ms ?? 0,
    ...(row.profile_paused_at_ms === null || row.profile_paused_at_ms === undefined
      ? {}
      : { pausedAtMs: row.profile_paused_at_ms }),
    ...(row.profile_resumed_at_ms === null || row.profile_resumed_at_ms === undefined
      ? {}
      : { resumedAtMs: row.profile_resumed_at_ms }),
  };
}

/** `row` with `run` stored (undefined: none started), changed in place. */
export function storeProfileRun(row: DesiredRecord, run: LoopDesiredRow['profileRun']): void {
  row.profile = run?.name ?? null;
  row.profile_started_at_ms = run?.startedAtMs ?? null;
  row.profile_paused_at_ms = run?.pausedAtMs ?? null;
  row.profile_paused_total_ms = run === undefined ? null : run.pausedTotalMs;
  row.profile_resumed_at_ms = run?.resumedAtMs ?? null;
}

/** Whether `row` stores the preset, manual-change time and profile run of `want`. */
export function sameScheduleState(want: LoopDesiredRow, row: DesiredRecord): boolean {
  const run = profileRunOf(row);
  const other = want.profileRun;
  return (
    (want.preset ?? null) === (row.preset ?? null) &&
    (want.changedAtMs ?? null) === (row.changed_at_ms ?? null) &&
    (run?.name ?? null) === (other?.name ?? null) &&
    run?.startedAtMs === other?.startedAtMs &&
    run?.pausedAtMs === other?.pausedAtMs &&
    run?.pausedTotalMs === other?.pausedTotalMs &&
    run?.resumedAtMs === other?.resumedAtMs
  );
}

/** The stored autotune request of `row`; undefined when never requested. */
export function autotuneRequestOf(row: DesiredRecord): AutotuneRequest | undefined {
  const { autotune_action: action, autotune_requested_at_ms: atMs, autotune_generation: generation } = row;
  if (action === null || atMs === null || generation === null) return undefined;
  if (action !== 'start' && action !== 'cancel') return undefined;
  return { action, atMs, generation, ...parseAutotuneOptions(row.autotune_options_json) };
}

/** Whether `row` stores the autotune request `request` (both absent counts as the same). */
export function sameAutotuneRequest(request: AutotuneRequest | undefined, row: DesiredRecord): boolean {
  if (request === undefined) return row.autotune_generation === null;
  return row.autotune_generation === request.generation && row.autotune_requested_at_ms === request.atMs;
}

/** Whether `row` stores the reset `reset` (both absent counts as the same). */
export function sameReset(reset: StoredFaultReset | undefined, row: DesiredRecord): boolean {
  if (reset === undefined) return row.fault_reset_generation === null;
  return row.fault_reset_at_ms === reset.atMs && row.fault_reset_generation === reset.generation;
}

export function assertFiniteSetpoint(loop: string, setpoint: number): void {
  // SQLite stores NaN as NULL: reject it here with a message instead of a constraint error.
  if (!Number.isFinite(setpoint))
    throw new Error(`loop "${loop}": setpoint must be a finite number, got ${setpoint}`);
}
