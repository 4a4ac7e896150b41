import { freshnessOf } from '../../core/liveness.js';
import type { Reading } from '../../core/types.js';
import { StampClock } from '../../time/stamps.js';
import type { SensorDriver } from '../types.js';
import { DeviceLivenessTracker, type LivenessOptions } from './liveness.js';
import { MAX_PAYLOAD_BYTES, parseNumberPayload, readField } from './payload.js';
import { type MqttTransport, TopicSubscription } from './transport.js';

/** Options of an {@link MqttSensor}. */
export interface MqttSensorOptions {
  id: string;
  transport: MqttTransport;
  /** The exact topic the device publishes its reading on (no wildcards). */
  topic: string;
  /** Dot path of the value in a JSON payload (`AM2301.Temperature`); absent: the payload is the number. */
  field?: string | undefined;
  /** A value older than this is not returned (the sensor's `staleAfterS`), ms. */
  staleAfterMs: number;
  /** The daemon's wall clock: what a reading's times are shown in. */
  nowMs: () => number;
  /**
   * The daemon's monotonic clock: messages are stamped with it when they arrive, so a
   * wall-clock step moves no stamp (time/stamps.ts). Absent: stamps are on `nowMs`.
   */
  monotonicMs?: (() => number) | undefined;
  /**
   * How the device shows it is alive apart from its value (a probe that reports only on
   * change): its readings carry `liveness`, and a quiet value stays in force up to its maxQuietMs
   * (core/liveness.ts). Absent: the value alone shows the sensor is alive.
   */
  liveness?: LivenessOptions | undefined;
}

/**
 * A sensor whose device publishes its readings (Tasmota, Zigbee2MQTT, Shelly, ESPHome…).
 * The reading arrives when the device publishes, not when homeostat asks: the driver keeps
 * the latest message, stamped on arrival, and `read()` hands it out while it is fresh.
 *
 * - A message without the field is ignored (a device may send other documents on the same
 *   topic). One whose value is not a finite number (`nan`, `inf`, `null`, `unavailable`, an
 *   oversized payload) is the device saying the value is unknown now: it becomes the latest
 *   reading, NaN (±Infinity for `inf`/`1e999`), stamped on arrival, so the loop judges it
 *   NotFinite and goes safe at once rather than running on the previous value until it goes
 *   stale.
 * - Retained messages are accepted: their age is unknown, but a value older than stale-after
 *   counted from its arrival is refused anyway, the same exposure as a device that dies
 *   right after publishing.
 * - Subscribed at QoS 0: a persistent session would otherwise replay a backlog of old
 *   readings after a reconnect, each stamped as new.
 * - With `liveness`, every reading carries what the device's availability, heartbeat or
 *   `last_seen` say (DeviceLivenessTracker), and the stale check is core/liveness.ts' rule: a
 *   quiet value of a device seen alive is handed out up to maxQuietMs; one whose device says it
 *   is offline is handed out too, with that liveness, so the loop judges it Offline and goes
 *   safe (and SensorHealthy says "device offline …") in the cycle the message arrives — a
 *   throw would leave the sampler's previous, still-fresh reading in force. A change of
 *   availability calls the `onValue` listener, so the sampler reads at once. A value that
 *   arrived before the device went offline is not kept in force by liveness when the device
 *   comes back (what happened while it was away went unreported): it ages as without liveness
 *   until a new value arrives. With `lastSeenField`, a retained value is stamped
 *   min(arrival, last_seen), so a value kept by the broker for hours is not taken as new.
 */
export class MqttSensor implements SensorDriver {
  readonly id: string;
  readonly simulated = false;
  private readonly opts: MqttSensorOptions;
  private readonly stamps: StampClock;
  /** The latest value, `atMs` a stamp (monotonic ms). */
  private latest: Reading | undefined;
  /** Messages without the field since the last good value (named in "no value" errors). */
  private withoutField = 0;
  private listener: (() => void) | undefined;
  /** The sensor's topic; stopping it is final (see `stop()`). */
  private readonly subscription: TopicSubscription;
  private readonly liveness: DeviceLivenessTracker | undefined;
  /** The latest value arrived before its device last went offline: liveness does not keep it. */
  private latestPredatesOffline = false;

  constructor(opts: MqttSensorOptions) {
    if (!(opts.staleAfterMs > 0)) {
      throw new RangeError(`sensor ${opts.id}: staleAfterMs must be > 0, got ${opts.staleAfterMs}`);
    }
    this.id = opts.id;
    this.opts = opts;
    this.stamps = new StampClock(opts.nowMs, opts.monotonicMs);
    this.subscription = new TopicSubscription(opts.transport, opts.topic, (_topic, payload, meta) =>
      this.onMessage(payload, meta.retain),
    );
    if (opts.liveness !== undefined) {
      this.liveness = new DeviceLivenessTracker(opts.transport, opts.liveness, this.stamps, () =>
        this.onAvailabilityChange(),
      );
    }
  }

