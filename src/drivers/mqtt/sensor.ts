import type { Reading } from '../../core/types.js';
import type { SensorDriver } from '../types.js';
import { parseNumberPayload } from './payload.js';
import type { MqttTransport } from './transport.js';

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
 *   topic); one whose field is not a finite number is rejected: `read()` then throws its
 *   reason until a good message arrives, so the sampler logs it once and keeps its previous
 *   reading, which ages into a stale sensor and a safe loop.
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
  /** Why the latest message was refused; cleared by a good one. */
  private problem: string | undefined;
  /** Messages without the field since the last good value (named in "no value" errors). */
  private withoutField = 0;
  private listener: (() => void) | undefined;
  private subscribed = false;
  private stopped = false;

  constructor(opts: MqttSensorOptions) {
    if (!(opts.staleAfterMs > 0)) {
      throw new RangeError(`sensor ${opts.id}: staleAfterMs must be > 0, got ${opts.staleAfterMs}`);
    }
    this.id = opts.id;
    this.opts = opts;
  }

  /** Subscribes to the topic (the transport keeps the subscription across reconnects). */
  async start(): Promise<void> {
    if (this.subscribed || this.stopped) return;
    this.subscribed = true;
    this.opts.transport.subscribe(this.opts.topic, 0, (_topic, payload) => this.onMessage(payload));
  }

  /** Ignores further messages (the transport has no unsubscribe). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listener = undefined;
  }

  /** The latest value, if fresh; throws why not (none yet, refused, stale). */
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
    if (this.problem !== undefined) throw new Error(`${topic}: ${this.problem}`);
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
    if (this.stopped) return;
    const parsed = parseNumberPayload(payload, this.opts.field);
    if (parsed.ok) {
      this.latest = { value: parsed.value, atMs: this.opts.nowMs() };
      this.problem = undefined;
      this.withoutField = 0;
    } else if (parsed.missing) {
      this.withoutField++;
      return;
    } else {
      this.problem = parsed.reason;
    }
    this.listener?.();
  }
}
