/**
 * Home Assistant MQTT discovery, device-based: one retained message on
 * `<prefix>/device/<nodeId>/config` describes the homeostat node as one device (`dev`), who
 * published it (`o`), and every entity as a component (`cmps`), all reading the retained
 * `<loop>/state` JSON through value templates and commanding the contract's command topics.
 *
 * Discovery is itself a reconcile (as in zigbee2mqtt): `discoveryPayload` computes the
 * desired discovery from the config, `discoveryDiff` compares it with what was published and
 * returns only the publishes that are needed, including the removal of entities whose loop
 * went away.
 *
 * Facts relied on (https://www.home-assistant.io/integrations/mqtt/, "Device discovery
 * payload" and "Supported abbreviations"; checked against home-assistant/core
 * homeassistant/components/mqtt/discovery.py and abbreviations.py):
 * - `dev` and `o` are required at the root of a device payload; `o.name` is required.
 *   Shared root options (availability, qos…) are inherited by every component.
 * - Each component needs `p` (platform) and, for entities, `uniq_id`.
 * - Abbreviations are expanded at the root, in `dev`, in `o` and inside every component.
 * - `default_entity_id` (`def_ent_id`, a full entity id such as `climate.x`) replaces the
 *   deprecated `object_id` since HA 2025.10; `object_id` stops working in 2026.4.
 * - An empty retained payload on the device topic removes the device and all its components.
 * - One component is removed by republishing the device payload with that component reduced
 *   to its platform only (`{"p": "sensor"}`), then once more without it.
 *
 * Keys: the documented abbreviation where one exists, the full name otherwise (temp_step,
 * current_humidity_topic, …); test/mqtt/discovery.test.ts checks every key against the docs.
 *
 * Pure: no clock, no IO.
 */

import { allowedModes, type Config, defaultMode, type LoopConfig } from '../config/schema.js';
import type { Mode } from '../core/types.js';
import { assertPlainTopic, type Topics, topicsFor } from './topics.js';

/** Home Assistant entity platforms homeostat publishes. */
export type Platform = 'climate' | 'humidifier' | 'sensor' | 'binary_sensor' | 'button' | 'number' | 'select';

/** One entry of `cmps`: a platform and its (abbreviated) options. */
export type DiscoveryComponent = { p: Platform } & Record<string, unknown>;

export interface DiscoveryPayload {
  dev: { ids: string[]; name: string; mf: string; mdl: string; sw: string };
  o: { name: string; sw: string; url?: string };
  /** Shared availability: every entity goes unavailable with the node's last will. */
  avty_t: string;
  /** Shared QoS: commands from HA arrive at least once (they are absolute, so duplicates are harmless). */
  qos: 1;
  cmps: Record<string, DiscoveryComponent>;
}

export interface DiscoveryMessage {
  topic: string;
  payload: DiscoveryPayload;
}

export interface DiscoveryOptions {
  /** Discovery prefix (mqtt.discovery.prefix). Default in the config: homeassistant. */
  prefix: string;
  /** mqtt.baseTopic. */
  baseTopic: string;
  /** homeostat's version (device and origin sw). */
  version: string;
  /** Where users get help (origin support_url). Default: none. */
  supportUrl?: string;
}

/** Where Home Assistant announces itself (`online` birth, `offline` will): republish discovery on `online`. */
export function homeAssistantStatusTopic(prefix: string): string {
  assertPlainTopic('discovery prefix', prefix);
  return `${prefix}/status`;
}

/** `<prefix>/device/<nodeId>/config`. */
export function discoveryTopic(prefix: string, nodeId: string): string {
  assertPlainTopic('discovery prefix', prefix);
  return `${prefix}/device/${nodeId}/config`;
}

/**
 * Home Assistant climate HVAC mode for each homeostat temperature mode. The names coincide,
 * so HA's mode commands are homeostat's mode payloads as they are (no command template).
 * heat_cool is HA's "heat or cool as needed", which is what split range does with one setpoint.
 */
export const CLIMATE_MODE: Readonly<Partial<Record<Mode, string>>> = {
  off: 'off',
  heat: 'heat',
  cool: 'cool',
  heat_cool: 'heat_cool',
};

/** Valid climate `action_topic` values (docs: off, heating, cooling, drying, idle, fan). */
export const CLIMATE_ACTIONS = ['off', 'heating', 'cooling', 'drying', 'idle', 'fan'] as const;
/** Valid humidifier `action_topic` values (docs: off, humidifying, drying, idle). */
export const HUMIDIFIER_ACTIONS = ['off', 'humidifying', 'drying', 'idle'] as const;

