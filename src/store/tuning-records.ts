import type {
  AutotuneRequestOptions as AutotuneOptions,
  AutotuneRequest,
  NewTuning,
  TuningGains,
} from '../core/tuning/stored-tuning.js';
import type { ChangeSource } from './desired-records.js';

// The shapes the pure code reads live in core; importers keep this module's names.
export type {
  AutotuneRequest,
  AutotuneRequestOptions as AutotuneOptions,
  NewTuning,
  StoredTuning,
  TuningGains,
  TuningModel,
  TuningSource,
} from '../core/tuning/stored-tuning.js';

/**
 * The shapes of versioned tunings (schema version 5; the lower side's gains: 6): as the daemon, CLI and HTTP read them
 * (StoredTuning, AutotuneRequest), as SQLite stores them (TuningRecord), and the checks a new
 * tuning or request passes before anything is written; the conversions between a tuning and its
 * row are in tuning-codec.ts.
 *
 * A tuning is a set of PID gains with where they came from (an autotune, or entered by hand),
 * the identified model when there is one, and a free summary (`details`). Each gets the loop's
 * next version (1, 2, 3…; never reused, see migration 5). The loop's desired state names the
 * version in force (none: the config file's gains).
 */

/** Who made a tuning the one in force: a person (ChangeSource) or the autotune itself. */
export type TuningChangeSource = ChangeSource | 'autotune';

/** The most a tuning's `details` may take, serialized as JSON, bytes. */
export const MAX_TUNING_DETAILS_BYTES = 16 * 1024;

/** A `tunings` row as stored. */
export interface TuningRecord {
  loop: string;
  version: number;
  created_at_ms: number;
  source: string;
  kp: number;
  ti_s: number;
  td_s: number;
  /** NULL: the tuning has no setpoint weight. Optional: rows are written by a statement that may not name it. */
  setpoint_weight?: number | null;
  /** The lower side's gains (schema version 6); NULL: none, `gains` serve both sides. */
  lower_kp?: number | null;
  lower_ti_s?: number | null;
  lower_td_s?: number | null;
  lower_setpoint_weight?: number | null;
  model_gain: number | null;
  model_time_constant_s: number | null;
  model_dead_time_s: number | null;
  model_ambient: number | null;
  se_gain: number | null;
  se_time_constant_s: number | null;
  se_dead_time_s: number | null;
  rms_residual: number | null;
  details_json: string | null;
}

/** Refused a tuning or request before anything was written (callers map it to a refusal). */
export class TuningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TuningError';
  }
}

/** `applyTuning` was asked for a version the loop does not have. */
export class UnknownTuningError extends TuningError {
  constructor(
    readonly loop: string,
    readonly version: number,
  ) {
    super(`loop "${loop}" has no tuning version ${version}`);
    this.name = 'UnknownTuningError';
  }
}

function assertFinite(loop: string, what: string, value: number, min?: number): void {
  if (!Number.isFinite(value) || (min !== undefined && value < min))
    throw new TuningError(
      `loop "${loop}": tuning ${what} must be a finite number${min === undefined ? '' : ` ≥ ${min}`}, got ${value}`,
    );
}

/** Checks one side's gains (`side`: '' or 'lower ', for the message). */
function checkGains(loop: string, gains: TuningGains, side: string): void {
  if (gains === null || typeof gains !== 'object')
    throw new TuningError(`loop "${loop}": tuning ${side}gains must be an object`);
  assertFinite(loop, `${side}kp`, gains.kp);
  if (gains.kp <= 0) throw new TuningError(`loop "${loop}": tuning ${side}kp must be > 0, got ${gains.kp}`);
  assertFinite(loop, `${side}tiS`, gains.tiS, 0);
  assertFinite(loop, `${side}tdS`, gains.tdS, 0);
  if (gains.setpointWeight !== undefined) {
    assertFinite(loop, `${side}setpointWeight`, gains.setpointWeight, 0);
    if (gains.setpointWeight > 1)
      throw new TuningError(
        `loop "${loop}": tuning ${side}setpointWeight must be ≤ 1, got ${gains.setpointWeight}`,
      );
  }
}

