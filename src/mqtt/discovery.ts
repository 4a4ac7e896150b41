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
 *   The shared availability at the root is inherited by every component; the root `qos` is
 *   not passed on (up to 2026.5), so every component carries its own (discovery-components.ts).
 * - Each component needs `p` (platform) and, for entities, `uniq_id`.
 * - Abbreviations are expanded at the root, in `dev`, in `o` and inside every component.
 * - `default_entity_id` (`def_ent_id`, a full entity id such as `climate.x`) replaces the
 *   deprecated `object_id` since HA 2025.10; `object_id` stops working in 2026.4.
 * - An empty retained payload on the device topic removes the device and all its components.
 * - One component is removed by republishing the device payload with that component reduced
 *   to its platform only (`{"p": "sensor"}`), then once more without it.
 *
 * - Entities have has_entity_name (entity.py): HA shows "<device name> <entity name>", and
 *   `name: null` is the device's name alone (see LoopNaming).
 *
 * Keys: the documented abbreviation where one exists (abbreviations.py), the full name
 * otherwise (temp_step, precision, …); test/mqtt/discovery-keys.test.ts checks every key and
 * the required ones against HA's platform schemas.
 *
 * Pure: no clock, no IO. The payload's types are in discovery-types.ts, the value templates in
 * discovery-templates.ts, each loop's components in discovery-components.ts (which assembles
 * them from discovery-main.ts and its neighbours) and the reconcile in discovery-diff.ts;
 * everything is exported from here.
 */

import type { Config } from '../config/schema.js';
import { actuatorProblemComponents } from './discovery-actuator.js';
import { loopComponents } from './discovery-components.js';
import type { DiscoveryComponent, DiscoveryMessage, DiscoveryOptions } from './discovery-types.js';
import { assertPlainTopic, topicsFor } from './topics.js';

export { climatePrecision, climateTemperatureUnit } from './discovery-climate.js';
export { type DiscoveryDiff, type DiscoveryPublish, discoveryDiff } from './discovery-diff.js';
export type { LoopNaming } from './discovery-entity.js';
export { humidifierBounds } from './discovery-humidifier.js';
export {
  CLIMATE_ACTIONS,
  CLIMATE_MODE,
  HUMIDIFIER_ACTIONS,
  STATE_TEMPLATES,
} from './discovery-templates.js';
export type {
  DiscoveryComponent,
  DiscoveryMessage,
  DiscoveryOptions,
  DiscoveryPayload,
  Platform,
} from './discovery-types.js';

/** Where Home Assistant announces itself (`online` birth, `offline` will): republish discovery on `online`. */
export function homeAssistantStatusTopic(prefix: string): string {
  assertPlainTopic('discovery prefix', prefix);
  return `${prefix}/status`;
}

function sameName(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** `<prefix>/device/<nodeId>/config`. */
export function discoveryTopic(prefix: string, nodeId: string): string {
  assertPlainTopic('discovery prefix', prefix);
  return `${prefix}/device/${nodeId}/config`;
}

/** The discovery message for this config: one device, its components keyed by unique id. */
export function discoveryPayload(config: Config, opts: DiscoveryOptions): DiscoveryMessage {
  const nodeId = config.node.id;
  const topics = topicsFor(opts.baseTopic, nodeId);
  const cmps: Record<string, DiscoveryComponent> = {};
  const loops = Object.entries(config.loops);
  for (const [loopId, loop] of loops) {
    // A loop that is the whole device needs no loop name in front of its entities' names.
    const standalone = loops.length === 1 || sameName(loop.name, config.node.name);
    Object.assign(cmps, loopComponents(nodeId, loopId, loop, topics, { standalone }));
    Object.assign(cmps, actuatorProblemComponents(config, { nodeId, loopId }, loop, topics, { standalone }));
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
