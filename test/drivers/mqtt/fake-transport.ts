import type { MqttTransport, PublishOptions, TransportHandler } from '../../../src/drivers/mqtt/transport.js';

/** One publish a driver asked for. */
export interface RecordedPublish {
  topic: string;
  payload: string;
  opts: PublishOptions;
}

/**
 * A transport for driver tests: records subscriptions and publishes, delivers messages the
 * test hands it (exact topics only), and can be taken offline (publishes then reject, as the
 * real connection does).
 */
export class FakeTransport implements MqttTransport {
  connected = true;
  readonly published: RecordedPublish[] = [];
  /** The subscriptions in force, one per `subscribe` call not undone by `unsubscribe`. */
  readonly subscriptions: { filter: string; qos: 0 | 1 }[] = [];
  /** Every `unsubscribe` that removed a handler, in order. */
  readonly unsubscribed: string[] = [];
  /** Parallel to `subscriptions`. */
  private readonly handlers: { filter: string; handler: TransportHandler }[] = [];

  subscribe(filter: string, qos: 0 | 1, handler: TransportHandler): void {
    this.subscriptions.push({ filter, qos });
    this.handlers.push({ filter, handler });
  }

  unsubscribe(filter: string, handler: TransportHandler): void {
    const index = this.handlers.findIndex((entry) => entry.filter === filter && entry.handler === handler);
    if (index < 0) return;
    this.handlers.splice(index, 1);
    this.subscriptions.splice(index, 1);
    this.unsubscribed.push(filter);
  }

  /** How many handlers are subscribed to exactly `filter`. */
  handlerCount(filter: string): number {
    return this.handlers.filter((entry) => entry.filter === filter).length;
  }

  async publish(topic: string, payload: string | Buffer, opts: PublishOptions): Promise<void> {
    if (!this.connected) throw new Error(`MQTT not connected: not published to ${topic}`);
    this.published.push({ topic, payload: payload.toString(), opts });
  }

  /** Delivers a message to every handler subscribed to exactly `topic`. */
  deliver(topic: string, payload: string | Buffer, opts: { retain?: boolean } = {}): void {
    const buffer = typeof payload === 'string' ? Buffer.from(payload) : payload;
    // A copy: a handler may unsubscribe while it is being delivered to.
    for (const { filter, handler } of [...this.handlers]) {
      if (filter === topic) handler(topic, buffer, { retain: opts.retain ?? false });
    }
  }
}

/**
 * A clock a test moves by hand: wall time in ms since the epoch, monotonic time from 0. Time
 * passing moves both; a step (NTP, `date -s`) moves the wall time alone.
 */
export function manualTime(startMs = 1_700_000_000_000) {
  let nowMs = startMs;
  let monotonicMs = 0;
  return {
    nowMs: () => nowMs,
    monotonicMs: () => monotonicMs,
    advanceS: (s: number) => {
      nowMs += s * 1000;
      monotonicMs += s * 1000;
    },
    stepWall: (deltaMs: number) => {
      nowMs += deltaMs;
    },
  };
}