/**
 * Value templates over the retained `<loop>/state` JSON. They read `mode`, `setpoint`,
 * `measured` (number or null/absent), `output` (−1..1), `action` and `conditions` (a list of
 * `{type, status}`): the status publisher must keep those names. `'None'` is HA's payload for
 * "unknown" (sensors, climate current temperature and action, humidifier mode), so a missing
 * reading shows as unknown rather than as a stale number.
 */
export const STATE_TEMPLATES = {
  setpoint: '{{ value_json.setpoint }}',
  mode: '{{ value_json.mode }}',
  measured: "{{ value_json.measured if value_json.measured is number else 'None' }}",
  /** Signed percent: positive raises, negative lowers. */
  outputPercent: "{{ (value_json.output * 100) | round(1) if value_json.output is number else 'None' }}",
  /** ON while the Faulted condition is True (binary_sensor payload_on/off defaults ON/OFF). */
  faulted:
    "{{ 'ON' if (value_json.conditions | default([]) | selectattr('type', 'equalto', 'Faulted') " +
    "| selectattr('status', 'equalto', 'True') | list | length) > 0 else 'OFF' }}",
  /** ON while the StorageHealthy condition is False (the database cannot be used; regulation goes on). */
  storageProblem:
    "{{ 'ON' if (value_json.conditions | default([]) | selectattr('type', 'equalto', 'StorageHealthy') " +
    "| selectattr('status', 'equalto', 'False') | list | length) > 0 else 'OFF' }}",
  climateAction: actionTemplate(CLIMATE_ACTIONS),
  humidifierAction: actionTemplate(HUMIDIFIER_ACTIONS),
  /** Humidifier mode (HA modes exclude off, which is the entity's on/off state): 'None' when off. */
  humidifierMode: "{{ value_json.mode if value_json.mode != 'off' else 'None' }}",
  /** Humidifier on/off state, rendered as its payload_off ('off') or payload_on (`onMode`). */
  humidifierState: (onMode: Mode) => `{{ 'off' if value_json.mode == 'off' else '${onMode}' }}`,
} as const;

function actionTemplate(valid: readonly string[]): string {
  const list = valid.map((a) => `'${a}'`).join(', ');
  return `{{ value_json.action if value_json.action in [${list}] else 'None' }}`;
}

/** The discovery message for this config: one device, its components keyed by unique id. */
export function discoveryPayload(config: Config, opts: DiscoveryOptions): DiscoveryMessage {
  const nodeId = config.node.id;
  const topics = topicsFor(opts.baseTopic, nodeId);
  const cmps: Record<string, DiscoveryComponent> = {};
  for (const [loopId, loop] of Object.entries(config.loops)) {
    Object.assign(cmps, loopComponents(nodeId, loopId, loop, topics));
  }
  return {
    topic: discoveryTopic(opts.prefix, nodeId),
    payload: {
      dev: {
        ids: [`homeostat_${nodeId}`],
        name: config.node.name,
        mf: 'homeostat',
        mdl: 'homeostat',
        sw: opts.version,
      },
      o: { name: 'homeostat', sw: opts.version, ...(opts.supportUrl ? { url: opts.supportUrl } : {}) },
      avty_t: topics.availability,
      qos: 1,
      cmps,
    },
  };
}

/** Unique-id prefix of a loop's components; also the cmps keys. */
function loopUniqueId(nodeId: string, loopId: string): string {
  return `homeostat_${nodeId}_${loopId}`;
}

/** Entity ids allow only [a-z0-9_]: a node id's `-` becomes `_`. */
function entityId(platform: Platform, nodeId: string, loopId: string, suffix?: string): string {
  const object = `homeostat_${nodeId.replace(/-/g, '_')}_${loopId}${suffix ? `_${suffix}` : ''}`;
  return `${platform}.${object}`;
}

