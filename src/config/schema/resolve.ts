/**
 * Resolution of the defaults that depend on other fields, in one place, so consumers never
 * re-derive them: a sensor's staleness from its period, a sensor's or actuator's kind-specific
 * defaults (an MQTT relay's preset, a key still given under its old name), the MQTT client id
 * from the node id, a loop's name, unit, mode, step, staleness and plausible range, a PID's
 * derivative filter, a plant's initial value.
 */

import type { ActuatorConfig, RawSensor, SensorConfig } from '../../kinds/registry.js';
import { actuatorKindOf, sensorKindOf } from '../../kinds/registry.js';
import { defaultPlausible, QUANTITY_DEFAULTS } from './common.js';
import { resolveController } from './controllers.js';
import type { Config, LoopConfig, RawActuator, RawConfig } from './file.js';
import { defaultMode } from './modes.js';
import { type MqttConfig, mqttSchema, resolveMqtt } from './mqtt.js';
import { defaultStaleAfterS } from './sensor-set.js';
import { resolveSimulation } from './simulation.js';

export function resolve(raw: RawConfig): Config {
  const sensors = mapValues(raw.sensors, resolveSensor);
  const loops = mapValues(raw.loops, (loop, id): LoopConfig => {
    const defaults = QUANTITY_DEFAULTS[loop.quantity];
    return {
      ...loop,
      name: loop.name ?? id,
      unit: loop.unit ?? defaults.unit,
      mode: loop.mode ?? defaultMode(loop),
      step: loop.step ?? defaults.step,
      // The sensor's, or with several the largest of theirs: then only a cap on each one's own
      // (sensor-set.ts).
      staleAfterS: loop.staleAfterS ?? defaultStaleAfterS(loop, sensors),
      // In the loop's unit: a °F loop's range is in °F.
      plausible: loop.plausible ?? defaultPlausible(loop.quantity, loop.unit ?? defaults.unit),
      controller: resolveController(loop.controller),
    };
  });
  const { mqtt, ...rest } = raw;
  return {
    ...rest,
    node: {
      id: raw.node.id,
      name: raw.node.name ?? raw.node.id,
      ...(raw.node.timeZone === undefined ? {} : { timeZone: raw.node.timeZone }),
    },
    // An absent block stays absent: it means "no MQTT".
    ...(mqtt ? { mqtt: resolveMqtt(mqtt, raw.node.id) } : {}),
    simulation: resolveSimulation(raw.simulation),
    sensors,
    actuators: mapValues(raw.actuators, resolveActuator),
    loops,
  };
}

/**
 * The broker settings MQTT runs with: the mqtt block, or, when the file has none and the command
 * line gives a broker URL (`--mqtt-url`), the block's defaults. The only place those defaults
 * are filled in outside the schema.
 */
export function mqttOf(config: Pick<Config, 'mqtt' | 'node'>): MqttConfig {
  return config.mqtt ?? resolveMqtt(mqttSchema.parse({}), config.node.id);
}

/** The kind's own resolution (a key given under its old name), then staleness: 3 × periodS. */
function resolveSensor(raw: RawSensor): SensorConfig {
  const sensor = (sensorKindOf(raw.kind).resolve?.(raw) ?? raw) as Omit<SensorConfig, 'staleAfterS'>;
  return { ...sensor, staleAfterS: raw.staleAfterS ?? 3 * raw.periodS } as SensorConfig;
}

/** The kind's own resolution (an MQTT relay's preset and dead man's switch, a relay's band). */
function resolveActuator(actuator: RawActuator): ActuatorConfig {
  return actuatorKindOf(actuator.kind).resolve(actuator) as ActuatorConfig;
}

function mapValues<A, B>(record: Record<string, A>, fn: (value: A, key: string) => B): Record<string, B> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value, key)]));
}
