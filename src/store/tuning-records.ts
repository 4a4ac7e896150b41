import type { Direction } from '../core/types.js';
import type { ChangeSource } from './desired-records.js';

/**
 * The shapes of versioned tunings (schema version 5; the lower side's gains: 6): as the daemon, CLI and HTTP read them
 * (StoredTuning, AutotuneRequest), as SQLite stores them (TuningRecord), the conversions and the
 * checks a new tuning or request passes before anything is written.
 *
 * A tuning is a set of PID gains with where they came from (an autotune, or entered by hand),
 * the identified model when there is one, and a free summary (`details`). Each gets the loop's
 * next version (1, 2, 3…; never reused, see migration 5). The loop's desired state names the
 * version in force (none: the config file's gains).
 */

/** Where a tuning's gains came from. */
export type TuningSource = 'autotune' | 'manual';

/** Who made a tuning the one in force: a person (ChangeSource) or the autotune itself. */
export type TuningChangeSource = ChangeSource | 'autotune';

/** PID gains, as the config's controller has them. */
export interface TuningGains {
  kp: number;
  tiS: number;
  tdS: number;
  /**
   * Setpoint weight b, 0..1 (core/pid.ts: P = kp·(b·r − y)); the autotune derives it from the
   * model (core/tuning/simc.ts). Absent: the tuning leaves the config's b (default 1) alone.
   */
  setpointWeight?: number;
}

/**
 * The identified first-order-plus-dead-time model (core/tuning/identify-fopdt.ts: its `model`
 * fields with `standardError` and `rmsResidual` beside them). A standard error is NaN when not
 * known (fewer than 2 cycles).
 */
export interface TuningModel {
  gain: number;
  timeConstantS: number;
  deadTimeS: number;
  ambient: number;
  standardError: { gain: number; timeConstantS: number; deadTimeS: number };
  rmsResidual: number;
}

/** A tuning to store (DesiredStore.recordTuning). */
export interface NewTuning {
  /** The PID's gains; on a loop with a heater and a cooler, the raise side's. */
  gains: TuningGains;
  /**
   * A loop with a heater and a cooler: the lower side's gains (schema version 6). Absent: `gains`
   * serve both sides. An autotune of one side stores the other side's gains in force here or in
   * `gains`, so the tuning is complete.
   */
  lowerGains?: TuningGains;
  model?: TuningModel;
  /**
   * Any JSON value: the autotune's summary (duration, cycles, noise, band, modulation
   * suggestion, side). At most MAX_TUNING_DETAILS_BYTES once serialized.
   */
  details?: unknown;
}

/** A stored tuning. */
export interface StoredTuning extends NewTuning {
  loop: string;
  version: number;
  createdAtMs: number;
  source: TuningSource;
  /** The stored details could not be parsed (a damaged row): `details` is absent. */
  detailsUnreadable?: true;
}

/** The most a tuning's `details` may take, serialized as JSON, bytes. */
export const MAX_TUNING_DETAILS_BYTES = 16 * 1024;

/** What an autotune request may say; every field optional (the loop's defaults apply). */
export interface AutotuneOptions {
  /**
   * The side to tune (core's Direction: a heater or humidifier raises, a cooler lowers); needed
   * in heat_cool and auto, where both act.
   */
  side?: Direction;
  /** SIMC's closed-loop time constant, seconds (default: the identified dead time). */
  closedLoopS?: number;
  /** The run's time limit, seconds. */
  maxDurationS?: number;
}

/**
 * The last autotune request stored for a loop (absent: never): the loop acts on each once, by
 * generation, like a fault reset.
 */
export interface AutotuneRequest {
  action: 'start' | 'cancel';
  /** When it was received, clock ms. */
  atMs: number;
  generation: number;
  options: AutotuneOptions;
  /** The stored options could not be parsed (a damaged row): `options` is empty. */
  optionsUnreadable?: true;
}

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

