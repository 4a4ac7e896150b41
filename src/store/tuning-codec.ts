import type { NewTuning, StoredTuning, TuningGains, TuningRecord, TuningSource } from './tuning-records.js';

/**
 * A tuning as the daemon, CLI and HTTP read it (StoredTuning) and as SQLite stores it
 * (TuningRecord, a `tunings` row): the conversions both ways, and the comparison that tells the
 * same tuning under another version number.
 */

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
