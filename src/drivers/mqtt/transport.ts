/**
 * What an MQTT driver needs from a broker connection, and nothing more: the daemon's one
 * `MqttConnection` satisfies it (one connection per node, shared by the bridge and every
 * driver), and unit tests pass a fake that records publishes and delivers messages.
 * Drivers never import MQTT.js.
 */

/** Receives a message of a subscription. `packet.retain`: delivered from the broker's retained store. */
export type TransportHandler = (topic: string, payload: Buffer, packet: { retain: boolean }) => void;

/** Options of a publish: QoS 0 or 1, retained or not. */
export interface PublishOptions {
  qos: 0 | 1;
  retain: boolean;
}

export interface MqttTransport {
  /** Subscribes `handler` to `topicFilter`, now if connected and again after every reconnect. */
  subscribe(topicFilter: string, qos: 0 | 1, handler: TransportHandler): void;
  /**
   * Removes `handler` (the same function given to `subscribe`) from `topicFilter`; other
   * handlers of the filter keep receiving. Once a filter has no handler left, the broker is
   * told to stop sending it. A stopped driver calls it, so a driver replaced on reload leaves
   * nothing behind on the shared connection. Unknown filter or handler: nothing happens.
   */
  unsubscribe(topicFilter: string, handler: TransportHandler): void;
  /** Publishes now, or rejects at once when offline: nothing is queued (the core retries). */
  publish(topic: string, payload: string | Buffer, opts: PublishOptions): Promise<void>;
  /** True while a session with the broker is established. */
  readonly connected: boolean;
}

/**
 * A transport that is never connected: every publish rejects with `reason`, subscriptions
 * never deliver. For MQTT drivers built without a broker (MQTT disabled by a bad password
 * file, a finalizer replaying an old config): they report unknown and fail their writes,
 * so loops go safe and say why, instead of the daemon refusing to start.
 */
export function offlineTransport(reason: string): MqttTransport {
  return {
    connected: false,
    subscribe: () => {},
    unsubscribe: () => {},
    publish: (topic) => Promise.reject(new Error(`${reason}: not published to ${topic}`)),
  };
}

/**
 * One driver's subscription on the shared connection: made once, never after the driver
 * stopped, and at stop only this driver's handler is removed (a driver replaced on reload
 * leaves nothing behind; another one on the same topic keeps receiving). Stopping is final.
 */
export class TopicSubscription {
  private subscribed = false;
  #stopped = false;

  constructor(
    private readonly transport: MqttTransport,
    private readonly topic: string,
    private readonly handler: TransportHandler,
  ) {}

  /** The driver stopped: nothing it receives or is asked to do counts any more. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Subscribes at QoS 0 (no replayed backlog of old states); true when it did now. */
  start(): boolean {
    if (this.subscribed || this.#stopped) return false;
    this.subscribed = true;
    this.transport.subscribe(this.topic, 0, this.handler);
    return true;
  }

  stop(): void {
    this.#stopped = true;
    if (!this.subscribed) return;
    this.subscribed = false;
    this.transport.unsubscribe(this.topic, this.handler);
  }
}
