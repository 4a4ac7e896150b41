/** The whole file: its sections, the cross-reference rules, then the resolution of defaults. */
import { z } from 'zod';
import type { Mode } from '../../core/types.js';
import {
  type ActuatorConfig,
  actuatorSchema,
  type RawActuator,
  type SensorConfig,
  sensorSchema,
} from '../../kinds/registry.js';
import { type AlertsConfig, alertsSchema, checkAlertChannels } from './alerts.js';
import { idKey, LOOP_ID_PATTERN, type Range } from './common.js';
import type { ControllerConfig } from './controllers.js';
import { type GpioConfig, gpioSchema } from './gpio.js';
import { checkHttp, type HttpConfig, httpSchema } from './http.js';
import { loopSchema, type RawLoop } from './loop.js';
import { type MqttConfig, mqttSchema } from './mqtt.js';
import { nodeSchema } from './node.js';
import { checkReferences } from './references.js';
import { checkRenamedKeys } from './renamed.js';
import { resolve } from './resolve.js';
import { type SimulationConfig, simulationSchema } from './simulation.js';
import { type StorageConfig, storageSchema } from './storage.js';

export const configObjectSchema = z
  .strictObject({
    version: z
      .literal(1, {
        error: (iss) =>
          iss.input === undefined
            ? 'required (add "version: 1")'
            : `unsupported version ${typeof iss.input === 'string' ? JSON.stringify(iss.input) : String(iss.input)}: this homeostat reads version 1`,
      })
      .describe('Config format version. Required: 1.'),
    node: nodeSchema,
    mqtt: mqttSchema.optional(),
    gpio: gpioSchema.prefault({}),
    storage: storageSchema.prefault({}),
    http: httpSchema.prefault({}),
    simulation: simulationSchema.prefault({}),
    alerts: alertsSchema.prefault({}),
    sensors: z
      .record(idKey('sensor'), sensorSchema)
      .refine((r) => Object.keys(r).length > 0, 'at least one sensor is required')
      .meta({ description: 'Sensors by id. At least one.', minProperties: 1 }),
    actuators: z
      .record(idKey('actuator'), actuatorSchema)
      .default({})
      .describe('Actuators by id. Default none.'),
    loops: z
      .record(
        z.string().regex(LOOP_ID_PATTERN, { error: 'invalid loop id: use lowercase letters, digits and _' }),
        loopSchema,
      )
      .refine((r) => Object.keys(r).length > 0, 'at least one loop is required')
      .meta({ description: 'Regulation loops by id. At least one.', minProperties: 1 }),
  })
  .describe('homeostat configuration, version 1.');

/** The config schema: parses a YAML-decoded value into a checked, fully resolved `Config`. */
export const configSchema = configObjectSchema
  .superRefine(checkRenamedKeys)
  .superRefine(checkReferences)
  .superRefine((config, ctx) => checkHttp(config.http, ctx))
  .superRefine(checkAlertChannels)
  .transform(resolve);

/** The schema of the file as written (before defaults that depend on other fields). */
export const configInputSchema = configObjectSchema;

/** The file as parsed, before the defaults that depend on other fields. */
export type RawConfig = z.output<typeof configObjectSchema>;
export type { RawActuator, RawLoop };

/**
 * A loop with every default resolved: `name` (loop id), `unit`, `mode`, `step`,
 * `staleAfterS` (the sensor's), `plausible` (±Infinity for generic loops: no check).
 */
export type LoopConfig = Omit<
  RawLoop,
  'name' | 'unit' | 'mode' | 'step' | 'staleAfterS' | 'plausible' | 'controller'
> & {
  name: string;
  unit: string;
  mode: Mode;
  step: number;
  staleAfterS: number;
  plausible: Range;
  controller: ControllerConfig;
};

/**
 * The validated configuration, every default resolved: consumers read a value, never `?? default`
 * (for MQTT without an mqtt block, a broker given on the command line only: mqttOf).
 */
export interface Config {
  version: 1;
  /** `timeZone`: an IANA name for schedules (absent: the system's, see nodeTimeZone). */
  node: { id: string; name: string; timeZone?: string };
  /** Absent: no MQTT (unless the command line gives a broker URL: see mqttOf). */
  mqtt?: MqttConfig;
  /** Always there: sysfsRoot /sys unless written; chipLabel and base absent: detected. */
  gpio: GpioConfig;
  storage: StorageConfig;
  /** Always there: on at 127.0.0.1:8734 unless written. */
  http: HttpConfig;
  simulation: SimulationConfig;
  /** Always there: no channels and the default rules unless written. */
  alerts: AlertsConfig;
  sensors: Record<string, SensorConfig>;
  actuators: Record<string, ActuatorConfig>;
  loops: Record<string, LoopConfig>;
}