/** Checks a tuning before it is stored; returns its details serialized (null: none). */
export function checkedTuning(loop: string, tuning: NewTuning): string | null {
  const { gains, lowerGains, model, details } = tuning;
  checkGains(loop, gains, '');
  if (lowerGains !== undefined) checkGains(loop, lowerGains, 'lower ');
  if (model) {
    for (const key of ['gain', 'timeConstantS', 'deadTimeS', 'ambient', 'rmsResidual'] as const)
      assertFinite(loop, `model ${key}`, model[key]);
    // NaN is allowed (unknown, stored as NULL); an infinity is a bug.
    for (const [key, value] of Object.entries(model.standardError))
      if (value === Number.POSITIVE_INFINITY || value === Number.NEGATIVE_INFINITY)
        throw new TuningError(`loop "${loop}": tuning model standard error ${key} is infinite`);
  }
  if (details === undefined) return null;
  const json = JSON.stringify(details);
  if (json === undefined) throw new TuningError(`loop "${loop}": tuning details are not JSON`);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_TUNING_DETAILS_BYTES)
    throw new TuningError(
      `loop "${loop}": tuning details take ${bytes} bytes, more than ${MAX_TUNING_DETAILS_BYTES}`,
    );
  return json;
}

/**
 * The largest options a stored request may hold, seconds, on write and on read: the bounds every
 * way in holds requests to (MQTT: control/tuning-payloads.ts, HTTP: operations/write-schemas.ts). A larger
 * value is a unit mistake or a damaged row; read back, it must not become a run of months.
 */
export const MAX_AUTOTUNE_OPTION_S = { closedLoopS: 86_400, maxDurationS: 7 * 86_400 } as const;

/** Whether `value` is a stored option `key` may hold: seconds above 0, at most its bound. */
function optionInRange(key: keyof typeof MAX_AUTOTUNE_OPTION_S, value: unknown): value is number {
  return (
    typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_AUTOTUNE_OPTION_S[key]
  );
}

/** Checks an autotune request's options; returns them serialized. */
export function checkedAutotuneOptions(loop: string, options: AutotuneOptions): string {
  const { side, closedLoopS, maxDurationS } = options;
  if (side !== undefined && side !== 'raise' && side !== 'lower')
    throw new TuningError(`loop "${loop}": autotune side must be "raise" or "lower", got ${String(side)}`);
  for (const [key, value] of [
    ['closedLoopS', closedLoopS],
    ['maxDurationS', maxDurationS],
  ] as const) {
    if (value !== undefined && !optionInRange(key, value))
      throw new TuningError(
        `loop "${loop}": autotune ${key} must be a finite number > 0 and ≤ ${MAX_AUTOTUNE_OPTION_S[key]} s, got ${value}`,
      );
  }
  // Only the known keys: the column stays small whatever a caller passes.
  return JSON.stringify({
    ...(side === undefined ? {} : { side }),
    ...(closedLoopS === undefined ? {} : { closedLoopS }),
    ...(maxDurationS === undefined ? {} : { maxDurationS }),
  });
}

/** Stored options as a request carries them; damaged ones are empty and flagged. */
export function parseAutotuneOptions(
  json: string | null,
): Pick<AutotuneRequest, 'options' | 'optionsUnreadable'> {
  if (json === null) return { options: {} };
  try {
    const parsed: unknown = JSON.parse(json);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      // Checked again as on write: a damaged value (a text, NaN) must not become a run without a
      // time limit or reach the gain computation. Bad keys are dropped and the request flagged.
      const checked = readableAutotuneOptions(parsed as Record<string, unknown>);
      return checked.dropped
        ? { options: checked.options, optionsUnreadable: true }
        : { options: checked.options };
    }
  } catch {
    // Below: the request stays (its action and generation are intact), with the defaults.
  }
  return { options: {}, optionsUnreadable: true };
}

/**
 * The file's gains as stored in loop_desired.file_gains_json (fixed key order: compared as text).
 * `lower`: the file's lower side (controller.lower), when it has one; absent, the text is the one
 * written before per-side gains, so an upgrade is no change of the file's gains.
 */
export function fileGainsJson(gains: TuningGains & { lower?: TuningGains }): string {
  const { lower } = gains;
  return JSON.stringify({
    kp: gains.kp,
    tiS: gains.tiS,
    tdS: gains.tdS,
    ...(lower === undefined ? {} : { lower: { kp: lower.kp, tiS: lower.tiS, tdS: lower.tdS } }),
  });
}

/** The stored options that pass the write checks; `dropped` when any key did not. */
function readableAutotuneOptions(raw: Record<string, unknown>): {
  options: AutotuneOptions;
  dropped: boolean;
} {
  const options: AutotuneOptions = {};
  let dropped = false;
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'side' && (value === 'raise' || value === 'lower')) options.side = value;
    else if ((key === 'closedLoopS' || key === 'maxDurationS') && optionInRange(key, value))
      options[key] = value;
    else dropped = true;
  }
  return { options, dropped };
}
