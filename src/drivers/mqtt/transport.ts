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
