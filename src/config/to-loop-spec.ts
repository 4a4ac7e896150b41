import type { DisturbanceSpec } from '../core/feedforward.js';
import type { ActuatorSpec, LoopSpec, SensorCadence } from '../core/loop-spec.js';
import { defaultDerivativeFilterS } from '../core/pid.js';
import type { Quantity } from '../core/types.js';
import { LOOP_POLICY } from '../kinds/loop-policy.js';
import { LOOP_MONITORS } from '../kinds/monitors/registry.js';
import { RUNAWAY_BAND } from '../kinds/monitors/runaway-watch.js';
import { STUCK_MIN_CHANGE } from '../kinds/monitors/stuck-watch.js';
import { actuatorKindOf } from '../kinds/registry.js';
import { defaultPlausible } from './schema/common.js';
import { loopSensorIds, sensorSetOf } from './schema/sensor-set.js';
import type { ActuatorConfig, Config, LoopConfig } from './schema.js';

/** The level an actuator is driven to on faults, stale readings, removal and shutdown. */
export { safeLevelOf } from '../kinds/registry.js';
export { LOOP_POLICY };

/** Builds the pure core's view of a loop from the validated config. */
export function toLoopSpec(config: Config, loopId: string): LoopSpec {
  const loop = config.loops[loopId];
  if (!loop) throw new Error(`unknown loop "${loopId}"`);
  return {
    id: loopId,
    quantity: loop.quantity,
    controller: controllerSpec(config, loop),
    ...(loop.raise ? { raise: actuatorSpec(loop.raise, config.actuators[loop.raise]!, loop) } : {}),
    ...(loop.lower ? { lower: actuatorSpec(loop.lower, config.actuators[loop.lower]!, loop) } : {}),
    ...sensorSetSpec(config, loop),
    sensorCadence: loopSensorIds(loop).map((id) => sensorCadence(config, id)),
    staleAfterMs: loop.staleAfterS * 1000,
    plausibleMin: loop.plausible.min,
    plausibleMax: loop.plausible.max,
    deadband: loop.deadband,
    changeoverMs: loop.changeoverS * 1000,
    keepAliveMs: LOOP_POLICY.keepAliveMs,
    retryInitialMs: loop.retryInitialS !== undefined ? loop.retryInitialS * 1000 : LOOP_POLICY.retryInitialMs,
    convergedBand: Math.max(loop.step, loop.deadband / 2),
    ...(loop.effectWatch
      ? { effectWatch: { periodMs: loop.effectWatch.periodS * 1000, minChange: loop.effectWatch.minChange } }
      : {}),
    ...safetySpec(loop),
    interlocks: loop.interlocks.map((interlock) => ({
      sensorId: interlock.sensor,
      pauseWhen: interlock.pauseWhen,
      staleAfterMs: (config.sensors[interlock.sensor]?.staleAfterS ?? 30) * 1000,
    })),
  };
}

/**
 * A loop with several sensors: its set, with each sensor's own staleness (the loop's staleAfterS
 * caps them in the core: its default is the largest of theirs, so only one the file sets bites)
 * and the unit its status summary shows.
 */
function sensorSetSpec(config: Config, loop: LoopConfig): Pick<LoopSpec, 'sensorSet'> {
  const set = sensorSetOf(loop);
  if (!set) return {};
  const staleAfterMs = Object.fromEntries(
    set.sensors.map((id) => [id, (config.sensors[id]?.staleAfterS ?? loop.staleAfterS) * 1000]),
  );
  return { sensorSet: { ...set, staleAfterMs, unit: loop.unit } };
}

/**
 * How often a sensor gives a reading, for the autotune's check (core/tuning/reading-cadence.ts):
 * its periodS; an MQTT sensor with a liveness block reports only on change.
 */
function sensorCadence(config: Config, sensorId: string): SensorCadence {
  const sensor = config.sensors[sensorId] as { periodS?: number; liveness?: unknown } | undefined;
  return {
    sensorId,
    periodMs: (sensor?.periodS ?? 0) * 1000,
    reportsOnChange: sensor?.liveness !== undefined,
  };
}

