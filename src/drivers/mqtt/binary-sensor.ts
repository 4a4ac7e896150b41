/**
 * An on/off input whose device publishes its state over MQTT: a window or door contact, a
 * motion or a leak sensor (Zigbee2MQTT, Tasmota, Shelly, ESPHome). Read as 1 (open, occupied,
 * wet) or 0, like a gpio_input, so it can be an interlock with the same rules.
 *
 * Contacts publish on change only, so the driver never refuses an old value itself: it hands
 * out the latest state stamped with its arrival, with the device's liveness when configured,
 * and the core judges it (core/liveness.ts: a state whose device is seen alive stays in force
 * up to maxQuietMs). Whatever cannot be trusted is NaN, so an interlock on it trips at once
 * and says why:
 * - a payload that is not one of the mapping's words (garbage): NaN until a good one comes,
 *   with `whyNotANumber` saying what was sent;
 * - the device offline (its availability topic): NaN with `liveness.offlineSinceMs`. NaN and not
 *   only the liveness mark, so the loop goes safe even where the liveness is not passed on;
 * - the device back online: still NaN, saying so, until a new state comes. What happened while
 *   it was away went unreported (a window opened while the bridge was down), so the state from
 *   before the outage vouches for nothing (as sensor.ts' `latestPredatesOffline`). A retained
 *   state is the broker's memory, not a new report: it ends that only if its last_seen (when
 *   configured) postdates the outage.
 * A message without the field is not about this input (a Tasmota RESULT of a command) and is
 * ignored. Subscribed at QoS 0, as every MQTT sensor (no replayed backlog after a reconnect).
 */
import type { Reading } from '../../core/types.js';
import { StampClock } from '../../time/stamps.js';
import type { SensorDriver } from '../types.js';
import { type BinarySource, type BinaryWord, parseBinaryPayload } from './binary-payload.js';
import { DeviceLivenessTracker, type LivenessOptions } from './liveness.js';
import { type MqttTransport, TopicSubscription } from './transport.js';

/** Options of an {@link MqttBinarySensor}. */
export interface MqttBinarySensorOptions {
  id: string;
  transport: MqttTransport;
  /** The topics the state is published on (Tasmota: two), each with its field. */
  sources: readonly BinarySource[];
  /** Words that read 1 and 0 (compared ignoring case). */
  on: readonly BinaryWord[];
  off: readonly BinaryWord[];
  /** How the device shows it is alive apart from its state; absent: the state alone. */
  liveness?: LivenessOptions | undefined;
  /** The daemon's wall clock: what a reading's times are shown in. */
  nowMs: () => number;
  /** The daemon's monotonic clock, messages' arrival stamps (time/stamps.ts). Absent: `nowMs`. */
  monotonicMs?: (() => number) | undefined;
}

/** What the last message that was about this input said, `atMs` a stamp (monotonic ms). */
type Latest = { value: 0 | 1; atMs: number } | { value: number; atMs: number; garbage: string };

export class MqttBinarySensor implements SensorDriver {
  readonly id: string;
  readonly simulated = false;
  private readonly opts: MqttBinarySensorOptions;
  private readonly subscriptions: TopicSubscription[];
  private readonly liveness: DeviceLivenessTracker | undefined;
  private readonly stamps: StampClock;
  private latest: Latest | undefined;
  /**
   * When the device last went offline (a stamp), if the latest state is from before that (void
   * until a new one).
   */
  private latestPredatesOfflineMs: number | undefined;
  private listener: (() => void) | undefined;
  private notifyPending = false;
  private stopped = false;

  constructor(opts: MqttBinarySensorOptions) {
    if (opts.sources.length === 0) throw new RangeError(`sensor ${opts.id}: no topic to read`);
    this.id = opts.id;
    this.opts = opts;
    this.stamps = new StampClock(opts.nowMs, opts.monotonicMs);
    this.subscriptions = opts.sources.map(
      (source) =>
        new TopicSubscription(opts.transport, source.topic, (_topic, payload, meta) =>
          this.onMessage(source, payload, meta.retain),
        ),
    );
    if (opts.liveness) {
      this.liveness = new DeviceLivenessTracker(opts.transport, opts.liveness, this.stamps, () =>
        this.onLivenessChange(),
      );
    }
  }

  /** Subscribes to the state topics and the liveness ones (kept across reconnects by the transport). */
  async start(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.start();
    this.liveness?.start();
  }

