/**
 * How an MQTT sensor's device shows it is alive apart from its value, for `Reading.liveness`
 * (the rule that uses it is core/liveness.ts): its availability topic (availability.ts), a
 * heartbeat topic (any live message there is a sign of life: Tasmota's `tele/<x>/STATE`; a
 * retained one is not, the broker resends it at every resubscribe), or a
 * `last_seen` field in the device's own messages (Zigbee2MQTT with `advanced.last_seen` set).
 */
import type { DeviceLiveness } from '../../core/types.js';
import { StampClock } from '../../time/stamps.js';
import { AvailabilityWatcher } from './availability.js';
import { MAX_PAYLOAD_BYTES, readField } from './payload.js';
import { type MqttTransport, TopicSubscription } from './transport.js';

/** Where a device's signs of life come from; at least one is given. */
export interface LivenessOptions {
  /** Its availability topic (online/offline). */
  availabilityTopic?: string | undefined;
  /**
   * The state topic of the bridge the device is reached through (Zigbee2MQTT
   * `<base>/bridge/state`, its last will): the bridge offline is the device offline, since the
   * device's own availability stays retained online when the bridge dies. Garbage there keeps
   * the device from counting as seen; never heard from (another base topic), it changes nothing.
   */
  bridgeStateTopic?: string | undefined;
  /** A topic on which any message shows the device alive. */
  heartbeatTopic?: string | undefined;
  /** Dot path of a last-seen time in the device's own value messages: ISO 8601 text or epoch ms. */
  lastSeenField?: string | undefined;
  /** How long a value may stay unchanged while the device is seen alive, ms. */
  maxQuietMs: number;
}

/** Epoch values below this are seconds, not ms (Sep 2001 in ms): Zigbee2MQTT sends ms, some bridges s. */
const EPOCH_MS_FROM = 1e12;

/**
 * The time a `last_seen` value stands for, ms: ISO 8601 text (`2026-12-02T07:40:12+01:00`) or a
 * number of epoch ms (or seconds); undefined for anything else.
 */
export function parseLastSeen(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
    return value < EPOCH_MS_FROM ? value * 1000 : value;
  }
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * Tracks one device's signs of life on the shared connection, stamped on the monotonic clock
 * (time/stamps.ts). `onChange` is called when what `current()` would say changed in a way the
 * loop must see at once (online ↔ offline).
 */
export class DeviceLivenessTracker {
  private readonly availability: AvailabilityWatcher | undefined;
  private readonly bridge: AvailabilityWatcher | undefined;
  private readonly heartbeat: TopicSubscription | undefined;
  /** Stamps (monotonic, ms). */
  private heartbeatAtMs: number | undefined;
  private lastSeenMs: number | undefined;
  private readonly stamps: StampClock;

  constructor(
    private readonly transport: MqttTransport,
    private readonly opts: LivenessOptions,
    time: StampClock | (() => number),
    onChange: () => void,
  ) {
    const stamps = StampClock.of(time);
    this.stamps = stamps;
    if (opts.availabilityTopic !== undefined) {
      this.availability = new AvailabilityWatcher(transport, opts.availabilityTopic, stamps, onChange);
    }
    if (opts.bridgeStateTopic !== undefined) {
      this.bridge = new AvailabilityWatcher(transport, opts.bridgeStateTopic, stamps, onChange);
    }
    if (opts.heartbeatTopic !== undefined) {
      // A retained copy is the broker's memory, resent at every resubscribe: no sign of life.
      this.heartbeat = new TopicSubscription(transport, opts.heartbeatTopic, (_topic, _payload, meta) => {
        if (!this.heartbeat?.stopped && !meta.retain) this.heartbeatAtMs = stamps.stamp();
      });
    }
  }

  start(): void {
    this.availability?.start();
    this.bridge?.start();
    this.heartbeat?.start();
  }

  /** Releases the subscriptions; final. */
  stop(): void {
    this.availability?.stop();
    this.bridge?.stop();
    this.heartbeat?.stop();
  }

  /**
   * The device's own value message arrived: its last-seen field, if configured, is noted and
   * returned as a stamp (monotonic ms; never ahead of now), so the caller can age a retained
   * value honestly.
   */
  noteValueMessage(payload: Buffer): number | undefined {
    // An oversized payload is refused by the value's parse too: it is not worth a JSON parse here.
    if (this.opts.lastSeenField === undefined || payload.length > MAX_PAYLOAD_BYTES) return undefined;
    const found = readField(payload, this.opts.lastSeenField);
    const seenMs = found.ok ? parseLastSeen(found.value) : undefined;
    if (seenMs === undefined) return undefined;
    this.lastSeenMs = Math.min(this.stamps.stampOf(seenMs), this.stamps.stamp());
    return this.lastSeenMs;
  }

  /** What the device's reading carries now, its times in wall time. */
  current(): DeviceLiveness {
    const nowMs = this.stamps.nowMs();
    const liveness: DeviceLiveness = { via: this.via(), maxQuietMs: this.opts.maxQuietMs };
    const availability = this.availability?.status;
    const bridge = this.bridge?.status;
    const offlineSince = [availability, bridge]
      .filter((status) => status?.state === 'offline')
      .map((status) => status?.sinceMs ?? nowMs);
    if (offlineSince.length > 0) liveness.offlineSinceMs = Math.min(...offlineSince);
    const sightings: number[] = [];
    // Online is a standing state: it holds now while the broker connection that would carry
    // its "offline" is up (and the bridge's last will, when there is a bridge: garbage there
    // vouches for nothing); without one, the device was last known alive when the message came.
    if (availability?.state === 'online' && bridge?.state !== 'offline' && bridge?.garbage === undefined) {
      sightings.push(this.transport.connected ? nowMs : (availability.lastMs ?? 0));
    }
    if (this.heartbeatAtMs !== undefined) sightings.push(this.stamps.wallOf(this.heartbeatAtMs));
    if (this.lastSeenMs !== undefined) sightings.push(this.stamps.wallOf(this.lastSeenMs));
    if (sightings.length > 0) liveness.seenAtMs = Math.max(...sightings);
    return liveness;
  }

  private via(): string {
    const parts: string[] = [];
    const availability = this.availability?.status;
    if (this.opts.availabilityTopic !== undefined) {
      const garbage = availability?.garbage ? `, garbage ${availability.garbage}` : '';
      parts.push(`availability ${this.opts.availabilityTopic}${garbage}`);
    }
    // The bridge is named only when it is why the device is not alive.
    const bridge = this.bridge?.status;
    if (bridge?.state === 'offline') parts.push(`bridge ${this.opts.bridgeStateTopic} offline`);
    if (bridge?.garbage) parts.push(`bridge ${this.opts.bridgeStateTopic}, garbage ${bridge.garbage}`);
    if (this.opts.heartbeatTopic !== undefined) parts.push(`heartbeat ${this.opts.heartbeatTopic}`);
    if (this.opts.lastSeenField !== undefined) parts.push(`field ${this.opts.lastSeenField}`);
    return parts.join(', ');
  }
}