/**
 * Defaults of the safety monitors' distances, per quantity (loop unit), from their config parts
 * (kinds/monitors/). A generic loop has none: the schema requires them there.
 */
export const MONITOR_DEFAULTS: Record<Quantity, { stuckMinChange?: number; runawayBand?: number }> = {
  temperature: { stuckMinChange: STUCK_MIN_CHANGE.temperature!, runawayBand: RUNAWAY_BAND.temperature! },
  humidity: { stuckMinChange: STUCK_MIN_CHANGE.humidity!, runawayBand: RUNAWAY_BAND.humidity! },
  generic: {},
};

/** The loop's safety monitors (kinds/monitors/); each is absent (off) unless configured. */
function safetySpec(loop: LoopConfig): Partial<LoopSpec> {
  const spec: Partial<Record<keyof LoopSpec, unknown>> = {};
  for (const monitor of LOOP_MONITORS) {
    const block = loop[monitor.key];
    if (block === undefined) continue;
    spec[monitor.key] = (monitor.spec as (block: unknown, quantity: Quantity) => unknown)(
      block,
      loop.quantity,
    );
  }
  return spec as Partial<LoopSpec>;
}

function controllerSpec(config: Config, loop: LoopConfig): LoopSpec['controller'] {
  const controller = loop.controller;
  if (controller.type === 'hysteresis') {
    return {
      type: 'hysteresis',
      hysteresis: { coldTolerance: controller.coldTolerance, hotTolerance: controller.hotTolerance },
    };
  }
  return {
    type: 'pid',
    pid: {
      kp: controller.kp,
      tiS: controller.tiS,
      tdS: controller.tdS,
      derivativeFilterS: controller.derivativeFilterS,
      setpointWeight: controller.setpointWeight,
    },
    ...(controller.lower && loop.raise && loop.lower ? { lowerPid: lowerPidSpec(controller.lower) } : {}),
    ...(controller.model ? { model: controller.model } : {}),
    ...(controller.model && controller.feedforward
      ? { disturbance: disturbanceSpec(config, loop, controller.feedforward) }
      : {}),
  };
}

/** The lower side's gains; its derivative filter defaults to its own tdS, like the raise side's. */
function lowerPidSpec(
  lower: NonNullable<PidLower>,
): NonNullable<Extract<LoopSpec['controller'], { type: 'pid' }>['lowerPid']> {
  return {
    kp: lower.kp,
    tiS: lower.tiS,
    tdS: lower.tdS,
    derivativeFilterS: defaultDerivativeFilterS(lower.tdS),
    ...(lower.setpointWeight === undefined ? {} : { setpointWeight: lower.setpointWeight }),
  };
}

type PidLower = Extract<LoopConfig['controller'], { type: 'pid' }>['lower'];

/** The disturbance sensor of a PID's feedforward; stale after the sensor's own staleAfterS. */
function disturbanceSpec(
  config: Config,
  loop: LoopConfig,
  feedforward: NonNullable<Extract<LoopConfig['controller'], { type: 'pid' }>['feedforward']>,
): DisturbanceSpec {
  const plausible = feedforward.plausible ?? defaultPlausible(loop.quantity, loop.unit);
  return {
    sensorId: feedforward.sensor,
    coupling: feedforward.coupling,
    staleAfterMs: (config.sensors[feedforward.sensor]?.staleAfterS ?? 30) * 1000,
    plausibleMin: plausible.min,
    plausibleMax: plausible.max,
  };
}

/**
 * The actuator's part of the loop spec, built by its kind (relay timing and band, or a level).
 * A relay's duty band scales with the kp of the side it serves (the lower side's own, if any).
 */
function actuatorSpec(id: string, actuator: ActuatorConfig, loop: LoopConfig): ActuatorSpec {
  const controller = loop.controller;
  const lowerKp =
    controller.type === 'pid' && id === loop.lower && loop.raise ? controller.lower?.kp : undefined;
  const pidKp = controller.type === 'pid' ? (lowerKp ?? controller.kp) : undefined;
  return actuatorKindOf(actuator.kind).spec(id, actuator, { pidKp });
}
