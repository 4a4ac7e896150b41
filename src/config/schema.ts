/**
 * homeostat's configuration, version 1: the desired state as data. This is the public entry;
 * the schema itself is split by topic under schema/, and each hardware kind's section lives
 * with the kind (src/kinds/).
 *
 * One zod schema is the single source of truth for three things: validation (with
 * `path: message` errors, see load.ts), the TypeScript types below, and the JSON Schema that
 * editors use for completion (emit-json-schema.ts, `config/homeostat.schema.json`).
 *
 * Parsing happens in three steps, all inside `configSchema` (schema/file.ts):
 * 1. shape: strict objects (an unknown key is an error: a typo must not silently fall back
 *    to a default), plain `.default()`s; sensor and actuator sections from the kinds registry;
 * 2. checks: a section's own rules (a loop's limits and mode, an MQTT relay's payloads), then
 *    the rules across sections (schema/references.ts);
 * 3. resolution of the defaults that depend on other fields (schema/resolve.ts), so consumers
 *    never re-derive them: every field of `Config` that has a default is set (the `gpio` and
 *    `storage` blocks always; `mqtt` when written, its absence meaning "no MQTT").
 *
 * Renamed keys (`bandC` → `band`, `debounceMs` → `debounceS`) are still read under their old
 * names, with a warning from the loader (schema/renamed.ts, kinds/renamed-keys.ts).
 *
 * Durations are seconds with an `S` suffix. A loop's values (setpoint, limits, deadband,
 * tolerances) are in the loop's unit: °C for temperature, %RH for humidity.
 */

export type { MqttSwitchConfig } from '../kinds/actuators/mqtt-switch.js';
export {
  DEFAULT_TASMOTA_DEAD_MAN_S,
  MIN_DEAD_MAN_S,
} from '../kinds/actuators/mqtt-switch-rules.js';
export {
  type ActuatorConfig,
  gpioPinOf,
  isRelay,
  type SensorConfig,
  usesMqtt,
} from '../kinds/registry.js';
export { ID_PATTERN, LOOP_ID_PATTERN, NODE_ID_PATTERN, type Range } from './schema/common.js';
export type { ControllerConfig, HysteresisConfig, PidConfig } from './schema/controllers.js';
export { type Config, configInputSchema, configSchema, type LoopConfig } from './schema/file.js';
export { DEFAULT_SYSFS_ROOT, type GpioConfig } from './schema/gpio.js';
export { DEFAULT_HTTP_PORT, type HttpConfig, isLoopbackHost } from './schema/http.js';
export { allowedModes, defaultMode } from './schema/modes.js';
export type { MqttConfig } from './schema/mqtt.js';
export { mqttOf } from './schema/resolve.js';
export type { DisturbanceConfig, PlantConfig, SimulationConfig } from './schema/simulation.js';
export { STORAGE_DEFAULTS, type StorageConfig } from './schema/storage.js';
