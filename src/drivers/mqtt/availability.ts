/**
 * Whether an MQTT device says it is alive, apart from what it measures or switches: its
 * availability topic. Sensors use it to keep a quiet value in force while the device is known
 * alive (a Zigbee probe reports only on change); actuators use it to report "device offline" at
 * once instead of after the command backoff; contacts count as tripped while offline.
 *
 * What each family publishes (all retained by the device or its bridge, so a restart of the
 * daemon learns the state at once):
 * - Zigbee2MQTT: `<base>/<device>/availability`, `{"state":"online"}` / `{"state":"offline"}`;
 *   plain `online` / `offline` with `legacy_availability_payload: true`
 *   (zigbee2mqtt.io, guide/configuration/device-availability). Published by Zigbee2MQTT, not
 *   the broker: if Zigbee2MQTT dies they stay `online`, so its `<base>/bridge/state` is read
 *   too ({@link bridgeStateTopic}).
 * - Tasmota: `tele/<topic>/LWT`, `Online` / `Offline` (the broker publishes `Offline` as the
 *   last will; tasmota.github.io/docs/MQTT).
 * - ESPHome: `<topic_prefix>/status`, `online` (birth) / `offline` (will; esphome.io,
 *   components/mqtt).
 * - Shelly: Gen2/Gen3 `<topic_prefix>/online`, Gen1 `shellies/<id>/online`, `true` / `false`
 *   (shelly-api-docs.shelly.cloud, gen2/General/MQTT).
 *
 * The parse is pure; {@link AvailabilityWatcher} is the thin subscription around it.
 */
import { StampClock } from '../../time/stamps.js';
import { type MqttTransport, TopicSubscription } from './transport.js';

/** The device families whose availability topic homeostat knows. */
export const AVAILABILITY_PRESET_NAMES = ['zigbee2mqtt', 'tasmota', 'esphome', 'shelly'] as const;
export type AvailabilityPreset = (typeof AVAILABILITY_PRESET_NAMES)[number];

/**
 * The availability topic of `device` in `preset`'s family. `device` is what that family's
 * other topics are built from: Zigbee2MQTT the device's topic with the base
 * (`zigbee2mqtt/fermenter_probe`), Tasmota its Topic (`plug`), ESPHome its topic prefix
 * (`kettle`), Shelly its topic prefix (`shellyplus1pm-a8032ab12345`, or `shellies/<id>` for Gen1).
 */
export function availabilityTopic(preset: AvailabilityPreset, device: string): string {
  switch (preset) {
    case 'zigbee2mqtt':
      return `${device}/availability`;
    case 'tasmota':
      return `tele/${device}/LWT`;
    case 'esphome':
      return `${device}/status`;
    case 'shelly':
      return `${device}/online`;
  }
}

/**
 * The state topic of the bridge `device` is reached through, or undefined for families without
 * one. Zigbee2MQTT: `<base>/bridge/state`, base the first level of the device's topic
 * (`zigbee2mqtt` by default), `{"state":"online"}` / `{"state":"offline"}` (legacy `online` /
 * `offline`), retained, `offline` being its last will (zigbee2mqtt.io guide/usage/
 * mqtt_topics_and_messages). The devices' availability topics are Zigbee2MQTT's own messages:
 * when it crashes they stay retained `online`, and only the bridge state says it died.
 */
export function bridgeStateTopic(preset: AvailabilityPreset, device: string): string | undefined {
  return preset === 'zigbee2mqtt' ? `${device.split('/')[0]}/bridge/state` : undefined;
}

/** What an availability message said: the device is online, offline, or the payload made no sense. */
export type AvailabilityReport = 'online' | 'offline' | 'garbage';

/** Longer payloads are not availability messages, bytes (the longest real one is 19). */
const MAX_AVAILABILITY_BYTES = 256;

/**
 * What an availability payload says. Every family's words are understood whatever the topic
 * (`online`/`offline`, `Online`/`Offline`, `true`/`false`, Zigbee2MQTT's `{"state":…}`),
 * ignoring case and surrounding blanks; anything else is `garbage`, which never counts as
 * alive. Families never use each other's words for the opposite meaning, so reading them all
 * costs nothing and survives a bridge switched to its legacy payloads.
 */
