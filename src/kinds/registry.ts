/**
 * Every hardware kind homeostat knows. To add one: write its module under sensors/ or
 * actuators/ (schema, traits, driver, spec, doctor check) and add it to the list here; the
 * config schema, the loop spec, the drivers and doctor pick it up from this file.
 */
import { z } from 'zod';
import { gpioRelay } from './actuators/gpio-relay.js';
import { mqttLevel } from './actuators/mqtt-level.js';
import { mqttSwitch } from './actuators/mqtt-switch.js';
import { pwmActuator } from './actuators/pwm.js';
import { simulatedContinuous, simulatedRelay } from './actuators/simulated.js';
import { canonicalJson } from './canonical-json.js';
import { ds18b20Sensor } from './sensors/ds18b20.js';
import { fileValueSensor } from './sensors/file-value.js';
import { gpioInputSensor } from './sensors/gpio-input.js';
import { mqttSensor } from './sensors/mqtt.js';
import { mqttBinarySensor } from './sensors/mqtt-binary.js';
import { pulseRateSensor } from './sensors/pulse-rate.js';
import { simulatedSensor } from './sensors/simulated.js';
import type { ActuatorKind, KindDoctor, KindSchema, SensorKind } from './types.js';

/** Sensor kinds, in the order the JSON schema lists them. */
export const SENSOR_KINDS = [
  simulatedSensor,
  mqttSensor,
  ds18b20Sensor,
  gpioInputSensor,
  pulseRateSensor,
  fileValueSensor,
  mqttBinarySensor,
] as const;

/** Actuator kinds, in the order the JSON schema lists them. */
export const ACTUATOR_KINDS = [
  simulatedRelay,
  simulatedContinuous,
  mqttSwitch,
  mqttLevel,
  gpioRelay,
  pwmActuator,
] as const;

// ---------------------------------------------------------------------------------------
// Schemas and types built from the lists

type SchemasOf<T extends readonly { schema: KindSchema }[]> = { -readonly [K in keyof T]: T[K]['schema'] };

function schemasOf<T extends readonly { schema: KindSchema }[]>(kinds: T): SchemasOf<T> {
  return kinds.map((kind) => kind.schema) as SchemasOf<T>;
}

export const sensorSchema = z.discriminatedUnion('kind', schemasOf(SENSOR_KINDS));
export const actuatorSchema = z.discriminatedUnion('kind', schemasOf(ACTUATOR_KINDS));

/** A sensor section as parsed (staleAfterS may be absent). */
export type RawSensor = z.output<typeof sensorSchema>;
/** A sensor with its kind's defaults resolved; `staleAfterS` resolved to 3 × periodS when absent. */
export type SensorConfig = ResolvedSensorOf<(typeof SENSOR_KINDS)[number]> & { staleAfterS: number };
type ResolvedSensorOf<Kind> = Kind extends SensorKind<KindSchema, infer Section> ? Section : never;
/** An actuator section as parsed, before its kind's resolution (an MQTT relay's preset). */
export type RawActuator = z.output<typeof actuatorSchema>;
/** An actuator with its kind's defaults resolved. */
export type ActuatorConfig = ResolvedOf<(typeof ACTUATOR_KINDS)[number]>;
type ResolvedOf<Kind> = Kind extends ActuatorKind<KindSchema, infer Section> ? Section : never;
/** The relay kinds: the ones sharing `relayFields` (they all have a safeState). */
type RelayKind = Extract<ActuatorConfig, { safeState: 'off' | 'on' }>['kind'];

// ---------------------------------------------------------------------------------------
// Lookups

/** Any section: the lookups read it only through the kind's own functions. */
type AnySection = { kind: string };
type AnySensorKind = Omit<SensorKind<KindSchema, AnySection>, 'driverFields'> & {
  driverFields: readonly string[];
};
type AnyActuatorKind = Omit<ActuatorKind<KindSchema, AnySection>, 'driverFields'> & {
  driverFields: readonly string[];
};

const SENSORS = new Map<string, AnySensorKind>(
  SENSOR_KINDS.map((kind) => [kind.kind, kind as unknown as AnySensorKind]),
);
const ACTUATORS = new Map<string, AnyActuatorKind>(
  ACTUATOR_KINDS.map((kind) => [kind.kind, kind as unknown as AnyActuatorKind]),
);

/** The descriptor of a sensor kind; throws on a kind the schema would have rejected. */
export function sensorKindOf(kind: string): AnySensorKind {
  const found = SENSORS.get(kind);
  if (!found) throw new Error(`unknown sensor kind "${kind}"`);
  return found;
}

/** The descriptor of an actuator kind, or undefined for a name no kind has (a broken file's). */
export function findActuatorKind(kind: string): AnyActuatorKind | undefined {
  return ACTUATORS.get(kind);
}

/** The descriptor of an actuator kind; throws on a kind the schema would have rejected. */
export function actuatorKindOf(kind: string): AnyActuatorKind {
  const found = ACTUATORS.get(kind);
  if (!found) throw new Error(`unknown actuator kind "${kind}"`);
  return found;
}

/** The descriptor of a sensor or actuator kind (their kind names never overlap). */
function kindOf(kind: string): AnySensorKind | AnyActuatorKind | undefined {
  return SENSORS.get(kind) ?? ACTUATORS.get(kind);
}

/** Relay kinds: they share `relayFields` (timing, modulation, safe state). */
export function isRelay<A extends { kind: string }>(
  actuator: A,
): actuator is Extract<A, { kind: RelayKind }> {
  const kind = ACTUATORS.get(actuator.kind);
  return kind !== undefined && kind.output === 'relay';
}

/** The BCM GPIO pin a sensor or actuator uses, if any (the 1-Wire pin is the kernel's, not listed). */
export function gpioPinOf(section: { kind: string; bcm?: number }): number | undefined {
  return kindOf(section.kind)?.gpioPin?.(section);
}

/** Kinds that talk to a broker: they need the mqtt block, and are never simulated. */
export function usesMqtt(section: { kind: string }): boolean {
  return kindOf(section.kind)?.usesMqtt ?? false;
}

/**
 * The level an actuator is driven to on faults, stale readings, removal and shutdown:
 * a relay's safeState (off 0, on 1), a continuous actuator's safeLevel.
 */
export function safeLevelOf(actuator: ActuatorConfig): number {
  return actuatorKindOf(actuator.kind).safeLevel(actuator);
}

/**
 * What identifies a driver: its kind and the fields its kind lists as the driver's (a
 * whitelist). Two configs with the same key can share the running driver (a reload keeps it:
 * no glitch, no re-export). Simulated plants are the simulated world: they keep running across
 * reloads, so edits to `simulation` take effect at the next start; so do edits to the
 * top-level `gpio` block for GPIO drivers whose own section is unchanged.
 */
export function driverKey(section: SensorConfig | ActuatorConfig): string {
  const kind = kindOf(section.kind);
  if (!kind) throw new Error(`unknown kind "${section.kind}"`);
  const fields = section as Partial<Record<string, unknown>>;
  return canonicalJson({
    kind: section.kind,
    ...Object.fromEntries(kind.driverFields.map((field) => [field, fields[field]])),
  });
}

/** The kinds that have a `homeostat doctor` check, in registry order (sensors first). */
export const KIND_DOCTORS: readonly { kind: string; doctor: KindDoctor<{ kind: string }> }[] = [
  ...SENSORS.values(),
  ...ACTUATORS.values(),
].flatMap((kind) => (kind.doctor ? [{ kind: kind.kind, doctor: kind.doctor }] : []));
