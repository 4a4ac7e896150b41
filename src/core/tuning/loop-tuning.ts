import type { PlantModel } from '../feedforward.js';
import type { LoopSpec } from '../loop-spec.js';
import type { LoopMemory } from '../loop-state.js';
import { defaultDerivativeFilterS } from '../pid.js';
import type { Direction } from '../types.js';
import type { AutotuneMemory } from './autotune.js';
import type { ModulationSuggestion } from './modulation.js';
import { judgeStoredModel } from './reliability.js';
import type { NewTuning, StoredTuning, TuningGains } from './stored-tuning.js';
import { modulationSuggestionFor, tunedRelayModulation } from './tuning-modulation.js';

/**
 * A loop's tunings, pure: the stored tuning's gains in the loop's spec, a finished run's result
 * as the tuning to store, the autotune's events and the `tuning` status part (the stored request
 * applied once by generation: autotune-request.ts).
 */

/** The tuning in force as a cycle reads it from desired state. */
export type ActiveTuning = Pick<StoredTuning, 'version' | 'gains' | 'model' | 'lowerGains'> &
  Partial<Pick<StoredTuning, 'details'>>;

/** The loop's autotune settings from its config section (`autotune`). */
export interface AutotuneDefaults {
  autoApply: boolean;
  closedLoopS?: number;
  maxDurationS?: number;
}

/** What a loop's memory remembers of autotune requests and results (kept in its blob). */
export interface AutotuneMark {
  /** Generation of the last stored autotune request this memory has acted on. */
  autotuneRequestGeneration?: number;
  /** The last start request refused, and why (a person asked and nothing happened: say why). */
  autotuneRefused?: { generation: number; reason: string; atMs: number };
  /** The run whose result was stored (by its start time) and the version it got. */
  tuningRecorded?: { startedAtMs: number; version: number };
}

/** The autotune marks of a memory, to carry them past reconcile. */
export function autotuneMarkOf(memory: AutotuneMark): AutotuneMark {
  const { autotuneRequestGeneration, autotuneRefused, tuningRecorded } = memory;
  return {
    ...(autotuneRequestGeneration === undefined ? {} : { autotuneRequestGeneration }),
    ...(autotuneRefused === undefined ? {} : { autotuneRefused }),
    ...(tuningRecorded === undefined ? {} : { tuningRecorded }),
  };
}

/** An event a cycle's autotune produced, for the event log. */
export interface AutotuneEvent {
  kind:
    | 'autotune-started'
    | 'autotune-refused'
    | 'autotune-done'
    | 'autotune-aborted'
    | 'autotune-unrecorded';
  message: string;
  data?: unknown;
}

/**
 * `spec` with the tuning's gains in place of the config's, and its model for the feedforward
 * when the config gives none (the file's model, measured or written by a person, wins). Only a
 * PID has gains: any other controller is returned as it is. A relay's duty band is band·kp:
 * scaled with its side's kp so the band stays the same in the loop's unit (capped as the
 * config's is). On a loop with a heater and a cooler a tuning's `lowerGains` are the lower
 * side's (ControllerSpec.lowerPid); a tuning without them has one gain set for both sides (as
 * every tuning did before per-side gains), which then replaces the config's `lower` too.
 */
export function tunedLoopSpec(
  spec: LoopSpec,
  tuning: ActiveTuning | undefined,
  maxHalfBand = 0.49,
): LoopSpec {
  const controller = spec.controller;
  // Gains a damaged row (or a bug) made unusable never reach the PID: the file's stay in force.
  if (tuning === undefined || controller.type !== 'pid' || !usableTuning(tuning)) return spec;
  const model = controller.model ?? feedforwardModel(tuning.model);
  const splitRange = spec.raise !== undefined && spec.lower !== undefined;
  const lowerGains = splitRange ? (tuning.lowerGains ?? tuning.gains) : undefined;
  const { lowerPid: _fileLower, ...rest } = controller;
  const fileLowerKp = controller.lowerPid?.kp ?? controller.pid.kp;
  // A relay whose file chose no modulation takes the one the tuning's run suggested for its side.
  const modulated = (actuator: LoopSpec['raise'], side: Direction): LoopSpec['raise'] =>
    actuator && tunedRelayModulation(actuator, modulationSuggestionFor(tuning.details, side));
  const scaled = (actuator: LoopSpec['raise'], kp: number, fileKp: number): LoopSpec['raise'] => {
    if (actuator?.band === undefined) return actuator;
    const scale = fileKp > 0 ? kp / fileKp : 1;
    return { ...actuator, band: { halfBand: Math.min(actuator.band.halfBand * scale, maxHalfBand) } };
  };
  return {
    ...spec,
    controller: {
      ...rest,
      pid: withGains(controller.pid, tuning.gains),
      ...(lowerGains === undefined
        ? {}
        : { lowerPid: withGains(controller.lowerPid ?? controller.pid, lowerGains, controller.pid) }),
      ...(model ? { model } : {}),
    },
    ...(spec.raise
      ? { raise: modulated(scaled(spec.raise, tuning.gains.kp, controller.pid.kp), 'raise') }
      : {}),
    ...(spec.lower
      ? { lower: modulated(scaled(spec.lower, lowerGains?.kp ?? tuning.gains.kp, fileLowerKp), 'lower') }
      : {}),
  };
}