/** The row storing `tuning` as `version`. */
export function toTuningRecord(
  loop: string,
  version: number,
  createdAtMs: number,
  source: TuningSource,
  tuning: NewTuning,
  detailsJson: string | null,
): TuningRecord {
  const { gains, lowerGains, model } = tuning;
  // SQLite stores NaN as NULL anyway; written explicitly so the reader knows what NULL means.
  const orNull = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? null : value);
  return {
    loop,
    version,
    created_at_ms: createdAtMs,
    source,
    kp: gains.kp,
    ti_s: gains.tiS,
    td_s: gains.tdS,
    setpoint_weight: gains.setpointWeight ?? null,
    lower_kp: lowerGains?.kp ?? null,
    lower_ti_s: lowerGains?.tiS ?? null,
    lower_td_s: lowerGains?.tdS ?? null,
    lower_setpoint_weight: lowerGains?.setpointWeight ?? null,
    model_gain: orNull(model?.gain),
    model_time_constant_s: orNull(model?.timeConstantS),
    model_dead_time_s: orNull(model?.deadTimeS),
    model_ambient: orNull(model?.ambient),
    se_gain: orNull(model?.standardError.gain),
    se_time_constant_s: orNull(model?.standardError.timeConstantS),
    se_dead_time_s: orNull(model?.standardError.deadTimeS),
    rms_residual: orNull(model?.rmsResidual),
    details_json: detailsJson,
  };
}

/** A stored row as the store returns it; damaged details are left out and flagged. */
export function toStoredTuning(row: TuningRecord): StoredTuning {
  const tuning: StoredTuning = {
    loop: row.loop,
    version: row.version,
    createdAtMs: row.created_at_ms,
    source: row.source as TuningSource,
    gains: {
      kp: row.kp,
      tiS: row.ti_s,
      tdS: row.td_s,
      ...(row.setpoint_weight === null || row.setpoint_weight === undefined
        ? {}
        : { setpointWeight: row.setpoint_weight }),
    },
  };
  const lowerGains = lowerGainsOf(row);
  if (lowerGains !== undefined) tuning.lowerGains = lowerGains;
  if (
    row.model_gain !== null &&
    row.model_time_constant_s !== null &&
    row.model_dead_time_s !== null &&
    row.model_ambient !== null
  ) {
    tuning.model = {
      gain: row.model_gain,
      timeConstantS: row.model_time_constant_s,
      deadTimeS: row.model_dead_time_s,
      ambient: row.model_ambient,
      standardError: {
        gain: row.se_gain ?? Number.NaN,
        timeConstantS: row.se_time_constant_s ?? Number.NaN,
        deadTimeS: row.se_dead_time_s ?? Number.NaN,
      },
      rmsResidual: row.rms_residual ?? Number.NaN,
    };
  }
  if (row.details_json !== null) {
    try {
      tuning.details = JSON.parse(row.details_json);
    } catch {
      // A damaged summary must not keep the gains from being used, nor the store from opening.
      tuning.detailsUnreadable = true;
    }
  }
  return tuning;
}

/**
 * The lower side's gains of a row; undefined when it has none (every lower column NULL). A row
 * with some of them NULL is damaged: its lower gains read as NaN, which no PID runs with
 * (runtime usableTuning), so the file's gains stay in force instead of half a gain set.
 */
function lowerGainsOf(row: TuningRecord): TuningGains | undefined {
  const { lower_kp: kp, lower_ti_s: tiS, lower_td_s: tdS, lower_setpoint_weight: weight } = row;
  const absent = (value: number | null | undefined) => value === null || value === undefined;
  if (absent(kp) && absent(tiS) && absent(tdS) && absent(weight)) return undefined;
  const number = (value: number | null | undefined) => (typeof value === 'number' ? value : Number.NaN);
  return {
    kp: number(kp),
    tiS: number(tiS),
    tdS: number(tdS),
    ...(absent(weight) ? {} : { setpointWeight: number(weight) }),
  };
}

/** Whether two tunings store the same gains from the same moment (the same tuning, maybe renumbered). */
export function sameTuning(a: StoredTuning, b: StoredTuning): boolean {
  return (
    a.createdAtMs === b.createdAtMs &&
    a.source === b.source &&
    a.gains.kp === b.gains.kp &&
    a.gains.tiS === b.gains.tiS &&
    a.gains.tdS === b.gains.tdS &&
    a.gains.setpointWeight === b.gains.setpointWeight &&
    a.lowerGains?.kp === b.lowerGains?.kp &&
    a.lowerGains?.tiS === b.lowerGains?.tiS &&
    a.lowerGains?.tdS === b.lowerGains?.tdS &&
    a.lowerGains?.setpointWeight === b.lowerGains?.setpointWeight
  );
}

/**
 * The largest options a stored request may hold, seconds, on write and on read: the bounds every
 * way in holds requests to (MQTT: mqtt/tuning-commands.ts, HTTP: operations/schemas.ts). A larger
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
