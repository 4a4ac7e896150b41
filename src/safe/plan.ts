/**
 * What `homeostat safe` drives, read from the config: the GPIO relays (and where GPIO lives),
 * and the MQTT actuators with their safe command and the broker that reaches them. A config
 * that no longer validates still names the relays that are wired, so they are read from its
 * text as a best guess. The same plan comes from the last applied config (safe/manifest.ts)
 * when the file cannot be used; safe-sources.ts chooses and merges.
 */
import { parse } from 'yaml';
import { readConfigText } from '../config/load.js';
import { type Config, DEFAULT_SYSFS_ROOT, type MqttConfig } from '../config/schema.js';
import type { GpioChipOverride } from '../drivers/gpio/chip.js';
import { actuatorKindOf, findActuatorKind } from '../kinds/registry.js';
import type { SafeTarget } from '../kinds/types.js';
import type { SafeRelay } from './gpio.js';
import type { SafePwm } from './pwm.js';

/** One MQTT actuator: its safe command, and what protects it when the broker is not reached. */
export interface SafePlug {
  id: string;
  /** Its kind (mqtt_switch, mqtt_level), for the report. */
  kind: string;
  topic: string;
  payload: string;
  /** Its dead man's switch, as a sentence for the report (or that it has none). */
  deadMan: string;
}

/** What the broker settings are read from (mqttSettings reads only these two blocks). */
export interface SafeBroker {
  node: Config['node'];
  mqtt: MqttConfig;
}

/** The relays and actuators `safe` acts on, and where GPIO lives, from a config. */
export interface SafePlan {
  relays: SafeRelay[];
  /** Hardware PWM outputs (under the same sysfs root). */
  pwms: SafePwm[];
  sysfsRoot: string;
  chip: GpioChipOverride;
  /** MQTT actuators with their safe command. */
  mqtt: SafePlug[];
  /** The broker of the config; absent: none configured (or not known, from a broken file). */
  broker?: SafeBroker;
}

/**
 * Where each way an actuator kind is reached (its `safe`, kinds/types.ts) goes in the plan: a
 * Record over every `via`, so a new one fails the type-check here until `safe` can drive it.
 */
const PLACE: {
  [Via in SafeTarget['via']]: (
    plan: SafePlan,
    id: string,
    kind: string,
    target: Extract<SafeTarget, { via: Via }>,
  ) => void;
} = {
  gpio: (plan, id, _kind, { via: _via, ...relay }) => void plan.relays.push({ id, ...relay }),
  pwm: (plan, id, _kind, { via: _via, ...pwm }) => void plan.pwms.push({ id, ...pwm }),
  mqtt: (plan, id, kind, { via: _via, ...command }) => void plan.mqtt.push({ id, kind, ...command }),
  // Nothing of it outlives the daemon (a simulated actuator): nothing to drive.
  none: () => undefined,
};

/** From a valid config: each actuator as its kind says `safe` reaches it. */
export function planFromConfig(config: Config): SafePlan {
  const plan: SafePlan = {
    relays: [],
    pwms: [],
    sysfsRoot: config.gpio.sysfsRoot,
    chip: { chipLabel: config.gpio.chipLabel, base: config.gpio.base },
    mqtt: [],
    ...(config.mqtt ? { broker: { node: config.node, mqtt: config.mqtt } } : {}),
  };
  for (const [id, actuator] of Object.entries(config.actuators)) {
    place(plan, id, actuator.kind, actuatorKindOf(actuator.kind).safe(actuator));
  }
  return plan;
}

/** `target` into its list of the plan. */
function place(plan: SafePlan, id: string, kind: string, target: SafeTarget): void {
  (PLACE[target.via] as (plan: SafePlan, id: string, kind: string, target: SafeTarget) => void)(
    plan,
    id,
    kind,
    target,
  );
}

/**
 * From a config that does not validate (edited while the daemon ran: the daemon kept the old
 * one). What it still names is the best guess of what is wired: each actuator whose kind can
 * tell from its section alone (the kind's `safeFromBroken`: a gpio_relay with an integer `bcm`,
 * a pwm channel), defaults as in the schema. Undefined when not even that can be read.
 */
export function planFromBrokenText(text: string): SafePlan | undefined {
  let data: unknown;
  try {
    data = parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(data)) return undefined;
  const gpio = isRecord(data.gpio) ? data.gpio : {};
  const actuators = isRecord(data.actuators) ? data.actuators : {};
  const plan: SafePlan = {
    relays: [],
    pwms: [],
    sysfsRoot:
      typeof gpio.sysfsRoot === 'string' && gpio.sysfsRoot !== '' ? gpio.sysfsRoot : DEFAULT_SYSFS_ROOT,
    chip: {
      chipLabel: typeof gpio.chipLabel === 'string' ? gpio.chipLabel : undefined,
      base: Number.isInteger(gpio.base) ? (gpio.base as number) : undefined,
    },
    mqtt: [],
  };
  for (const [id, section] of Object.entries(actuators)) {
    if (!isRecord(section) || typeof section.kind !== 'string') continue;
    const target = findActuatorKind(section.kind)?.safeFromBroken?.(section);
    if (target) place(plan, id, section.kind, target);
  }
  return plan;
}
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The relays of a config that no longer validates; read with the config's own checks and cap. */
export function readBrokenPlan(path: string): SafePlan | undefined {
  // Non-blocking and capped (a FIFO or /dev/zero as the config must not hang ExecStopPost).
  const read = readConfigText(path);
  return read.ok ? planFromBrokenText(read.text) : undefined;
}
