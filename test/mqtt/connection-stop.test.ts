/**
 * MqttConnection.stop settles what the broker never acknowledged: a forced end never calls a
 * QoS 1 publish's callback, so each such publish used to wait out its own timeout (10 s by
 * default), holding the process that long after the stop.
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { MqttConnection } from '../../src/mqtt/client.js';
import { waitUntil } from '../integration/helpers.js';
import { silentLogger } from '../support/logger.js';

/** CONNACK of MQTT 3.1.1, session not present, accepted. */
const CONNACK = Buffer.from([0x20, 0x02, 0x00, 0x00]);

/** A broker that accepts the connection and then answers nothing: no PUBACK, no SUBACK. */
async function silentBroker(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('data', () => socket.write(CONNACK));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `mqtt://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

test('given a QoS 1 publish the broker never acknowledges, when the connection stops, then the stop settles it (rejected, saying so) instead of leaving it to its 60 s timeout', async (t) => {
  const broker = await silentBroker();
  t.after(() => broker.close());
  const conn = new MqttConnection(
    { url: broker.url, clientId: 'homeostat-stop-test', protocolVersion: 4, baseTopic: 'homeostat/stop' },
    silentLogger,
    { reconnect: { initialMs: 20, maxMs: 100, jitter: 0 }, publishTimeoutMs: 60_000, stopTimeoutMs: 200 },
  );
  conn.start();
  await waitUntil(() => conn.connected, { what: 'the connection' });
  let settled: Error | 'resolved' | undefined;
  conn.publish('homeostat/stop/room/state', '{}', { qos: 1, retain: true }).then(
    () => {
      settled = 'resolved';
    },
    (error: Error) => {
      settled = error;
    },
  );

  await conn.stop();
  await new Promise<void>((resolve) => setImmediate(resolve)); // the rejection's handlers run

  assert.ok(settled instanceof Error, `the publish is settled by the stop: ${String(settled)}`);
  assert.match(settled.message, /disconnected before the broker acknowledged it/);
});