/**
 * `pid` with the gains kp, tiS and tdS of `gains`; a tuning without a setpoint weight (entered
 * by hand, or older) leaves the config's b (for the lower side: its own, else the raise side's).
 */
function withGains<
  P extends { kp: number; tiS: number; tdS: number; setpointWeight?: number; derivativeFilterS?: number },
>(pid: P, gains: TuningGains, fallback: { setpointWeight?: number } = pid): P {
  const { kp, tiS, tdS, setpointWeight } = gains;
  const weight = setpointWeight ?? pid.setpointWeight ?? fallback.setpointWeight;
  // The config's filter was sized for the file's tdS (its default is tdS itself; 0 for a PI): a tuned
  // tdS keeps it only when tdS is unchanged, else gets its own, or a PI's 0-s filter would pass a
  // tuned derivative unfiltered (each quantum step of a DS18B20 a full-scale kick).
  // (Without a filter in the spec, or with no derivative, pidStep needs none from here.)
  const refilter = tdS > 0 && tdS !== pid.tdS && pid.derivativeFilterS !== undefined;
  const filter = refilter ? { derivativeFilterS: defaultDerivativeFilterS(tdS) } : {};
  return { ...pid, kp, tiS, tdS, ...filter, ...(weight === undefined ? {} : { setpointWeight: weight }) };
}

/** Gains the PID can run with: kp finite above 0, times finite and not negative, b within 0..1. */
export function usableGains(gains: TuningGains): boolean {
  const { kp, tiS, tdS, setpointWeight } = gains;
  const time = (value: number) => Number.isFinite(value) && value >= 0;
  return (
    Number.isFinite(kp) &&
    kp > 0 &&
    time(tiS) &&
    time(tdS) &&
    (setpointWeight === undefined || (setpointWeight >= 0 && setpointWeight <= 1))
  );
}

/** A tuning the PID can run with: both sides' gains usable (a damaged lower side spoils it whole). */
export function usableTuning(tuning: Pick<ActiveTuning, 'gains' | 'lowerGains'>): boolean {
  return usableGains(tuning.gains) && (tuning.lowerGains === undefined || usableGains(tuning.lowerGains));
}

/**
 * An identified model as the feedforward takes it: its gain per unit of the signed output,
 * which is positive for a cooler too (identified per unit of the cooler's own level, it is
 * negative: the magnitude is the same plant). Undefined when the gain or ambient is unusable.
 */
function feedforwardModel(model: ActiveTuning['model']): PlantModel | undefined {
  if (model === undefined) return undefined;
  const gain = Math.abs(model.gain);
  if (!(Number.isFinite(gain) && gain > 0 && Number.isFinite(model.ambient))) return undefined;
  return {
    gain,
    ambient: model.ambient,
    ...(Number.isFinite(model.deadTimeS) && model.deadTimeS >= 0 ? { deadTimeS: model.deadTimeS } : {}),
  };
}

/** How far an autotune's kp may be from the file's and still be put in force without a person. */
export const AUTO_APPLY_MAX_KP_RATIO = 10;

/**
 * Whether a finished autotune's gains may go in force without a person looking (the loop's
 * `autotune.autoApply`): not gains 10× away from the file's for the side tuned (a fit gone wrong
 * gives a huge or tiny kp; on a loop with a heater and a cooler, the lower side's kp is held to
 * the file's `lower` kp, else its kp), not a result whose side is unknown there, not a model the
 * core flags as unreliable (core/tuning/reliability.ts: judgeStoredModel). Such a result is
 * stored as a proposal, to accept with `homeostat tuning LOOP latest`.
 */
