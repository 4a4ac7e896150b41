import type { LoopConfig } from '../config/schema.js';
import { allowedModes } from '../config/schema.js';
import type { LoopStatus } from '../core/status.js';
import type { LoopDesiredRow, StoredEvent } from '../store/desired-store.js';
import type { EventView, LoopView } from './schemas.js';

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
  const setpoint = desired?.setpoint ?? status?.setpoint ?? loop.setpoint;
  const mode = desired?.mode ?? status?.mode ?? loop.mode;
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
