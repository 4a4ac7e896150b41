import type { LoopStatus } from '../core/status.js';
import { publishedTuning } from '../core/tuning/loop-tuning.js';
import type { PublishedLoopStatus } from '../runtime/loop-reconciler.js';

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
    // Presets, weekly schedule, profile: absent for a loop without any. Home
    // Assistant's preset_mode and profile sensor read schedule.preset and schedule.profile.
    ...(schedule === undefined ? {} : { schedule }),
    // Several sensors per loop: which made the value, which were dropped and why.
    ...(status.sensors === undefined ? {} : { sensors: status.sensors }),
    updatedAt: new Date(status.updatedAtMs).toISOString(),
  };
}

/**
 * The payload without what changes every cycle by itself: equal fingerprints need no republish
 * (only a heartbeat), so the retained state and Home Assistant's recorder change only when
 * something does. Left out: the timestamps; a running profile's seconds left (its stable
 * `stepEndsAt`/`endsAt` say the same and are in); a dropped sensor's `message` (its ages and
 * raw values move every cycle; `sensor`, `reason`, the distance to hundredths and the summary
 * stay in, so a sensor
 * dropped or back, or for another reason, is still a change). The published payload keeps them
 * all: a change sends the current values.
 */
export function stateFingerprint(payload: Record<string, unknown>): string {
  const { updatedAt: _updated, measuredAt: _measured, schedule, sensors, ...rest } = payload;
  return JSON.stringify({
    ...rest,
    ...(schedule === undefined ? {} : { schedule: scheduleWithoutCountdown(schedule) }),
    ...(sensors === undefined ? {} : { sensors: sensorsWithoutMessages(sensors) }),
  });
}

function scheduleWithoutCountdown(schedule: unknown): unknown {
  const profile = (schedule as { profile?: unknown } | null)?.profile;
  if (profile === null || typeof profile !== 'object') return schedule;
  const { stepRemainingS: _step, totalRemainingS: _total, ...stable } = profile as Record<string, unknown>;
  return { ...(schedule as object), profile: stable };
}

function sensorsWithoutMessages(sensors: unknown): unknown {
  const dropped = (sensors as { dropped?: unknown } | null)?.dropped;
  if (!Array.isArray(dropped)) return sensors;
  return {
    ...(sensors as object),
    dropped: dropped.map((entry) => {
      if (entry === null || typeof entry !== 'object') return entry;
      const { message: _message, distance, ...rest } = entry as Record<string, unknown>;
      // The distance to hundredths, as the summary shows it: raw floats differ every cycle.
      return typeof distance === 'number' ? { ...rest, distance: Math.round(distance * 100) / 100 } : rest;
    }),
  };
}