export function mayApplyUnseen(spec: LoopSpec, tuning: NewTuning): boolean {
  if (!usableTuning(tuning)) return false;
  // A model the core does not trust (K or τ not determined within 20 %) waits for a person.
  if (!judgeStoredModel(tuning.model, tuning.details).reliable) return false;
  const controller = spec.controller;
  if (controller.type !== 'pid') return true;
  let kp = tuning.gains.kp;
  let fileKp = controller.pid.kp;
  if (spec.raise !== undefined && spec.lower !== undefined) {
    const side = tunedSide(tuning);
    if (side === undefined) return false;
    if (side === 'lower') {
      if (tuning.lowerGains === undefined) return false;
      kp = tuning.lowerGains.kp;
      fileKp = controller.lowerPid?.kp ?? controller.pid.kp;
    }
  }
  if (!(fileKp > 0)) return true;
  const ratio = kp / fileKp;
  return ratio <= AUTO_APPLY_MAX_KP_RATIO && ratio >= 1 / AUTO_APPLY_MAX_KP_RATIO;
}

/** The side an autotune result tuned (its `details.side`); undefined when not known. */
function tunedSide(tuning: Pick<NewTuning, 'details'>): Direction | undefined {
  const side = (tuning.details as { side?: unknown } | undefined)?.side;
  return side === 'raise' || side === 'lower' ? side : undefined;
}

/**
 * The finished run's result as the tuning to store; undefined when there is none to store. On a
 * loop with a heater and a cooler (`spec` given) the run tuned one side: the tuning gets the new
 * gains on that side and keeps the gains in force on the other (the active tuning's, else the
 * config's), so putting it in force changes only the side tuned.
 */
export function unrecordedTuning(
  memory: LoopMemory & AutotuneMark,
  inForce?: { spec: LoopSpec; tuning: ActiveTuning | undefined },
): NewTuning | undefined {
  const autotune = memory.autotune;
  if (autotune?.phase !== 'done' || autotune.result === undefined) return undefined;
  if (memory.tuningRecorded?.startedAtMs === autotune.startedAtMs) return undefined;
  const r = autotune.result;
  const { model, standardError, rmsResidual } = r.identification;
  const tuned: TuningGains = {
    kp: r.gains.kp,
    tiS: r.gains.tiS,
    tdS: r.gains.tdS,
    // Absent from a result stored by an older build (the memory outlives an upgrade).
    ...(r.gains.setpointWeight === undefined ? {} : { setpointWeight: r.gains.setpointWeight }),
  };
  const sides = inForce === undefined ? undefined : sideGainsInForce(inForce.spec, inForce.tuning);
  const gains =
    sides === undefined
      ? { gains: tuned }
      : autotune.side === 'lower'
        ? { gains: sides.raise, lowerGains: tuned }
        : { gains: tuned, lowerGains: sides.lower };
  return {
    ...gains,
    model: { ...model, standardError, rmsResidual },
    details: {
      // Identifies the run: a result stored before a crash is not stored twice (see the reconciler).
      runStartedAtMs: autotune.startedAtMs,
      side: autotune.side,
      setpoint: autotune.setpoint,
      durationS: Math.round(r.durationMs / 1000),
      cycles: r.cycles,
      periodS: r.periodS,
      peakToPeak: r.peakToPeak,
      closedLoopS: r.closedLoopS,
      ...(autotune.noise ? { noiseSigma: autotune.noise.sigma, noiseQuantum: autotune.noise.quantum } : {}),
      ...(autotune.hysteresis === undefined ? {} : { hysteresis: autotune.hysteresis }),
      modulation: r.modulation,
      // The other side keeps the relay modulation its own run suggested (tuning-modulation.ts).
      ...(sides === undefined
        ? {}
        : { modulationBySide: modulationBySide(inForce?.tuning, autotune.side, r.modulation) }),
    },
  };
}

/** Both sides' suggested modulation: the run's for its side, the tuning in force's for the other. */
function modulationBySide(
  inForce: ActiveTuning | undefined,
  side: Direction,
  suggestion: ModulationSuggestion,
): Partial<Record<Direction, ModulationSuggestion>> {
  const other: Direction = side === 'raise' ? 'lower' : 'raise';
  const kept = modulationSuggestionFor(inForce?.details, other);
  return { [side]: suggestion, ...(kept === undefined ? {} : { [other]: kept }) };
}

/**
 * The gains each side of a PID loop with a heater and a cooler runs with now (the active
 * tuning's over the file's, tunedLoopSpec); undefined for any other loop.
 */