export function parseAvailability(payload: Buffer): AvailabilityReport {
  if (payload.length > MAX_AVAILABILITY_BYTES) return 'garbage';
  const text = payload.toString('utf8').trim();
  return wordMeaning(text) ?? jsonMeaning(text) ?? 'garbage';
}

function wordMeaning(word: unknown): 'online' | 'offline' | undefined {
  if (typeof word === 'boolean') return word ? 'online' : 'offline';
  if (typeof word !== 'string') return undefined;
  const lower = word.trim().toLowerCase();
  if (lower === 'online' || lower === 'true') return 'online';
  if (lower === 'offline' || lower === 'false') return 'offline';
  return undefined;
}

function jsonMeaning(text: string): 'online' | 'offline' | undefined {
  if (!text.startsWith('{') && !text.startsWith('"')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed === 'string') return wordMeaning(parsed);
  if (parsed !== null && typeof parsed === 'object' && 'state' in parsed) {
    return wordMeaning((parsed as { state: unknown }).state);
  }
  return undefined;
}

/** What is known of a device's availability now. */
export interface AvailabilityState {
  /** `unknown`: nothing (or only garbage) received since the watcher started. */
  state: 'online' | 'offline' | 'unknown';
  /** When the state last changed (the first message counts as a change), ms; absent while unknown. */
  sinceMs?: number;
  /** When the last message that made sense arrived, ms; absent while unknown. */
  lastMs?: number;
  /** The last payload that made no sense, for the reason a consumer gives; cleared by a good one. */
  garbage?: string;
}

/**
 * Follows one device's availability topic on the shared connection: the latest report,
 * stamped on arrival on the daemon's monotonic clock and shown in wall time (time/stamps.ts).
 * Garbage keeps the previous state out of force (the state becomes `unknown`), so a device
 * whose bridge sends nonsense is never taken as alive. `onChange` is called after every message
 * that changed the state, so a driver can make the loop run at once (offline → safe in the
 * cycle the message arrives).
 */
export class AvailabilityWatcher {
  /** As `status` shows it, with `sinceMs` and `lastMs` as monotonic stamps. */
  private current: AvailabilityState = { state: 'unknown' };
  private readonly subscription: TopicSubscription;
  private readonly stamps: StampClock;

  constructor(
    transport: MqttTransport,
    readonly topic: string,
    time: StampClock | (() => number),
    private readonly onChange?: () => void,
  ) {
    this.stamps = StampClock.of(time);
    this.subscription = new TopicSubscription(transport, topic, (_topic, payload) => this.onMessage(payload));
  }

  /** Subscribes (QoS 0; the retained state arrives at once). */
  start(): void {
    this.subscription.start();
  }

  /** Unsubscribes; final. The last state stays readable. */
  stop(): void {
    this.subscription.stop();
  }

  /** The latest state (a copy, its times in wall time as of now). */
  get status(): AvailabilityState {
    const { sinceMs, lastMs } = this.current;
    return {
      ...this.current,
      ...(sinceMs === undefined ? {} : { sinceMs: this.stamps.wallOf(sinceMs) }),
      ...(lastMs === undefined ? {} : { lastMs: this.stamps.wallOf(lastMs) }),
    };
  }

  private onMessage(payload: Buffer): void {
    if (this.subscription.stopped) return;
    const report = parseAvailability(payload);
    const before = this.current.state;
    const arrivedMs = this.stamps.stamp();
    if (report === 'garbage') {
      this.current = { state: 'unknown', garbage: preview(payload) };
    } else {
      const sinceMs = report === before ? (this.current.sinceMs ?? arrivedMs) : arrivedMs;
      this.current = { state: report, sinceMs, lastMs: arrivedMs };
    }
    if (this.current.state !== before) this.onChange?.();
  }
}

/** A payload as a reason shows it: at most 40 characters, quoted. */
function preview(payload: Buffer): string {
  const text = payload.subarray(0, 64).toString('utf8');
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}