  /** Unsubscribes; final and idempotent. `read()` keeps answering with what it last knew. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const subscription of this.subscriptions) subscription.stop();
    this.liveness?.stop();
    this.listener = undefined;
  }

  /** The latest state: 1, 0, or NaN (garbage, device offline); throws while none has come. */
  async read(): Promise<number> {
    return this.reading().value;
  }

  /** The latest state stamped with its arrival, with the device's liveness; same errors as `read()`. */
  async readStamped(): Promise<Reading> {
    return this.reading();
  }

  /**
   * `listener` runs after every message that changes what `read()` says, and when the device
   * goes on/offline: once per burst, on the next turn of the event loop (see `notify`).
   */
  onValue(listener: () => void): void {
    this.listener = listener;
  }

  private reading(): Reading {
    const liveness = this.liveness?.current();
    const stored = this.latest;
    const latest = stored && { ...stored, atMs: this.stamps.wallOf(stored.atMs) };
    if (liveness?.offlineSinceMs !== undefined) {
      // Offline voids the state: NaN stamped with its arrival, or with the offline message.
      const atMs = latest?.atMs ?? liveness.offlineSinceMs;
      return { value: Number.NaN, atMs, liveness, whyNotANumber: `device offline (${liveness.via})` };
    }
    if (latest !== undefined && this.latestPredatesOfflineMs !== undefined) {
      const via = liveness?.via ?? 'its liveness';
      const whyNotANumber = `device back online; no state since it went offline (${via})`;
      return { value: Number.NaN, atMs: latest.atMs, ...(liveness ? { liveness } : {}), whyNotANumber };
    }
    if (latest === undefined) {
      const topics = this.opts.sources.map((source) => source.topic).join(' or ');
      const why = this.opts.transport.connected ? '' : ' (MQTT not connected)';
      throw new Error(`no state received yet on ${topics}${why}`);
    }
    const reading: Reading = { value: latest.value, atMs: latest.atMs };
    if ('garbage' in latest) reading.whyNotANumber = latest.garbage;
    if (liveness) reading.liveness = liveness;
    return reading;
  }

  private onLivenessChange(): void {
    const offlineSinceMs = this.liveness?.current().offlineSinceMs;
    if (this.latest !== undefined && offlineSinceMs !== undefined)
      this.latestPredatesOfflineMs = this.stamps.stampOf(offlineSinceMs);
    this.notify();
  }

  private onMessage(source: BinarySource, payload: Buffer, retained: boolean): void {
    if (this.stopped) return;
    const parsed = parseBinaryPayload(payload, { field: source.field, on: this.opts.on, off: this.opts.off });
    if (!parsed.ok && parsed.missing) return;
    // A last-seen time in the message ages a retained state honestly; else it is as of now.
    const seenMs = this.liveness?.noteValueMessage(payload);
    const atMs = seenMs ?? this.stamps.stamp();
    this.notePredatesOffline(retained, seenMs);
    this.latest = parsed.ok
      ? { value: parsed.value, atMs }
      : { value: Number.NaN, atMs, garbage: `${source.topic}: ${parsed.reason}` };
    this.notify();
  }

  /**
   * A live message is a new report: the outage is over. A retained one is the broker's memory,
   * as old as the outage or older, unless its last_seen postdates it; one that comes while the
   * device is offline (the retained state resent at a resubscribe) is void once it is back.
   */
  private notePredatesOffline(retained: boolean, seenMs: number | undefined): void {
    const offlineSinceMs = this.liveness?.current().offlineSinceMs;
    const sinceMs =
      this.latestPredatesOfflineMs ??
      (offlineSinceMs === undefined ? undefined : this.stamps.stampOf(offlineSinceMs));
    if (!retained || sinceMs === undefined || (seenMs !== undefined && seenMs > sinceMs)) {
      this.latestPredatesOfflineMs = undefined;
    } else {
      this.latestPredatesOfflineMs = sinceMs;
    }
  }

  /**
   * Tells the listener once per burst, after the current one has been handled. Messages on the
   * state and availability topics often arrive in one packet, handled back to back: the
   * sampler ignores a "read now" while the read the first one asked for is still in flight
   * (its snapshot already taken), so telling it at once would lose the second message until
   * the next period (an offline device unseen for periodS). Deferred to the next turn of the
   * event loop, the first read has landed and the one asked for now sees both.
   */
  private notify(): void {
    if (this.notifyPending) return;
    this.notifyPending = true;
    setImmediate(() => {
      this.notifyPending = false;
      if (!this.stopped) this.listener?.();
    });
  }
}