export function sideGainsInForce(
  spec: LoopSpec,
  tuning: ActiveTuning | undefined,
): { raise: TuningGains; lower: TuningGains } | undefined {
  if (spec.raise === undefined || spec.lower === undefined) return undefined;
  const controller = tunedLoopSpec(spec, tuning).controller;
  if (controller.type !== 'pid') return undefined;
  return { raise: gainsOf(controller.pid), lower: gainsOf(controller.lowerPid ?? controller.pid) };
}

function gainsOf(pid: TuningGains): TuningGains {
  const { kp, tiS, tdS, setpointWeight } = pid;
  return { kp, tiS, tdS, ...(setpointWeight === undefined ? {} : { setpointWeight }) };
}

/** The run a stored tuning came from (its `details.runStartedAtMs`); undefined when unknown. */
export function tuningRunStartedAtMs(tuning: Pick<StoredTuning, 'details'> | undefined): number | undefined {
  const details = tuning?.details as { runStartedAtMs?: unknown } | undefined;
  return typeof details?.runStartedAtMs === 'number' ? details.runStartedAtMs : undefined;
}

/**
 * The event of a run's change between two cycles: started, done or aborted. `before`: the run
 * as the cycle found it (before a restart aborted it); `after`: as the cycle left it.
 */
export function autotuneTransition(
  before: AutotuneMemory | undefined,
  after: AutotuneMemory | undefined,
): AutotuneEvent | undefined {
  if (after === undefined) return undefined;
  const sameRun = before?.startedAtMs === after.startedAtMs;
  if (sameRun && before?.phase === after.phase) return undefined;
  if (after.phase === 'noise' || after.phase === 'relay') {
    if (sameRun) return undefined;
    const data = { side: after.side, setpoint: after.setpoint, maxDurationS: after.maxDurationMs / 1000 };
    return { kind: 'autotune-started', message: `autotune started (${after.side} side)`, data };
  }
  // A run that ended before this process saw it active (read from memory at start) is no news.
  if (!sameRun) return undefined;
  if (after.phase === 'done' && after.result) {
    const r = after.result;
    const { gain, timeConstantS, deadTimeS } = r.identification.model;
    return {
      kind: 'autotune-done',
      message:
        `autotune done: K ${round(gain)}, τ ${Math.round(timeConstantS)} s, θ ${Math.round(deadTimeS)} s; ` +
        `kp ${round(r.gains.kp)}, tiS ${Math.round(r.gains.tiS)} s` +
        (r.reliability?.reliable === false ? `; flagged: ${r.reliability.reasons.join('; ')}` : ''),
      data: { gains: r.gains, model: r.identification.model, durationMs: r.durationMs, cycles: r.cycles },
    };
  }
  const reason = after.abortReason ?? 'unknown reason';
  return { kind: 'autotune-aborted', message: `autotune aborted: ${reason}`, data: { reason } };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/**
 * The `tuning` part of a loop's status: the tuning in force (its version, or 'config' for the
 * file's gains), the newest stored version (newer than the active one: a proposal not yet
 * applied; as the HTTP API's loop view shows it), and what a person's last request came to when
 * it came to nothing.
 */
export interface TuningStatus {
  active: number | 'config';
  latest?: number;
  /** The last start request was refused: why. */
  refused?: { reason: string; atMs: number; generation: number };
  /** A finished run's result could not be stored yet (retried every cycle): why. */
  unrecorded?: string;
}

/** The tuning status as published (MQTT state, HTTP views): times as ISO 8601. */
export interface PublishedTuning {
  active: number | 'config';
  latest?: number;
  refused?: { reason: string; at: string; generation: number };
  unrecorded?: string;
}

export function publishedTuning(status: TuningStatus): PublishedTuning {
  const { refused, ...rest } = status;
  return {
    ...rest,
    ...(refused === undefined
      ? {}
      : {
          refused: {
            reason: refused.reason,
            at: new Date(refused.atMs).toISOString(),
            generation: refused.generation,
          },
        }),
  };
}

export function tuningStatus(
  spec: LoopSpec,
  desired: { tuning?: ActiveTuning; lastTuningVersion?: number },
  mark: AutotuneMark,
  unrecorded: string | undefined,
): TuningStatus {
  const active = spec.controller.type === 'pid' && desired.tuning ? desired.tuning.version : 'config';
  const latest = desired.lastTuningVersion;
  const refused = mark.autotuneRefused;
  return {
    active,
    ...(latest === undefined ? {} : { latest }),
    ...(refused
      ? { refused: { reason: refused.reason, atMs: refused.atMs, generation: refused.generation } }
      : {}),
    ...(unrecorded === undefined ? {} : { unrecorded }),
  };
}