function loopComponents(
  nodeId: string,
  loopId: string,
  loop: LoopConfig,
  topics: Topics,
): Record<string, DiscoveryComponent> {
  const uid = loopUniqueId(nodeId, loopId);
  const state = topics.loopState(loopId);
  const entity = (platform: Platform, key: string, name: string, suffix: string | undefined) => ({
    p: platform,
    name,
    uniq_id: `${uid}_${key}`,
    def_ent_id: entityId(platform, nodeId, loopId, suffix),
  });
  const components: [string, DiscoveryComponent][] = [];

  // The main entity: what a person adjusts.
  if (loop.quantity === 'temperature') {
    components.push([
      'climate',
      climate(loop, topics, loopId, entity('climate', 'climate', loop.name, undefined)),
    ]);
  } else if (loop.quantity === 'humidity') {
    components.push([
      'humidifier',
      humidifier(loop, topics, loopId, entity('humidifier', 'humidifier', loop.name, undefined)),
    ]);
  } else {
    // No HA entity fits a generic quantity: a number for the setpoint, a select for the mode.
    components.push([
      'setpoint',
      {
        ...entity('number', 'setpoint', `${loop.name} setpoint`, 'setpoint'),
        cmd_t: topics.loopSetpointSet(loopId),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.setpoint,
        min: loop.limits.min,
        max: loop.limits.max,
        step: loop.step,
        mode: 'box',
        ...unit(loop),
        ret: false,
      },
    ]);
    components.push([
      'mode',
      {
        ...entity('select', 'mode', `${loop.name} mode`, 'mode'),
        cmd_t: topics.loopModeSet(loopId),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.mode,
        ops: allowedModes(loop),
        ret: false,
      },
    ]);
  }

  // For every loop: what it measures, what it outputs, whether it is faulted, and a reset.
  const measured = MEASURED[loop.quantity];
  components.push([
    measured.key,
    {
      ...entity('sensor', measured.key, `${loop.name} ${measured.key}`, measured.key),
      stat_t: state,
      val_tpl: STATE_TEMPLATES.measured,
      stat_cla: 'measurement',
      ...(measured.deviceClass && measured.units.includes(loop.unit)
        ? { dev_cla: measured.deviceClass }
        : {}),
      ...unit(loop),
    },
  ]);
  components.push([
    'output',
    {
      ...entity('sensor', 'output', `${loop.name} output`, 'output'),
      stat_t: state,
      val_tpl: STATE_TEMPLATES.outputPercent,
      stat_cla: 'measurement',
      unit_of_meas: '%',
      ent_cat: 'diagnostic',
    },
  ]);
  components.push([
    'fault',
    {
      ...entity('binary_sensor', 'fault', `${loop.name} fault`, 'fault'),
      stat_t: state,
      val_tpl: STATE_TEMPLATES.faulted,
      dev_cla: 'problem',
      ent_cat: 'diagnostic',
    },
  ]);
  components.push([
    'storage',
    {
      ...entity('binary_sensor', 'storage', `${loop.name} storage problem`, 'storage'),
      stat_t: state,
      val_tpl: STATE_TEMPLATES.storageProblem,
      dev_cla: 'problem',
      ent_cat: 'diagnostic',
    },
  ]);
  components.push([
    'fault_reset',
    {
      ...entity('button', 'fault_reset', `${loop.name} reset fault`, 'fault_reset'),
      cmd_t: topics.loopFaultReset(loopId),
      pl_prs: 'reset',
      ent_cat: 'config',
      ret: false,
    },
  ]);

  return Object.fromEntries(components.map(([key, component]) => [`${uid}_${key}`, component]));
}

/** The measured-value sensor per quantity; device_class only with a unit HA accepts for it. */
const MEASURED: Record<LoopConfig['quantity'], { key: string; deviceClass?: string; units: string[] }> = {
  temperature: { key: 'temperature', deviceClass: 'temperature', units: ['°C', '°F', 'K'] },
  humidity: { key: 'humidity', deviceClass: 'humidity', units: ['%'] },
  generic: { key: 'measured', units: [] },
};

function unit(loop: LoopConfig): { unit_of_meas?: string } {
  return loop.unit ? { unit_of_meas: loop.unit } : {};
}

function climate(
  loop: LoopConfig,
  topics: Topics,
  loopId: string,
  base: Record<string, unknown> & { p: Platform },
): DiscoveryComponent {
  const state = topics.loopState(loopId);
  return {
    ...base,
    modes: allowedModes(loop).map((mode) => CLIMATE_MODE[mode] ?? mode),
    mode_cmd_t: topics.loopModeSet(loopId),
    mode_stat_t: state,
    mode_stat_tpl: STATE_TEMPLATES.mode,
    temp_cmd_t: topics.loopSetpointSet(loopId),
    temp_stat_t: state,
    temp_stat_tpl: STATE_TEMPLATES.setpoint,
    curr_temp_t: state,
    curr_temp_tpl: STATE_TEMPLATES.measured,
    act_t: state,
    act_tpl: STATE_TEMPLATES.climateAction,
    min_temp: loop.limits.min,
    max_temp: loop.limits.max,
    temp_step: loop.step,
    temp_unit: loop.unit === '°F' ? 'F' : 'C',
    // Retained commands would be replayed on every reconnect and undo later changes.
    ret: false,
  };
}