  /** Subscribes to the topic and the liveness topics (the transport keeps them across reconnects). */
  async start(): Promise<void> {
    this.subscription.start();
    this.liveness?.start();
  }

  /**
   * Unsubscribes (a driver replaced on reload leaves no handler on the shared connection) and
   * ignores anything still in flight. `read()` keeps answering with the last value until it is
   * stale. Final: a stopped sensor does not start again. Idempotent.
   */
  async stop(): Promise<void> {
    this.subscription.stop();
    this.liveness?.stop();
    this.listener = undefined;
  }

  /** The latest value (NaN or ±Infinity when the device sent no number), if fresh; throws why not (none yet, stale). */
  async read(): Promise<number> {
    return this.latestReading().value;
  }

  /**
   * The latest value stamped with its arrival time (not the time it is read), so a consumer
   * can age it honestly; same errors as `read()`.
   */
  async readStamped(): Promise<Reading> {
    return this.latestReading();
  }

  /**
   * `listener` is called after every message that changes what `read()` reports (a new
   * value or a refusal, the device going offline or coming back), so the daemon can sample and run the loop at once instead of at the
   * next period. Replaces the previous listener: calling it again on every reload is harmless.
   */
  onValue(listener: () => void): void {
    this.listener = listener;
  }

  private latestReading(): Reading {
    const { topic, staleAfterMs } = this.opts;
    const latest = this.latest;
    if (latest === undefined) throw new Error(`no value received yet on ${topic}${this.whyNoValue()}`);
    const liveness = this.liveness?.current();
    // A value from before the device went away is aged by itself once it is back.
    const kept = liveness?.offlineSinceMs === undefined && this.latestPredatesOffline ? undefined : liveness;
    const shown: Reading = { ...latest, atMs: this.stamps.wallOf(latest.atMs) };
    const reading: Reading = kept === undefined ? shown : { ...shown, liveness: kept };
    const freshness = freshnessOf(reading, this.opts.nowMs(), staleAfterMs);
    if (freshness.fresh || freshness.reason === 'Offline') return reading;
    if (kept !== undefined) throw new Error(`value on ${topic}: ${freshness.message}`);
    const ageS = Math.round(this.stamps.ageOf(latest.atMs) / 1000);
    throw new Error(`last value on ${topic} is ${ageS} s old (stale after ${staleAfterMs / 1000} s)`);
  }

  private whyNoValue(): string {
    if (this.withoutField > 0) return ` (${this.withoutField} message(s) without field ${this.opts.field})`;
    if (this.liveness?.current().offlineSinceMs !== undefined) return ' (device offline)';
    return this.opts.transport.connected ? '' : ' (MQTT not connected)';
  }

  private onAvailabilityChange(): void {
    if (this.subscription.stopped) return;
    if (this.latest !== undefined && this.liveness?.current().offlineSinceMs !== undefined) {
      this.latestPredatesOffline = true;
    }
    this.listener?.();
  }

  private onMessage(payload: Buffer, retained: boolean): void {
    if (this.subscription.stopped) return;
    const seenMs = this.liveness?.noteValueMessage(payload);
    const arrivedMs = this.stamps.stamp();
    // A retained value may be hours old: its device's own last_seen says when it was sent.
    const atMs = retained && seenMs !== undefined ? Math.min(arrivedMs, seenMs) : arrivedMs;
    const parsed = parseNumberPayload(payload, this.opts.field);
    if (!parsed.ok && parsed.missing) {
      this.withoutField++;
      return;
    }
    this.latest = { value: parsed.ok ? parsed.value : notANumber(payload, this.opts.field), atMs };
    this.withoutField = 0;
    this.latestPredatesOffline = false;
    this.listener?.();
  }
}

/**
 * The non-finite number a refused payload stands for: ±Infinity for `inf`, `-Infinity`,
 * `1e999` (as text or a JSON number), NaN for everything else (`nan`, `null`, words, objects).
 */
function notANumber(payload: Buffer, field: string | undefined): number {
  if (payload.length > MAX_PAYLOAD_BYTES) return Number.NaN;
  let raw: unknown = payload.toString('utf8');
  if (field !== undefined) {
    const found = readField(payload, field);
    raw = found.ok ? found.value : undefined;
  }
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
  const value = Number(text.replace(/^([-+]?)inf$/i, '$1Infinity'));
  return value === Number.POSITIVE_INFINITY || value === Number.NEGATIVE_INFINITY ? value : Number.NaN;
}
