import type { Direction } from '../types.js';

/**
 * The shapes of a loop's stored tunings and autotune request as the pure code reads them: the
 * gains in force, a finished run's result to store, the request acted on once by generation.
 * The store (store/tuning-records.ts) keeps them in SQLite and re-exports these types.
 *
 * A tuning is a set of PID gains with where they came from (an autotune, or entered by hand),
 * the identified model when there is one, and a free summary (`details`). Each gets the loop's
 * next version (1, 2, 3…; never reused). The loop's desired state names the version in force
 * (none: the config file's gains).
 */

/** Where a tuning's gains came from. */
export type TuningSource = 'autotune' | 'manual';

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

/** What an autotune request may say; every field optional (the loop's defaults apply). */
export interface AutotuneRequestOptions {
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
  options: AutotuneRequestOptions;
  /** The stored options could not be parsed (a damaged row): `options` is empty. */
  optionsUnreadable?: true;
}
