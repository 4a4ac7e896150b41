/**
 * The subscriptions of the MQTT connection and what the broker's session holds of them: the
 * handlers per filter (kept across reconnects), the filters sent for the current session, the
 * SUBSCRIBE of those the session lacks after a connect, and the dispatch of a received message
 * to every matching handler.
 */
import type { IPublishPacket, MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { errorMessage } from './connection-errors.js';
import { levelsMatch } from './topic-filter.js';

/** Receives a message of a subscription; `packet` carries retain/dup/properties. */
export type MessageHandler = (topic: string, payload: Buffer, packet: IPublishPacket) => void;

interface Subscription {
  qos: 0 | 1;
  handlers: MessageHandler[];
  /** The filter split into levels once (every received message is matched against it). */
  levels: string[];
}

export class SessionSubscriptions {
  private readonly subscriptions = new Map<string, Subscription>();
  /** Filters the broker holds (or is being sent) for the current session. */
  private readonly sessionFilters = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Adds `handler` to `topicFilter`; a higher QoS than before is subscribed again. */
  add(topicFilter: string, qos: 0 | 1, handler: MessageHandler): void {
    const existing = this.subscriptions.get(topicFilter);
    if (existing) {
      existing.handlers.push(handler);
      if (qos > existing.qos) {
        existing.qos = qos;
        this.sessionFilters.delete(topicFilter); // subscribe again with the higher QoS
      }
    } else {
      this.subscriptions.set(topicFilter, { qos, handlers: [handler], levels: topicFilter.split('/') });
    }
  }

  /**
   * Removes `handler` from `topicFilter`. The last one gone, the filter is forgotten and, when
   * the session holds it and `client` is connected, the broker is sent an UNSUBSCRIBE.
   */
  remove(topicFilter: string, handler: MessageHandler, client: MqttClient | undefined): void {
    const subscription = this.subscriptions.get(topicFilter);
    const index = subscription?.handlers.indexOf(handler) ?? -1;
    if (!subscription || index < 0) return;
    subscription.handlers.splice(index, 1);
    if (subscription.handlers.length > 0) return;
    this.subscriptions.delete(topicFilter);
    const inSession = this.sessionFilters.delete(topicFilter);
    if (!inSession || !client?.connected) return;
    client.unsubscribe(topicFilter, (error?: Error) => {
      // Harmless: the filter has no handler, whatever the broker still sends is dropped.
      if (error)
        this.logger.debug({ filter: topicFilter, err: errorMessage(error) }, 'MQTT unsubscribe failed');
    });
  }

  /** The broker kept no session (a restart without persistence, an expired one): it has none of ours. */
  sessionLost(): void {
    this.sessionFilters.clear();
  }

  /** Subscribes `client` to every filter the session lacks. */
  subscribeMissing(client: MqttClient | undefined): void {
    if (!client?.connected) return;
    for (const [filter, { qos }] of this.subscriptions) {
      if (this.sessionFilters.has(filter)) continue;
      this.sessionFilters.add(filter);
      client.subscribe(filter, { qos }, (error, granted) => {
        const refused = granted?.find((grant) => grant.qos >= 0x80);
        if (error || refused) {
          // Lost with the connection, or refused (ACL): tried again on the next connect.
          this.sessionFilters.delete(filter);
          const reason = error ? errorMessage(error) : `reason code ${refused?.qos}`;
          this.logger.warn({ filter, err: reason }, 'MQTT subscribe failed');
        }
      });
    }
  }

  dispatch(topic: string, payload: Buffer, packet: IPublishPacket): void {
    const topicLevels = topic.split('/');
    for (const { handlers, levels } of this.subscriptions.values()) {
      if (!levelsMatch(levels, topicLevels)) continue;
      for (const handler of handlers) {
        try {
          handler(topic, payload, packet);
        } catch (error) {
          // A handler must not take the connection down: MQTT.js calls us inside its parser.
          this.logger.error({ topic, err: errorMessage(error) }, 'MQTT message handler failed');
        }
      }
    }
  }
}
