/**
 * Connections on a real node: a client that never finishes its request headers (a slowloris)
 * cannot keep a real client out. Beyond MAX_CONNECTIONS, a newcomer closes the busiest
 * address's longest-waiting connection; beyond MAX_CONNECTIONS_PER_PEER from one address (but
 * loopback), that address's own.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { describe, test } from 'node:test';
import { MAX_CONNECTIONS_PER_PEER } from '../../src/http/lan-policy.js';
import { MAX_CONNECTIONS } from '../../src/http/server.js';
import { startApiNode } from './support.js';

/** A connection that sends half a request head and then nothing: open until the server closes it. */
function halfRequest(port: number, host = '127.0.0.1'): Promise<{ socket: Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => {
      socket.write('GET /api/loops HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      resolve({ socket, closed: new Promise((done) => socket.once('close', () => done())) });
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

describe('given every connection slot held by clients that never finish their headers', () => {
  test('then a real client is still served, and the oldest half-open connections were closed to make room', async (t) => {
    const node = await startApiNode(t);
    const port = Number(new URL(node.base).port);
    const held: Array<{ socket: Socket; closed: Promise<void> }> = [];
    for (let i = 0; i < MAX_CONNECTIONS + 10; i++) held.push(await halfRequest(port));
    t.after(() => {
      for (const { socket } of held) socket.destroy();
    });
    const answer = await fetch(`${node.base}/api/loops`, { signal: AbortSignal.timeout(5_000) });
    assert.equal(answer.status, 200);
    // The first ones in were the first out: the 10 over the limit, then one for the client.
    const firstClosed = await Promise.race([
      held[0]!.closed.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 2_000)),
    ]);
    assert.equal(firstClosed, true, 'the oldest half-open connection was closed');
    assert.equal(held.at(-1)!.socket.destroyed, false, 'the newest half-open connection is still open');
  });
});

/** This machine's first non-loopback IPv4 address: connecting to it, the server sees another machine. */
const LAN_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

describe('given one address off loopback opening more connections than its share', {
  ...(LAN_ADDRESS ? {} : { skip: 'no non-loopback IPv4 address on this machine to connect from' }),
}, () => {
  test('then it keeps at most MAX_CONNECTIONS_PER_PEER, its oldest closed first, and the pool is not full for anyone else', async (t) => {
    const node = await startApiNode(t, { http: { host: '0.0.0.0', port: 0 } });
    const port = Number(new URL(node.base).port);
    const held: Array<{ socket: Socket; closed: Promise<void> }> = [];
    t.after(() => {
      for (const { socket } of held) socket.destroy();
    });
    for (let i = 0; i < MAX_CONNECTIONS_PER_PEER + 4; i++) held.push(await halfRequest(port, LAN_ADDRESS));
    // The server closes the excess as each newcomer comes: wait for the closes to arrive.
    await Promise.all(held.slice(0, 4).map((h) => h.closed));
    assert.deepEqual(
      held.map((h) => h.socket.destroyed),
      [...new Array(4).fill(true), ...new Array(MAX_CONNECTIONS_PER_PEER).fill(false)],
    );
    assert.equal(node.node.http?.connections.size, MAX_CONNECTIONS_PER_PEER);
    const answer = await fetch(`${node.base}/api/loops`, { signal: AbortSignal.timeout(5_000) });
    assert.equal(answer.status, 200);
  });
});
