import type { IClientOptions } from 'mqtt';

/** How to reach the broker, and who we are there. */
export interface MqttSettings {
  /** `mqtt://host:port` or `mqtts://host:port` (TLS). */
  url: string;
  /** Stable client id: the broker keeps our session (subscriptions, queued QoS 1) under it. */
  clientId: string;
  username?: string;
  password?: string;
  /** 5 (MQTT 5, default in the config) or 4 (MQTT 3.1.1, for old brokers). */
  protocolVersion: 4 | 5;
  /** TLS: PEM CA certificate(s) to trust instead of the system store. */
  ca?: string | Buffer;
  /** TLS client certificate and key (PEM), for brokers that require one. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Topic prefix of this node, e.g. `homeostat/demo`; availability is `<baseTopic>/availability`. */
  baseTopic: string;
}

/** MQTT keepalive, s: a dead connection is noticed within 1.5× this. */
const KEEPALIVE_S = 30;
/** How long the broker keeps our session (subscriptions, queued QoS 1) after a disconnect, s. */
const SESSION_EXPIRY_S = 3_600;
/** A broker that accepts TCP but never answers CONNECT is given up after this, ms. */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * Largest packet the broker may send us (MQTT 5 CONNECT `maximumPacketSize`), bytes. The
 * broker drops anything larger for this client (MQTT 5 §3.1.2.11.4), so one huge publish on a
 * topic we subscribe to cannot make us buffer it. The largest legitimate message is an MQTT
 * sensor's or plug's state, which the drivers accept up to 16 KiB (MAX_PAYLOAD_BYTES in
 * drivers/mqtt/payload.ts); commands are at most 1 KiB. 64 KiB leaves room for the topic and
 * properties and still lets a payload a little over 16 KiB reach the driver, which then says
 * why it refuses it instead of the message vanishing. MQTT 3.1.1 has no such property: bound
 * it on the broker (Mosquitto `message_size_limit`).
 */
export const MAX_INCOMING_PACKET_BYTES = 65_536;
/**
 * QoS 1 messages the broker may have in flight to us at once (MQTT 5 CONNECT `receiveMaximum`;
 * MQTT.js leaves the protocol's 65,535). A command flood then arrives in small reads the event
 * loop handles in a few ms each, while the broker holds the rest (Mosquitto queues up to
 * `max_queued_messages` per client, 1000 by default, and drops beyond).
 */
export const RECEIVE_MAXIMUM = 64;

/** MQTT.js options for the connection: session kept, bounded packets, our own reconnects. */
export function clientOptionsFor(settings: MqttSettings, availabilityTopic: string): IClientOptions {
  const v5 = settings.protocolVersion === 5;
  return {
    clientId: settings.clientId,
    protocolVersion: settings.protocolVersion,
    ...(settings.username !== undefined ? { username: settings.username } : {}),
    ...(settings.password !== undefined ? { password: settings.password } : {}),
    ...(settings.ca !== undefined ? { ca: settings.ca } : {}),
    ...(settings.cert !== undefined ? { cert: settings.cert } : {}),
    ...(settings.key !== undefined ? { key: settings.key } : {}),
    // The first connection of a process starts a clean session: whatever the broker queued for
    // the previous process (a fault reset or an autotune start sent while the daemon was down,
    // delivered without the retain flag) was sent before this process started and must not act.
    // MqttConnection turns `clean` off after the first CONNACK, so the session is kept across
    // the outages of one process and QoS 1 commands sent meanwhile still arrive. MQTT 5 ends a
    // session at disconnect unless sessionExpiryInterval > 0; 3.1.1 keeps a non-clean one.
    clean: true,
    ...(v5
      ? {
          properties: {
            sessionExpiryInterval: SESSION_EXPIRY_S,
            maximumPacketSize: MAX_INCOMING_PACKET_BYTES,
            receiveMaximum: RECEIVE_MAXIMUM,
          },
        }
      : {}),
    keepalive: KEEPALIVE_S,
    connectTimeout: CONNECT_TIMEOUT_MS,
    reconnectPeriod: 0, // we schedule reconnects ourselves (see the class comment)
    resubscribe: false, // and resubscribe ourselves (MQTT.js only tracks it with reconnectPeriod > 0)
    queueQoSZero: false, // the default queues QoS 0 offline without bound
    // Else mqtt-packet builds a Buffer for each of the 65,536 two-byte numbers at the first
    // packet: ~6 MB of heap (a third of the daemon's) to save a 2-byte allocation per packet.
    writeCache: false,
    will: { topic: availabilityTopic, payload: Buffer.from('offline'), qos: 1, retain: true },
  };
}
