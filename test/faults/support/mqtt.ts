import mqtt, { type IClientPublishOptions, type MqttClient } from 'mqtt';
import type { ResultPayload, StatePayload } from '../../support/contract.js';

/**
 * The test's side of MQTT: an MQTT.js client playing Home Assistant and the people sending
 * commands. Keeps every message it receives (topic, payload, retain flag, arrival time), lets a
 * test wait for the next one matching, and publishes commands waiting for their result.
 */

export interface Received {
  topic: string;
  payload: Buffer;
  retain: boolean;
  /** Wall clock of arrival in the test process, ms since epoch. */
  atMs: number;
}

export type { ResultPayload, StatePayload };

interface Waiter {
  test: (m: Received) => boolean;
  resolve: (m: Received) => void;
}

export class TestMqtt {
  readonly received: Received[] = [];
  /** Bytes of every payload received (topic lengths included), for publish-volume figures. */
  bytesReceived = 0;
  private readonly waiters = new Set<Waiter>();

  private constructor(
    readonly client: MqttClient,
    /** Drop payloads from `received` (keep counts only): floods would keep megabytes. */
    private readonly keepPayloads: (topic: string) => boolean,
  ) {
    client.on('message', (topic, payload, packet) => {
      const message = { topic, payload, retain: packet.retain, atMs: Date.now() };
      this.bytesReceived += payload.byteLength + topic.length;
      if (this.keepPayloads(topic)) this.received.push(message);
      for (const waiter of [...this.waiters]) {
        if (waiter.test(message)) {
          this.waiters.delete(waiter);
          waiter.resolve(message);
        }
      }
    });
  }

  /**
   * Connects (MQTT 5, clean session, reconnecting every 200 ms) and subscribes to `filters` at
   * QoS 0: at QoS 0 the broker forwards at once and never drops for a full queue, so a flood's
   * results all arrive.
   */
  static async connect(
    url: string,
    filters: string[],
    opts: { keepPayloads?: (topic: string) => boolean; clientId?: string } = {},
  ): Promise<TestMqtt> {
    const client = await mqtt.connectAsync(url, {
      protocolVersion: 5,
      clean: true,
      reconnectPeriod: 200,
      connectTimeout: 5_000,
      ...(opts.clientId ? { clientId: opts.clientId } : {}),
    });
    const test = new TestMqtt(client, opts.keepPayloads ?? (() => true));
    if (filters.length > 0) await client.subscribeAsync(filters, { qos: 0 });
    return test;
  }

  async end(): Promise<void> {
    await this.client.endAsync(true).catch(() => undefined);
  }

  /** The next message matching (registered now: call before publishing what causes it). */
  next(test: (m: Received) => boolean, timeoutMs = 10_000, what = 'a message'): Promise<Received> {
    return new Promise<Received>((resolve, reject) => {
      const waiter: Waiter = {
        test,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** The first message already received or still to come that matches. */
  async first(test: (m: Received) => boolean, timeoutMs = 10_000, what = 'a message'): Promise<Received> {
    const found = this.received.find(test);
    return found ?? this.next(test, timeoutMs, what);
  }

  publish(
    topic: string,
    payload: string | Buffer,
    opts: IClientPublishOptions = { qos: 1 },
  ): Promise<unknown> {
    return this.client.publishAsync(topic, payload, opts);
  }

  /**
   * Publishes a command and resolves with the next result on `resultTopic` (with `requestId`:
   * the result carrying it), or undefined when none comes within `timeoutMs`.
   */
  async command(
    topic: string,
    payload: string | Buffer,
    resultTopic: string,
    opts: { requestId?: string; timeoutMs?: number; publish?: IClientPublishOptions } = {},
  ): Promise<ResultPayload | undefined> {
    const result = this.next(
      (m) =>
        m.topic === resultTopic &&
        (opts.requestId === undefined || parseJson<ResultPayload>(m.payload)?.requestId === opts.requestId),
      opts.timeoutMs ?? 5_000,
      `result on ${resultTopic}`,
    ).then(
      (m) => parseJson<ResultPayload>(m.payload),
      () => undefined,
    );
    await this.publish(topic, payload, opts.publish ?? { qos: 1 });
    return result;
  }

  /** The latest retained-or-live state received for a loop. */
  latestState(stateTopic: string): StatePayload | undefined {
    return this.latestStateMessage(stateTopic)?.state;
  }

  /** The latest state of a loop with its arrival time (wall clock of this process). */
  latestStateMessage(stateTopic: string): { state: StatePayload; atMs: number } | undefined {
    for (let i = this.received.length - 1; i >= 0; i--) {
      const m = this.received[i]!;
      if (m.topic !== stateTopic || m.payload.byteLength === 0) continue;
      const state = parseJson<StatePayload>(m.payload);
      if (state) return { state, atMs: m.atMs };
    }
    return undefined;
  }

  /** Waits for a state of a loop (already received after `sinceMs`, or to come) matching. */
  async state(
    stateTopic: string,
    test: (s: StatePayload) => boolean,
    opts: { timeoutMs?: number; sinceMs?: number; what?: string } = {},
  ): Promise<{ state: StatePayload; atMs: number }> {
    const match = (m: Received) => {
      if (m.topic !== stateTopic || m.atMs < (opts.sinceMs ?? 0)) return false;
      const s = parseJson<StatePayload>(m.payload);
      return s !== undefined && test(s);
    };
    const m = await this.first(match, opts.timeoutMs ?? 10_000, opts.what ?? `state on ${stateTopic}`);
    return { state: parseJson<StatePayload>(m.payload)!, atMs: m.atMs };
  }
}

export function parseJson<T>(payload: Buffer): T | undefined {
  try {
    return JSON.parse(payload.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** The condition of a state by type, if present. */
export function condition(state: StatePayload | undefined, type: string) {
  return state?.conditions.find((c) => c.type === type);
}
