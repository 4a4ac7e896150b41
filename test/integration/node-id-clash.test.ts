/**
 * Two nodes with the same node id on one broker, with a real Mosquitto: each sees
 * the other (its client id taken over, or its instance record) and logs an error with the fix;
 * an event is recorded; regulation goes on. Distinct node ids: nothing is said.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { MqttConnectionOptions } from '../../src/mqtt/client.js';
import { type RecordingLogger, recordingLogger } from '../support/logger.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { demoConfigText, sleep, waitUntil } from './helpers.js';
import { brokerFor } from './mosquitto.js';

/** Reconnects within a second or so: the two take turns on a shared client id meanwhile. */
const CONNECTION: MqttConnectionOptions = {
  reconnect: { initialMs: 200, maxMs: 1_000, jitter: 0.2 },
  publishTimeoutMs: 2_000,
  stopTimeoutMs: 2_000,
};

const configText = (brokerUrl: string, nodeId: string, mqtt: Record<string, unknown> = {}) =>
  demoConfigText((doc) => {
    doc.setIn(['node', 'id'], nodeId);
    doc.setIn(['mqtt', 'url'], brokerUrl);
    for (const [key, value] of Object.entries(mqtt)) doc.setIn(['mqtt', key], value);
  });

interface Started {
  run: TestNode;
  log: RecordingLogger;
}

async function startNode(t: { after(fn: () => unknown): void }, dir: string, name: string, text: string) {
  const log = recordingLogger({ level: 'info' });
  const run = await startTestNode(text, path.join(dir, `${name}.db`), {
    logger: log.logger,
    mqtt: { connection: CONNECTION },
  });
  t.after(() => run.stop());
  return { run, log } satisfies Started;
}

const clashErrors = (node: Started) =>
  node.log
    .messages(50)
    .filter((msg) => /node id twin/.test(msg) && /give each node its own node\.id/.test(msg));

const table: Array<[what: string, mqtt: Record<string, unknown>, sign: RegExp]> = [
  // Mosquitto 2.0 closes a taken-over connection without DISCONNECT 142, whatever the protocol.
  [
    'the same default client id (MQTT 5)',
    {},
    /^another client with client id homeostat-twin is on this broker \(the broker closed our connection right after connecting 3 times in a row\)/,
  ],
  [
    'the same default client id (MQTT 3.1.1: closed right after connecting)',
    { protocolVersion: 4 },
    /^another client with client id homeostat-twin is on this broker \(the broker closed our connection right after connecting 3 times in a row\)/,
  ],
];

for (const [what, mqtt, sign] of table) {
  test(`given two nodes with node id "twin" and ${what}, then both log the clash with the fix, record an event, and regulate on`, async (t) => {
    const broker = await brokerFor(t);
    const dir = tempDir(t, 'homeostat-clash-');
    const text = configText(broker.url, 'twin', mqtt);
    const first = await startNode(t, dir, 'first', text);
    const second = await startNode(t, dir, 'second', text);
    await waitUntil(() => clashErrors(first).length > 0 && clashErrors(second).length > 0, {
      what: 'both nodes to log the clash',
      timeoutMs: 20_000,
    });
    for (const node of [first, second]) {
      assert.match(clashErrors(node)[0] ?? '', sign);
      assert.ok(node.run.store.desired.events({ kind: 'node-id-clash' }).length >= 1, 'an event is recorded');
    }
    await sleep(1_000);
    assert.ok(clashErrors(first).length <= 2, `once per streak: ${clashErrors(first).join('\n')}`);
    // Regulation is not touched: the loops keep cycling.
    const before = first.run.daemon.statuses().find((s) => s.loop === 'room')?.updatedAtMs ?? 0;
    await first.run.clock.advance(60_000);
    const room = first.run.daemon.statuses().find((s) => s.loop === 'room');
    assert.ok((room?.updatedAtMs ?? 0) > before);
    // Shown where a person looks (status, dashboard, the retained state): NodeIdUnique False.
    const unique = room?.conditions.find((c) => c.type === 'NodeIdUnique');
    assert.equal(unique?.status, 'False', JSON.stringify(room?.conditions));
    assert.equal(unique?.reason, 'NodeIdClash');
    assert.match(unique?.message ?? '', /give each node its own node\.id/);
  });
}

test('given two nodes with node id "twin" but their own client ids, then their instance records show the clash, with host, pid and start', async (t) => {
  const broker = await brokerFor(t);
  const dir = tempDir(t, 'homeostat-clash-');
  const first = await startNode(t, dir, 'first', configText(broker.url, 'twin', { clientId: 'twin-a' }));
  const second = await startNode(t, dir, 'second', configText(broker.url, 'twin', { clientId: 'twin-b' }));
  await waitUntil(() => clashErrors(first).length > 0 && clashErrors(second).length > 0, {
    what: 'both nodes to log the clash',
    timeoutMs: 20_000,
  });
  for (const node of [first, second]) {
    assert.match(
      clashErrors(node)[0] ?? '',
      new RegExp(
        `^another homeostat with node id twin is on this broker \\(host .+, pid ${process.pid}, started at \\d{4}-.+\\): give each node its own node\\.id in the config$`,
      ),
    );
  }
});

test('given two nodes with their own node ids, then no clash is said', async (t) => {
  const broker = await brokerFor(t);
  const dir = tempDir(t, 'homeostat-clash-');
  const first = await startNode(t, dir, 'first', configText(broker.url, 'north'));
  const second = await startNode(t, dir, 'second', configText(broker.url, 'south'));
  await waitUntil(() => first.run.node.connection?.connected && second.run.node.connection?.connected, {
    what: 'both connected',
  });
  await sleep(3_000);
  for (const node of [first, second]) {
    assert.deepEqual(node.log.messages(50), []);
    assert.deepEqual(node.run.store.desired.events({ kind: 'node-id-clash' }), []);
    const conditions = node.run.daemon.statuses().flatMap((s) => s.conditions.map((c) => c.type));
    assert.ok(!conditions.includes('NodeIdUnique'), 'no clash seen: no condition about it');
  }
});

test('given one node and a broker restarting three times in a row, then no clash is said (its reconnects were refused first)', async (t) => {
  const broker = await brokerFor(t);
  const dir = tempDir(t, 'homeostat-clash-');
  const node = await startNode(t, dir, 'only', configText(broker.url, 'twin'));
  for (let restart = 0; restart < 3; restart++) {
    await waitUntil(() => node.run.node.connection?.connected, { what: 'connected' });
    await broker.stop();
    // Long enough for a reconnect attempt to be refused.
    await sleep(600);
    await broker.start();
  }
  await waitUntil(() => node.run.node.connection?.connected, { what: 'connected again' });
  assert.deepEqual(clashErrors(node), []);
});
