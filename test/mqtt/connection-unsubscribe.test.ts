/**
 * MqttConnection.unsubscribe against a real Mosquitto: a driver that stops takes its handler
 * off the shared connection; the filter's other handlers keep receiving, and the broker is
 * sent an UNSUBSCRIBE once the last one is gone.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import mqtt, { type MqttClient, type Packet } from 'mqtt';
import { MqttConnection, type MqttConnectionOptions } from '../../src/mqtt/client.js';
import { sleep, waitUntil } from '../integration/helpers.js';
import { startMosquitto } from '../integration/mosquitto.js';
import { silentLogger } from '../support/logger.js';

type UnsubscribePacket = Extract<Packet, { cmd: 'unsubscribe' }>;
const isUnsubscribe = (packet: Packet): packet is UnsubscribePacket => packet.cmd === 'unsubscribe';

const BASE = 'homeostat/unsub';
const TOPIC = `${BASE}/stat/plug/POWER`;
const FAST: MqttConnectionOptions = {
  reconnect: { initialMs: 20, maxMs: 100, jitter: 0.2 },
  publishTimeoutMs: 2_000,
  stopTimeoutMs: 2_000,
};

/** A broker, a started connection to it, the packets it sends, and a device client that publishes. */
async function setup(t: TestContext) {
  const broker = await startMosquitto();
  t.after(() => broker.dispose());
  const conn = new MqttConnection(
    { url: broker.url, clientId: `homeostat-unsub-${process.pid}`, protocolVersion: 5, baseTopic: BASE },
    silentLogger,
    FAST,
  );
  t.after(() => conn.stop());
  conn.start();
  await waitUntil(() => conn.connected, { what: 'the connection' });
  // The MQTT.js client is private: reached here only to see which packets go to the broker.
  const client = (conn as unknown as { client: MqttClient }).client;
  const sent: Packet[] = [];
  client.on('packetsend', (packet) => sent.push(packet));
  const device = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  t.after(() => device.endAsync(true));
  return { conn, sent, publish: (payload: string) => device.publishAsync(TOPIC, payload, { qos: 1 }) };
}

describe('MqttConnection.unsubscribe', () => {
  test('given two handlers on one topic, when one unsubscribes, then the other keeps receiving and the broker keeps the subscription', async (t) => {
    const { conn, sent, publish } = await setup(t);
    const old: string[] = [];
    const replacement: string[] = [];
    const oldHandler = (_topic: string, payload: Buffer) => void old.push(payload.toString());
    conn.subscribe(TOPIC, 0, oldHandler);
    conn.subscribe(TOPIC, 0, (_topic, payload) => void replacement.push(payload.toString()));
    await waitUntil(() => sent.some((p) => p.cmd === 'subscribe'), { what: 'SUBSCRIBE sent' });
    await sleep(100); // the SUBACK
    await publish('ON');
    await waitUntil(() => replacement.length === 1 && old.length === 1, { what: 'both handlers receive' });

    conn.unsubscribe(TOPIC, oldHandler);
    await publish('OFF');
    await waitUntil(() => replacement.length === 2, { what: 'the remaining handler receives' });
    assert.deepEqual(old, ['ON']);
    assert.deepEqual(replacement, ['ON', 'OFF']);
    assert.equal(sent.filter(isUnsubscribe).length, 0, 'the filter is still wanted');
  });

  test('when the last handler unsubscribes, then the broker is sent an UNSUBSCRIBE and nothing more is delivered', async (t) => {
    const { conn, sent, publish } = await setup(t);
    const received: string[] = [];
    const handler = (_topic: string, payload: Buffer) => void received.push(payload.toString());
    conn.subscribe(TOPIC, 0, handler);
    await waitUntil(() => sent.some((p) => p.cmd === 'subscribe'), { what: 'SUBSCRIBE sent' });
    await sleep(100);
    await publish('ON');
    await waitUntil(() => received.length === 1, { what: 'the handler receives' });

    conn.unsubscribe(TOPIC, handler);
    const unsubscribes = await waitUntil(
      () => {
        const found = sent.filter(isUnsubscribe);
        return found.length > 0 ? found : undefined;
      },
      { what: 'UNSUBSCRIBE sent' },
    );
    assert.deepEqual(unsubscribes[0]!.unsubscriptions, [TOPIC]);
    await publish('OFF');
    await sleep(100);
    assert.deepEqual(received, ['ON']);
    conn.unsubscribe(TOPIC, handler); // unknown now: nothing happens
    assert.equal(sent.filter(isUnsubscribe).length, 1);
  });
});
