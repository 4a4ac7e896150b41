import type { LoopConfig } from '../config/schema.js';
import { allowedModes } from '../config/schema.js';
import type { AutotuneStatus, LoopStatus } from '../core/status.js';
import { type PublishedTuning, publishedTuning } from '../core/tuning/loop-tuning.js';
import type { AutotuneView, EventView, LoopView, TuningView } from '../operations/schemas.js';
import type { PublishedLoopStatus } from '../runtime/loop-reconciler.js';
import type { LoopDesiredRow, StoredEvent, StoredTuning, TuningGains } from '../store/desired-store.js';

/** Clock ms → ISO text (the API's one time format). */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * A loop as the API shows it: its last status (what the last cycle did) with the desired state
 * as stored now (a setpoint accepted a moment ago shows before the cycle that applies it: the
 * generation then runs ahead of observedGeneration), and what a person may ask of it.
 */
export function toLoopView(
  id: string,
  loop: LoopConfig,
  status: LoopStatus | undefined,
  desired: LoopDesiredRow | undefined,
): LoopView {
  // The runtime publishes the schedule part beside reconcile's status (PublishedLoopStatus).
  const schedule = (status as PublishedLoopStatus | undefined)?.schedule;
  // With a schedule, profile or preset the stored setpoint is the manual one: once the loop has
  // acted on the latest desired state, what it regulates to is its status's (the one in force).
  const scheduledNow =
    schedule !== undefined && status !== undefined && (desired?.generation ?? 0) <= status.observedGeneration;
  const setpoint = scheduledNow ? status.setpoint : (desired?.setpoint ?? status?.setpoint ?? loop.setpoint);
  const mode = scheduledNow ? status.mode : (desired?.mode ?? status?.mode ?? loop.mode);
  const presets = Object.keys(loop.presets ?? {});
  const profiles = Object.keys(loop.profiles ?? {});
  return {
    loop: id,
    name: loop.name,
    quantity: loop.quantity,
    unit: loop.unit,
    limits: { min: loop.limits.min, max: loop.limits.max },
    step: loop.step,
    modes: [...allowedModes(loop)],
    mode,
    setpoint,
    measured: status?.measured ?? null,
    measuredAt: status?.measuredAtMs === undefined ? null : isoTime(status.measuredAtMs),
    output: status?.output ?? 0,
    action: status?.action ?? 'idle',
    generation: Math.max(desired?.generation ?? 0, status?.generation ?? 0),
    observedGeneration: status?.observedGeneration ?? 0,
    desired: {
      setpointSource: desired?.setpointSource ?? 'file',
      modeSource: desired?.modeSource ?? 'file',
    },
    controller: loop.controller.type,
    tuning: {
      active: desired?.tuning?.version ?? 'config',
      ...(desired?.lastTuningVersion === undefined ? {} : { latest: desired.lastTuningVersion }),
      // What only the loop knows: a start it refused, a result it could not store yet.
      ...loopTuningNotes(status),
    },
    ...(status?.autotune === undefined ? {} : { autotune: autotuneView(status.autotune) }),
    ...(presets.length === 0 ? {} : { presets }),
    ...(profiles.length === 0 ? {} : { profiles }),
    ...(schedule === undefined ? {} : { schedule }),
    ...(status?.sensors === undefined ? {} : { sensors: status.sensors }),
    actuators: { ...(status?.actuators ?? {}) },
    conditions: (status?.conditions ?? []).map(({ lastTransitionMs, ...condition }) => ({
      ...condition,
      lastTransitionAt: isoTime(lastTransitionMs),
    })),
    updatedAt: status === undefined ? null : isoTime(status.updatedAtMs),
  };
}

export function toEventView(event: StoredEvent): EventView {
  return {
    at: isoTime(event.atMs),
    loop: event.loop ?? null,
    kind: event.kind,
    source: event.source ?? null,
    message: event.message,
    ...(event.data === undefined ? {} : { data: event.data }),
  };
}

/** One side's gains as the API shows them (b only when the tuning has one). */
function gainsView(gains: TuningGains): TuningView['gains'] {
  return {
    kp: gains.kp,
    tiS: gains.tiS,
    tdS: gains.tdS,
    ...(gains.setpointWeight === undefined ? {} : { setpointWeight: gains.setpointWeight }),
  };
}

/** A stored tuning as the API shows it: times ISO, unknown standard errors (NaN) as null. */
export function toTuningView(tuning: StoredTuning & { active: boolean }): TuningView {
  const { model } = tuning;
  const known = (value: number) => (Number.isNaN(value) ? null : value);
  return {
    version: tuning.version,
    createdAt: isoTime(tuning.createdAtMs),
    source: tuning.source,
    active: tuning.active,
    gains: gainsView(tuning.gains),
    ...(tuning.lowerGains === undefined ? {} : { lowerGains: gainsView(tuning.lowerGains) }),
    ...(model === undefined
      ? {}
      : {
          model: {
            gain: model.gain,
            timeConstantS: model.timeConstantS,
            deadTimeS: model.deadTimeS,
            ambient: model.ambient,
            standardError: {
              gain: known(model.standardError.gain),
              timeConstantS: known(model.standardError.timeConstantS),
              deadTimeS: known(model.standardError.deadTimeS),
            },
            rmsResidual: known(model.rmsResidual),
          },
        }),
    ...(tuning.details === undefined ? {} : { details: tuning.details }),
    ...(tuning.detailsUnreadable ? { detailsUnreadable: true as const } : {}),
  };
}

/** The status's autotune as JSON carries it: unknown standard errors (NaN) as null. */
function autotuneView(autotune: AutotuneStatus): AutotuneView {
  const { result, ...progress } = autotune;
  if (!result) return progress;
  const known = (value: number) => (Number.isNaN(value) ? null : value);
  const { standardError: se } = result;
  return {
    ...progress,
    result: {
      ...result,
      standardError: {
        gain: known(se.gain),
        timeConstantS: known(se.timeConstantS),
        deadTimeS: known(se.deadTimeS),
      },
      rmsResidual: known(result.rmsResidual),
    },
  };
}

/** A loop's refused start and unrecorded result from its published status (absent: none). */
function loopTuningNotes(
  status: LoopStatus | PublishedLoopStatus | undefined,
): Pick<PublishedTuning, 'refused' | 'unrecorded'> {
  const tuning = status !== undefined && 'tuning' in status ? status.tuning : undefined;
  if (tuning === undefined) return {};
  const { refused, unrecorded } = publishedTuning(tuning);
  return {
    ...(refused === undefined ? {} : { refused }),
    ...(unrecorded === undefined ? {} : { unrecorded }),
  };
}
