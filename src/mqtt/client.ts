import { createRequire } from 'node:module';
import type { IConnackPacket, MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { redactUrl } from '../redact.js';
import { connackRefusal, errorMessage, refusalHint, withTimeout } from './connection-errors.js';
import { clientOptionsFor, type MqttSettings } from './connection-settings.js';
import { DEFAULT_RECONNECT_BACKOFF, type ReconnectBackoff, reconnectDelayMs } from './reconnect.js';
import { type MessageHandler, SessionSubscriptions } from './session-subscriptions.js';

export type { MqttSettings } from './connection-settings.js';
export { MAX_INCOMING_PACKET_BYTES, RECEIVE_MAXIMUM } from './connection-settings.js';
export type { MessageHandler } from './session-subscriptions.js';

export { topicMatchesFilter } from './topic-filter.js';

/**
 * MQTT.js and its dependencies (~100 modules, ~8 MB of RSS) are loaded when a connection starts:
 * a node without a broker never carries them. Its CommonJS build, so synchronously.
 */
const loadMqtt = (): typeof import('mqtt') => createRequire(import.meta.url)('mqtt') as typeof import('mqtt');

/** Tuning of {@link MqttConnection}; defaults suit a daemon, tests pass small values. */
export interface MqttConnectionOptions {
  /** Wait between reconnect attempts; default 1 s doubling to 60 s, jitter 0.2. */
  reconnect?: ReconnectBackoff;
  /** Randomness for the jitter, values in [0, 1); default `Math.random`. */
  random?: () => number;
  /**
   * A QoS 1 publish not acknowledged within this time rejects, ms; default 10000. The message
   * stays in the session and may still be delivered after a reconnect (QoS 1: at least once).
   */
  publishTimeoutMs?: number;
  /** `stop()` gives up on a clean goodbye (retained `offline`, DISCONNECT) after this, ms; default 3000. */
  stopTimeoutMs?: number;
}

/** An established connection that ended (not by our `stop()`). */
export interface ConnectionDrop {
  /**
   * The MQTT 5 DISCONNECT reason code the broker sent before closing (142: session taken over,
   * the same client id connected elsewhere), or undefined (MQTT 3.1.1, a lost socket).
   */
  reasonCode: number | undefined;
  /** How long the connection had been up, ms. */
  upMs: number;
  /**
   * The connection had been made at the first attempt after the one before ended: the broker
   * was up all along (as when another client with our client id takes turns with us), not
   * restarting.
   */
  atFirstAttempt: boolean;
}

/**
 * The daemon's one MQTT connection. Connects in the background and keeps reconnecting with
 * capped exponential backoff; nothing else ever waits for it (regulation runs without a
 * broker). Publishes `online`/`offline` (retained, QoS 1, last will) on `<baseTopic>/availability`,
 * remembers subscriptions and makes sure the broker has them after every reconnect, and tells
 * `onConnect` listeners on every (re)connect so they republish retained state.
 *
 * MQTT.js's own reconnect is off (`reconnectPeriod: 0`): it only knows a fixed interval and
 * gives up for good after a refused CONNACK (bad password), while a daemon should keep trying
 * (the broker's password file may be fixed later) at a slower pace.
 */
export class MqttConnection {
  private client: MqttClient | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Failed attempts (or lost connection) since the last successful connect. */
  private attempt = 0;
  /** The current failure streak has been logged at warn; later failures go to debug. */
  private streakLogged = false;
  /**
   * CONNACK refusals (bad password, not authorized, banned…) logged at warn in this streak. A
   * refusal is worth its own warning even when the streak began otherwise (connection lost,
   * then the broker came back with a new password file): it needs a person, not patience.
   */
  private readonly refusalsLogged = new Set<string>();
  /** The connection that just closed had been established (CONNACK accepted). */
  private wasUp = false;
  /** When the current connection was established (Date.now()), for ConnectionDrop.upMs. */
  private upSinceMs = 0;
  /** The current connection was made at the first attempt (ConnectionDrop.atFirstAttempt). */
  private upAtFirstAttempt = true;
  /** The reason code of the broker's DISCONNECT on the current connection, if it sent one. */
  private disconnectReason: number | undefined;
  private readonly dropListeners: Array<(drop: ConnectionDrop) => void> = [];
  private stopped = false;
  /**
   * Publishes whose callback has not come: a forced end never calls them, so stop() settles
   * them (and their timeouts are cleared) instead of leaving each waiting its full timeout.
   */
  private readonly unsettled = new Set<(error?: Error) => void>();
  private readonly connectListeners: Array<() => void> = [];
  /** Holds the reading of the next packet until it calls `resume` (see `throttleReceive`). */
  private receiveGate: ((resume: () => void) => void) | undefined;
  /** What to subscribe, and what the broker's session holds of it (session-subscriptions.ts). */
  private readonly subscriptions: SessionSubscriptions;
  private readonly backoff: ReconnectBackoff;
  private readonly random: () => number;
  private readonly publishTimeoutMs: number;
  private readonly stopTimeoutMs: number;
  private readonly availabilityTopic: string;
  /** The URL without credentials, for logs. */
  private readonly safeUrl: string;

  constructor(
    private readonly settings: MqttSettings,
    private readonly logger: Logger,
    opts: MqttConnectionOptions = {},
  ) {
    this.backoff = opts.reconnect ?? DEFAULT_RECONNECT_BACKOFF;
    this.random = opts.random ?? Math.random;
    this.publishTimeoutMs = opts.publishTimeoutMs ?? 10_000;
    this.stopTimeoutMs = opts.stopTimeoutMs ?? 3_000;
    this.availabilityTopic = `${settings.baseTopic}/availability`;
    this.safeUrl = redactUrl(settings.url);
    this.subscriptions = new SessionSubscriptions(logger);
  }

  /** True while a session is established (CONNACK received, socket open). */
  get connected(): boolean {
    return this.client?.connected === true;
  }

  /**
   * Starts connecting in the background and returns at once. An absent or refusing broker is
   * logged and retried, never thrown; an unparsable URL throws (a configuration error).
   */
  start(): void {
    if (this.stopped) throw new Error('MqttConnection: start() after stop()');
    if (this.client) return;
    const client = loadMqtt().connect(
      this.settings.url,
      clientOptionsFor(this.settings, this.availabilityTopic),
    );
    this.client = client;
    client.on('connect', (connack) => this.handleConnect(connack));
    client.on('close', () => this.handleClose());
    client.on('error', (error) => this.noteFailure('MQTT connection failed', error));
    client.on('disconnect', (packet) => {
      // MQTT 5 brokers say why they drop us (session taken over by the same client id, …).
      this.disconnectReason = packet.reasonCode ?? 0;
      this.noteFailure('MQTT broker disconnected us', new Error(`reason code ${packet.reasonCode ?? 0}`));
    });
    client.on('message', (topic, payload, packet) => this.subscriptions.dispatch(topic, payload, packet));
    // MQTT.js reads the next packet (and acknowledges a QoS 1 one) only once this calls back:
    // its documented hook for backpressure.
    client.handleMessage = (_packet, callback) => {
      const gate = this.receiveGate;
      if (gate) gate(() => callback());
      else callback();
    };
  }

  /**
   * Backpressure on what the broker sends: after each received message, `gate` is asked before
   * the next packet is read; it calls `resume` at once, or later when the consumer has caught
   * up. Meanwhile the socket fills and the broker holds the rest (Mosquitto queues up to
   * `max_queued_messages` per client and drops beyond), so a flood does not pile up in our
   * memory nor run as one long stall of the event loop. Keep the wait short: acknowledgements
   * of our own publishes and keepalive answers wait too.
   */
  throttleReceive(gate: (resume: () => void) => void): void {
    this.receiveGate = gate;
  }

  /**
   * Says goodbye: retained `offline` on the availability topic, then a clean DISCONNECT (so the
   * broker does not send the will). Gives up on the goodbye after `stopTimeoutMs` and closes
   * the socket. Stops reconnecting. Never rejects.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const client = this.client;
    if (!client) return;
    const deadline = Date.now() + this.stopTimeoutMs;
    if (client.connected) {
      try {
        await withTimeout(
          this.publish(this.availabilityTopic, 'offline', { qos: 1, retain: true }),
          this.stopTimeoutMs,
        );
      } catch (error) {
        this.logger.debug({ err: errorMessage(error) }, 'MQTT offline message not confirmed');
      }
    }
    // What is still unacknowledged now never will be: settled here, before the end (whose
    // callback a broker that stopped answering may never give).
    for (const done of [...this.unsettled])
      done(new Error('MQTT disconnected before the broker acknowledged it'));
    const remainingMs = Math.max(0, deadline - Date.now());
    const ended = new Promise<void>((resolve) => client.end(!client.connected, {}, () => resolve()));
    try {
      await withTimeout(ended, remainingMs);
    } catch {
      await new Promise<void>((resolve) => client.end(true, {}, () => resolve()));
    }
    this.logger.info({ url: this.safeUrl }, 'MQTT disconnected');
  }

  /**
   * Calls `listener` after every successful (re)connect, after `online` and the subscriptions
   * were sent: the place to republish discovery and retained state. A throwing listener is logged.
   */
  onConnect(listener: () => void): void {
    this.connectListeners.push(listener);
  }

  /**
   * Calls `listener` each time an established connection ends other than by `stop()`, with the
   * broker's reason if it gave one (see ConnectionDrop). A throwing listener is logged.
   */
  onDrop(listener: (drop: ConnectionDrop) => void): void {
    this.dropListeners.push(listener);
  }

  /**
   * Publishes now, or rejects at once when not connected: nothing is queued offline (the
   * daemon republishes the current state on reconnect, which is worth more than a backlog).
   * QoS 0 resolves once written to the socket, QoS 1 on PUBACK (or rejects after `publishTimeoutMs`).
   */
  publish(topic: string, payload: string | Buffer, opts: { qos: 0 | 1; retain: boolean }): Promise<void> {
    const client = this.client;
    if (!client?.connected) {
      return Promise.reject(new Error(`MQTT not connected: not published to ${topic}`));
    }
    const sent = new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        this.unsettled.delete(done);
        if (error) reject(error);
        else resolve();
      };
      this.unsettled.add(done);
      client.publish(topic, payload, { qos: opts.qos, retain: opts.retain }, (error) => done(error));
    });
    return opts.qos === 0
      ? sent
      : withTimeout(sent, this.publishTimeoutMs, `MQTT publish to ${topic} not acknowledged`);
  }

  /**
   * Subscribes `handler` to `topicFilter` (wildcards `+` and `#` allowed), now if connected and
   * again after every reconnect on which the broker lost our session. Handlers of overlapping
   * filters each get a matching message. Several handlers may share a filter.
   */
  subscribe(topicFilter: string, qos: 0 | 1, handler: MessageHandler): void {
    this.subscriptions.add(topicFilter, qos, handler);
    if (this.connected) this.subscriptions.subscribeMissing(this.client);
  }

  /**
   * Removes `handler` (the function given to `subscribe`) from `topicFilter`; the filter's
   * other handlers keep receiving. The last one gone, the filter is no longer subscribed after
   * a reconnect and, when connected, the broker is sent an UNSUBSCRIBE. Offline, a persistent
   * session may still deliver the filter after the next connect: no handler matches, so those
   * messages are dropped.
   */
  unsubscribe(topicFilter: string, handler: MessageHandler): void {
    this.subscriptions.remove(topicFilter, handler, this.client);
  }

  private handleConnect(connack: IConnackPacket): void {
    const client = this.client;
    if (!client) return;
    // `attempt` counts the closes since the last connect: 1 is the drop itself, no failure.
    this.upAtFirstAttempt = this.attempt <= 1;
    this.attempt = 0;
    this.streakLogged = false;
    this.refusalsLogged.clear();
    this.wasUp = true;
    this.upSinceMs = Date.now();
    this.disconnectReason = undefined;
    // A broker restart (without persistence) or an expired session forgets our subscriptions.
    if (!connack.sessionPresent) this.subscriptions.sessionLost();
    // From now on resume this session on reconnect (see `clean` in connection-settings.ts):
    // MQTT.js builds each CONNECT from its options, so the change applies to the next attempt.
    client.options.clean = false;
    this.logger.info(
      {
        url: this.safeUrl,
        clientId: this.settings.clientId,
        sessionPresent: connack.sessionPresent === true,
      },
      'MQTT connected',
    );
    this.publish(this.availabilityTopic, 'online', { qos: 1, retain: true }).catch((error: unknown) =>
      this.logger.debug({ err: errorMessage(error) }, 'MQTT online message not confirmed'),
    );
    this.subscriptions.subscribeMissing(client);
    for (const listener of this.connectListeners) {
      try {
        listener();
      } catch (error) {
        this.logger.error({ err: errorMessage(error) }, 'MQTT onConnect listener failed');
      }
    }
  }

  /** Every connection attempt ends here once (refused, failed or lost): plan the next one. */
  private handleClose(): void {
    if (this.stopped || this.reconnectTimer) return;
    if (this.wasUp) {
      this.noteFailure('MQTT connection lost', undefined);
      this.tellDrop({
        reasonCode: this.disconnectReason,
        upMs: Date.now() - this.upSinceMs,
        atFirstAttempt: this.upAtFirstAttempt,
      });
    }
    this.wasUp = false;
    this.disconnectReason = undefined;
    this.attempt += 1;
    const delayMs = reconnectDelayMs(this.attempt, this.backoff, this.random);
    this.logger.debug({ attempt: this.attempt, delayMs: Math.round(delayMs) }, 'MQTT reconnect scheduled');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      const client = this.client;
      if (this.stopped || !client) return;
      // Pass the current stores: reconnect() otherwise starts empty ones, and QoS 1 messages
      // in flight when the connection broke would never be resent nor their callbacks called.
      client.reconnect({ incomingStore: client.incomingStore, outgoingStore: client.outgoingStore });
    }, delayMs);
    // Reconnecting alone must not keep a process alive that has nothing else to do.
    this.reconnectTimer.unref();
  }

  private tellDrop(drop: ConnectionDrop): void {
    for (const listener of this.dropListeners) {
      try {
        listener(drop);
      } catch (error) {
        this.logger.error({ err: errorMessage(error) }, 'MQTT onDrop listener failed');
      }
    }
  }

  /**
   * Logs the first failure of a streak at warn (someone should look), and the first refusal of
   * each kind by the broker (CONNACK with a reason code: bad user name or password, not
   * authorized…) at warn with its reason; the rest at debug.
   */
  private noteFailure(msg: string, error: Error | undefined): void {
    if (this.stopped) return;
    const fields = { url: this.safeUrl, ...(error ? { err: errorMessage(error) } : {}) };
    const refusal = error ? connackRefusal(error) : undefined;
    if (refusal !== undefined && !this.refusalsLogged.has(refusal)) {
      this.refusalsLogged.add(refusal);
      this.streakLogged = true;
      this.logger.warn(fields, `MQTT broker refused the connection: ${refusal}; ${refusalHint(error)}`);
      return;
    }
    if (this.streakLogged) {
      this.logger.debug(fields, msg);
      return;
    }
    this.streakLogged = true;
    this.logger.warn(fields, `${msg}; retrying in the background`);
  }
}
