/**
 * Reconcile: what to publish, given what was published. Discovery is itself a reconcile (as in
 * zigbee2mqtt): only the publishes that are needed, including the removal of entities whose
 * loop went away (see discovery.ts for Home Assistant's removal rules).
 *
 * Pure: no clock, no IO.
 */
import type { DiscoveryComponent, DiscoveryMessage, DiscoveryPayload } from './discovery-types.js';

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
