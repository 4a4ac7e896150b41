/**
 * Resolution of the defaults that depend on other fields, in one place, so consumers never
 * re-derive them: a sensor's staleness from its period, an actuator's kind-specific defaults
 * (an MQTT relay's preset), a loop's name, unit, mode, step, staleness and plausible range, a
 * PID's derivative filter, a plant's initial value.
 */

import type { ActuatorConfig, SensorConfig } from '../../kinds/registry.js';
import { actuatorKindOf } from '../../kinds/registry.js';
import { QUANTITY_DEFAULTS } from './common.js';
import { resolveController } from './controllers.js';
import type { Config, LoopConfig, RawActuator, RawConfig } from './file.js';
import { defaultMode } from './modes.js';
import { resolveSimulation } from './simulation.js';

export function resolve(raw: RawConfig): Config {
  const sensors = mapValues(
    raw.sensors,
    (s): SensorConfig => ({ ...s, staleAfterS: s.staleAfterS ?? 3 * s.periodS }),
  );
  const loops = mapValues(raw.loops, (loop, id): LoopConfig => {
    const defaults = QUANTITY_DEFAULTS[loop.quantity];
    return {
      ...loop,
      name: loop.name ?? id,
      unit: loop.unit ?? defaults.unit,
      mode: loop.mode ?? defaultMode(loop),
      step: loop.step ?? defaults.step,
      // The reference rules guarantee the sensor exists; the fallback only keeps types honest.
      staleAfterS: loop.staleAfterS ?? sensors[loop.sensor]?.staleAfterS ?? 30,
      plausible: loop.plausible ?? { ...defaults.plausible },
      controller: resolveController(loop.controller),
    };
  });
  return {
    ...raw,
    node: { id: raw.node.id, name: raw.node.name ?? raw.node.id },
    simulation: resolveSimulation(raw.simulation),
    sensors,
    actuators: mapValues(raw.actuators, resolveActuator),
    loops,
  };
}

/** The kind's own resolution (an MQTT relay's preset and dead man's switch; others as parsed). */
function resolveActuator(actuator: RawActuator): ActuatorConfig {
  return actuatorKindOf(actuator.kind).resolve(actuator) as ActuatorConfig;
}

function mapValues<A, B>(record: Record<string, A>, fn: (value: A, key: string) => B): Record<string, B> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value, key)]));
}