function humidifier(
  loop: LoopConfig,
  topics: Topics,
  loopId: string,
  base: Record<string, unknown> & { p: Platform },
): DiscoveryComponent {
  const state = topics.loopState(loopId);
  const activeModes = allowedModes(loop).filter((mode) => mode !== 'off');
  // Turning the entity on restores the file's mode, or the mode using every actuator.
  const onMode = loop.mode !== 'off' ? loop.mode : defaultMode(loop);
  // HA bounds: 0 <= min < max <= 100 (whole percent in older versions).
  const minHumidity = clamp(Math.ceil(loop.limits.min), 0, 99);
  const maxHumidity = clamp(Math.floor(loop.limits.max), minHumidity + 1, 100);
  return {
    ...base,
    dev_cla: loop.raise === undefined ? 'dehumidifier' : 'humidifier',
    // On/off is the mode: payload_on is a mode, payload_off is "off", both plain mode/set payloads.
    cmd_t: topics.loopModeSet(loopId),
    pl_on: onMode,
    pl_off: 'off',
    stat_t: state,
    stat_val_tpl: STATE_TEMPLATES.humidifierState(onMode),
    hum_cmd_t: topics.loopSetpointSet(loopId),
    hum_stat_t: state,
    hum_state_tpl: STATE_TEMPLATES.setpoint,
    current_humidity_topic: state,
    current_humidity_template: STATE_TEMPLATES.measured,
    act_t: state,
    act_tpl: STATE_TEMPLATES.humidifierAction,
    min_hum: minHumidity,
    max_hum: maxHumidity,
    // With both actuators the user also picks humidify, dehumidify or auto.
    ...(activeModes.length > 1
      ? {
          modes: activeModes,
          mode_cmd_t: topics.loopModeSet(loopId),
          mode_stat_t: state,
          mode_stat_tpl: STATE_TEMPLATES.humidifierMode,
        }
      : {}),
    // The humidifier platform retains commands by default; retained commands would be replayed.
    ret: false,
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

// ---------------------------------------------------------------------------------------
// Reconcile: what to publish, given what was published

/** One publish the caller must make, in order. Discovery messages are retained. */
export interface DiscoveryPublish {
  topic: string;
  /** JSON, or '' to delete the device and all its entities. */
  payload: string;
  retain: true;
}

export interface DiscoveryDiff {
  publishes: DiscoveryPublish[];
  /** What is published after these publishes (topic → payload JSON): the next `previous`. */
  published: Map<string, string>;
}

/**
 * The publishes that take Home Assistant from `previous` (topic → payload JSON, as last
 * published; undefined when unknown, e.g. after a restart or HA's birth message: publish
 * everything) to `next` (several messages, one, or none when discovery is turned off):
 * - unchanged topic: nothing;
 * - new or changed: the payload; if components disappeared, first the payload with each
 *   removed component reduced to `{"p": platform}` (HA's documented single-component
 *   removal), then the payload without them;
 * - a topic no longer wanted (node renamed, discovery disabled): an empty payload, which
 *   deletes the device and its entities.
 */
export function discoveryDiff(
  previous: ReadonlyMap<string, string> | undefined,
  next: DiscoveryMessage | readonly DiscoveryMessage[],
): DiscoveryDiff {
  const messages: readonly DiscoveryMessage[] = Array.isArray(next) ? next : [next as DiscoveryMessage];
  const publishes: DiscoveryPublish[] = [];
  const published = new Map<string, string>();

  for (const { topic, payload } of messages) {
    const json = JSON.stringify(payload);
    published.set(topic, json);
    const before = previous?.get(topic);
    if (before === json) continue;
    const removed = before === undefined ? {} : removedComponents(before, payload);
    if (Object.keys(removed).length > 0) {
      const marker: DiscoveryPayload = { ...payload, cmps: { ...payload.cmps, ...removed } };
      publishes.push({ topic, payload: JSON.stringify(marker), retain: true });
    }
    publishes.push({ topic, payload: json, retain: true });
  }
  for (const topic of previous?.keys() ?? []) {
    if (!published.has(topic)) publishes.push({ topic, payload: '', retain: true });
  }
  return { publishes, published };
}

/** Components of the `before` payload absent from `after`, as platform-only removal markers. */
function removedComponents(before: string, after: DiscoveryPayload): Record<string, DiscoveryComponent> {
  const cmps = parseComponents(before);
  const removed: Record<string, DiscoveryComponent> = {};
  for (const [key, component] of Object.entries(cmps)) {
    if (!Object.hasOwn(after.cmps, key)) removed[key] = { p: component.p };
  }
  return removed;
}

/** `cmps` of a previously published payload; {} when it cannot be read (then nothing is marked). */
function parseComponents(json: string): Record<string, DiscoveryComponent> {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null || !('cmps' in value)) return {};
    const cmps = (value as { cmps: unknown }).cmps;
    if (typeof cmps !== 'object' || cmps === null) return {};
    return Object.fromEntries(
      Object.entries(cmps).filter(
        (entry): entry is [string, DiscoveryComponent] =>
          typeof entry[1] === 'object' &&
          entry[1] !== null &&
          typeof (entry[1] as { p?: unknown }).p === 'string',
      ),
    );
  } catch {
    return {};
  }
}
