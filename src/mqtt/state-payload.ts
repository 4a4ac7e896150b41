import type { LoopStatus } from '../core/status.js';
import type { PublishedLoopStatus } from '../runtime/loop-reconciler.js';
import { publishedTuning } from '../runtime/loop-tuning.js';

/**
 * The retained `<base>/<loop>/state` JSON (the contract): the loop's status with times as
 * ISO-8601 and conditions in the Kubernetes shape (`lastTransitionTime`). Home Assistant's
 * templates read `mode`, `setpoint`, `measured`, `output`, `action`, `conditions` and
 * `autotune.phase` (the autotune sensor; the object is its attributes).
 */
export function statePayload(status: LoopStatus | PublishedLoopStatus): Record<string, unknown> {
  // The autotune's progress, result or abort reason (absent: the loop never ran one); an
  // unknown standard error (NaN) is written as null.
  const { autotune } = status;
  // Which tuning is in force ('config' or a version) and the newest stored one (the runtime's).
  const tuning =
    'tuning' in status && status.tuning !== undefined ? publishedTuning(status.tuning) : undefined;
  const { schedule } = status as PublishedLoopStatus;
  return {
    loop: status.loop,
    quantity: status.quantity,
    mode: status.mode,
    setpoint: status.setpoint,
    measured: status.measured ?? null,
    measuredAt: status.measuredAtMs === undefined ? null : new Date(status.measuredAtMs).toISOString(),
    output: Math.round(status.output * 1000) / 1000,
    action: status.action,
    generation: status.generation,
    observedGeneration: status.observedGeneration,
    actuators: status.actuators,
    conditions: status.conditions.map((condition) => ({
      type: condition.type,
      status: condition.status,
      reason: condition.reason,
      message: condition.message,
      lastTransitionTime: new Date(condition.lastTransitionMs).toISOString(),
      observedGeneration: condition.observedGeneration,
    })),
    ...(autotune === undefined ? {} : { autotune }),
    ...(tuning === undefined ? {} : { tuning }),
    // Presets, weekly schedule, profile (issue 13): absent for a loop without any. Home
    // Assistant's preset_mode and profile sensor read schedule.preset and schedule.profile.
    ...(schedule === undefined ? {} : { schedule }),
    // Several sensors per loop (issue 13): which made the value, which were dropped and why.
    ...(status.sensors === undefined ? {} : { sensors: status.sensors }),
    updatedAt: new Date(status.updatedAtMs).toISOString(),
  };
}

/** The payload without its timestamps: equal fingerprints need no republish (only a heartbeat). */
export function stateFingerprint(payload: Record<string, unknown>): string {
  const { updatedAt: _updated, measuredAt: _measured, ...rest } = payload;
  return JSON.stringify(rest);
}
