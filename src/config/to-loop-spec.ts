import type { ActuatorSpec, LoopSpec } from '../core/loop-spec.js';
import type { Quantity } from '../core/types.js';
import type { ActuatorConfig, Config, LoopConfig } from './schema.js';

/** Defaults that are runtime policy rather than per-loop config (documented in the README). */
export const LOOP_POLICY = {
  /** Re-assert a confirmed actuator state this often, ms. */
  keepAliveMs: 300_000,
  /** First retry of an unconfirmed command, ms (doubles up to keepAliveMs). */
  retryInitialMs: 5_000,
};

/** Builds the pure core's view of a loop from the validated config. */
export function toLoopSpec(config: Config, loopId: string): LoopSpec {
  const loop = config.loops[loopId];
  if (!loop) throw new Error(`unknown loop "${loopId}"`);
  return {
    id: loopId,
    quantity: loop.quantity,
    controller: controllerSpec(loop),
    ...(loop.raise ? { raise: actuatorSpec(loop.raise, config.actuators[loop.raise]!, loop) } : {}),
    ...(loop.lower ? { lower: actuatorSpec(loop.lower, config.actuators[loop.lower]!, loop) } : {}),
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
 * Defaults of the safety monitors' distances, per quantity (loop unit). A generic loop has none:
 * the schema requires them there.
 */
export const MONITOR_DEFAULTS: Record<Quantity, { stuckMinChange?: number; runawayBand?: number }> = {
  temperature: { stuckMinChange: 2, runawayBand: 2 },
  humidity: { stuckMinChange: 10, runawayBand: 10 },
  generic: {},
};

/** The loop's safety monitors (safety-monitors.ts); each is absent (off) unless configured. */
function safetySpec(loop: LoopConfig): Pick<LoopSpec, 'cutoff' | 'stuckWatch' | 'runawayWatch'> {
  const defaults = MONITOR_DEFAULTS[loop.quantity];
  const { cutoff, stuckWatch, runawayWatch } = loop;
  // The schema guarantees the generic loop's values; NaN only keeps the types honest (never trips).
  return {
    ...(cutoff ? { cutoff: { ...cutoff } } : {}),
    ...(stuckWatch
      ? {
          stuckWatch: {
            periodMs: stuckWatch.periodS * 1000,
            minChange: stuckWatch.minChange ?? defaults.stuckMinChange ?? Number.NaN,
          },
        }
      : {}),
    ...(runawayWatch
      ? {
          runawayWatch: {
            band: runawayWatch.band ?? defaults.runawayBand ?? Number.NaN,
            periodMs: runawayWatch.periodS * 1000,
          },
        }
      : {}),
  };
}

function controllerSpec(loop: LoopConfig): LoopSpec['controller'] {
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
    ...(controller.model ? { model: controller.model } : {}),
  };
}

/**
 * The level an actuator is driven to on faults, stale readings, removal and shutdown:
 * a relay's safeState (off 0, on 1), a continuous actuator's safeLevel.
 */
export function safeLevelOf(actuator: ActuatorConfig): number {
  switch (actuator.kind) {
    case 'simulated_relay':
    case 'mqtt_switch':
    case 'gpio_relay':
      return actuator.safeState === 'on' ? 1 : 0;
    case 'simulated_continuous':
    case 'mqtt_level':
      return actuator.safeLevel;
  }
}

function actuatorSpec(id: string, actuator: ActuatorConfig, loop: LoopConfig): ActuatorSpec {
  switch (actuator.kind) {
    case 'simulated_relay':
    case 'mqtt_switch':
    case 'gpio_relay':
      return {
        id,
        kind: 'relay',
        safeLevel: safeLevelOf(actuator),
        timeProportioning: {
          windowMs: actuator.windowS * 1000,
          minOnMs: actuator.minOnS * 1000,
          minOffMs: actuator.minOffS * 1000,
        },
        ...relayBand(actuator.modulation, actuator.bandC, loop),
        ...(actuator.maxOnS !== undefined ? { maxOnMs: actuator.maxOnS * 1000 } : {}),
        ...(actuator.maxStartsPerHour !== undefined ? { maxStartsPerHour: actuator.maxStartsPerHour } : {}),
      };
    case 'simulated_continuous':
    case 'mqtt_level':
      return {
        id,
        kind: 'continuous',
        safeLevel: safeLevelOf(actuator),
        ...(actuator.maxOnS !== undefined ? { maxOnMs: actuator.maxOnS * 1000 } : {}),
      };
  }
}

/**
 * Band modulation in the core's unit: the band is one of the PID output, so bandC (loop unit)
 * times kp. Validation guarantees a pid controller and kp·bandC < 0.5.
 */
function relayBand(
  modulation: 'window' | 'band',
  bandC: number,
  loop: LoopConfig,
): Pick<ActuatorSpec, 'band'> {
  if (modulation !== 'band' || loop.controller.type !== 'pid') return {};
  return { band: { halfBand: loop.controller.kp * bandC } };
}
