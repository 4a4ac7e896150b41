import type { Reading } from '../../core/types.js';
import type { SensorDriver } from '../types.js';
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
  /** The daemon's clock: messages are stamped with it when they arrive. */
  nowMs: () => number;
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
 */
export class MqttSensor implements SensorDriver {
  readonly id: string;
  readonly simulated = false;
  private readonly opts: MqttSensorOptions;
  private latest: Reading | undefined;
  /** Messages without the field since the last good value (named in "no value" errors). */
  private withoutField = 0;
  private listener: (() => void) | undefined;
  /** The sensor's topic; stopping it is final (see `stop()`). */
  private readonly subscription: TopicSubscription;

  constructor(opts: MqttSensorOptions) {
    if (!(opts.staleAfterMs > 0)) {
      throw new RangeError(`sensor ${opts.id}: staleAfterMs must be > 0, got ${opts.staleAfterMs}`);
    }
    this.id = opts.id;
    this.opts = opts;
    this.subscription = new TopicSubscription(opts.transport, opts.topic, (_topic, payload) =>
      this.onMessage(payload),
    );
  }

  /** Subscribes to the topic (the transport keeps the subscription across reconnects). */
  async start(): Promise<void> {
    this.subscription.start();
  }

  /**
   * Unsubscribes (a driver replaced on reload leaves no handler on the shared connection) and
   * ignores anything still in flight. `read()` keeps answering with the last value until it is
   * stale. Final: a stopped sensor does not start again. Idempotent.
   */
  async stop(): Promise<void> {
    this.subscription.stop();
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
   * value or a refusal), so the daemon can sample and run the loop at once instead of at the
   * next period. Replaces the previous listener: calling it again on every reload is harmless.
   */
  onValue(listener: () => void): void {
    this.listener = listener;
  }

  private latestReading(): Reading {
    const { topic, staleAfterMs } = this.opts;
    const latest = this.latest;
    if (latest === undefined) {
      const why =
        this.withoutField > 0
          ? ` (${this.withoutField} message(s) without field ${this.opts.field})`
          : this.opts.transport.connected
            ? ''
            : ' (MQTT not connected)';
      throw new Error(`no value received yet on ${topic}${why}`);
    }
    const ageMs = this.opts.nowMs() - latest.atMs;
    if (ageMs > staleAfterMs) {
      throw new Error(
        `last value on ${topic} is ${Math.round(ageMs / 1000)} s old (stale after ${staleAfterMs / 1000} s)`,
      );
    }
    return { ...latest };
  }

  private onMessage(payload: Buffer): void {
    if (this.subscription.stopped) return;
    const parsed = parseNumberPayload(payload, this.opts.field);
    if (parsed.ok) {
      this.latest = { value: parsed.value, atMs: this.opts.nowMs() };
      this.withoutField = 0;
    } else if (parsed.missing) {
      this.withoutField++;
      return;
    } else {
      this.latest = { value: notANumber(payload, this.opts.field), atMs: this.opts.nowMs() };
      this.withoutField = 0;
    }
    this.listener?.();
  }

  /**
   * The wall clock stepped by `deltaMs`: the arrival stamp moves with it, so the value keeps
   * its real age (neither hours stale nor stamped in the future).
   */
  shiftTimes(deltaMs: number): void {
    if (this.latest) this.latest = { ...this.latest, atMs: this.latest.atMs + deltaMs };
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
