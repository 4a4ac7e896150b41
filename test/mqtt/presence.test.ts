import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConnectionDrop, MessageHandler } from '../../src/mqtt/client.js';
import {
  type InstanceRecord,
  KICKED_MS,
  type NodeIdClash,
  NodePresence,
  parseRecord,
  SESSION_TAKEN_OVER,
} from '../../src/mqtt/presence.js';
import { LogLevel, recordingLogger } from '../support/logger.js';

const TOPIC = 'homeostat/twin/instance';
const SELF: InstanceRecord = {
  instance: 'self-1',
  pid: 100,
  host: 'pi-a',
  startedAt: '2026-11-30T16:00:00.000Z',
};
const OTHER: InstanceRecord = {
  instance: 'other-1',
  pid: 200,
  host: 'pi-b',
  startedAt: '2026-11-30T16:05:00.000Z',
};

/** A fake connection: records publishes, lets the test deliver messages, connects and drops. */
function harness(opts: { quietMs?: number } = {}) {
  const log = recordingLogger();
  let handler: MessageHandler | undefined;
  const connectListeners: Array<() => void> = [];
  const dropListeners: Array<(drop: ConnectionDrop) => void> = [];
  const published: string[] = [];
  const clashes: NodeIdClash[] = [];
  let cleared = 0;
  const presence = new NodePresence({
    connection: {
      subscribe: (topic, _qos, h) => {
        assert.equal(topic, TOPIC);
        handler = h;
      },
      publish: async (topic, payload, publishOpts) => {
        assert.deepEqual([topic, publishOpts], [TOPIC, { qos: 1, retain: true }]);
        published.push(String(payload));
      },
      onConnect: (listener) => connectListeners.push(listener),
      onDrop: (listener) => dropListeners.push(listener),
    },
    topic: TOPIC,
    nodeId: 'twin',
    clientId: 'homeostat-twin',
    self: SELF,
    logger: log.logger,
    republishEveryMs: 60_000,
    quietMs: opts.quietMs ?? 60_000,
    onClash: (clash) => clashes.push(clash),
    onClear: () => cleared++,
  });
  presence.start();
  return {
    presence,
    published,
    clashes,
    cleared: () => cleared,
    errors: () => log.messages(LogLevel.error),
    infos: () => log.atLevel(LogLevel.info).map((r) => r.msg),
    connect: () => {
      for (const listener of connectListeners) listener();
    },
    receive: (record: InstanceRecord | string) =>
      handler?.(
        TOPIC,
        Buffer.from(typeof record === 'string' ? record : JSON.stringify(record)),
        {} as never,
      ),
    drop: (drop: ConnectionDrop) => {
      for (const listener of dropListeners) listener(drop);
    },
  };
}

describe('NodePresence: another instance on <base>/instance', () => {
  test('given our record came back, when another instance publishes, then one error names it and the fix, once', (t) => {
    const h = harness();
    t.after(() => h.presence.stop());
    h.connect();
    assert.deepEqual(h.published, [JSON.stringify(SELF)], 'our record, retained, after connecting');
    h.receive(SELF);
    h.receive(OTHER);
    h.receive(OTHER);
    assert.deepEqual(h.errors(), [
      'another homeostat with node id twin is on this broker (host pi-b, pid 200, started at 2026-11-30T16:05:00.000Z): give each node its own node.id in the config',
    ]);
    assert.equal(h.clashes.length, 1);
    assert.deepEqual(h.clashes[0]?.other, OTHER);
    assert.equal(h.presence.clashing, true);
    assert.equal(h.published.length, 2, 'ours again, for the other to see');
  });

  test('given a record before ours came back (the retained one of our previous process), then nothing is said', (t) => {
    const h = harness();
    t.after(() => h.presence.stop());
    h.connect();
    h.receive(OTHER);
    h.receive(SELF);
    assert.deepEqual(h.errors(), []);
    assert.equal(h.presence.clashing, false);
  });

  test('given a reconnect, then records before ours are again not counted', (t) => {
    const h = harness();
    t.after(() => h.presence.stop());
    h.connect();
    h.receive(SELF);
    h.connect();
    h.receive(OTHER);
    assert.deepEqual(h.errors(), []);
  });

  const junk: Array<[what: string, payload: string]> = [
    ['not JSON', 'online'],
    ['no instance', JSON.stringify({ pid: 1 })],
    ['an empty message', ''],
    ['too large', JSON.stringify({ ...OTHER, host: 'x'.repeat(2_000) })],
  ];
  for (const [what, payload] of junk) {
    test(`given ${what} on the topic, then it is ignored`, (t) => {
      const h = harness();
      t.after(() => h.presence.stop());
      h.connect();
      h.receive(SELF);
      h.receive(payload);
      assert.deepEqual(h.errors(), []);
    });
  }
});

describe('NodePresence: our client id taken over', () => {
  test('given a broker that says session taken over (MQTT 5, reason 142), then one error names the client id and the fix', (t) => {
    const h = harness();
    t.after(() => h.presence.stop());
    h.drop({ reasonCode: SESSION_TAKEN_OVER, upMs: 900, atFirstAttempt: true });
    h.drop({ reasonCode: SESSION_TAKEN_OVER, upMs: 900, atFirstAttempt: true });
    assert.deepEqual(h.errors(), [
      'another client with client id homeostat-twin is on this broker (the broker handed our client id to a newer connection (session taken over)), most likely another homeostat with node id twin: give each node its own node.id in the config (or its own mqtt.clientId if this is another program)',
    ]);
    assert.equal(h.clashes[0]?.sign, 'takeover');
  });

  const kicks: Array<[what: string, drops: ConnectionDrop[], clash: boolean]> = [
    [
      'three closes without a reason right after connecting',
      Array(3).fill({ reasonCode: undefined, upMs: 500, atFirstAttempt: true }),
      true,
    ],
    ['two such closes', Array(2).fill({ reasonCode: undefined, upMs: 500, atFirstAttempt: true }), false],
    [
      'a long connection between',
      [
        { reasonCode: undefined, upMs: 500, atFirstAttempt: true },
        { reasonCode: undefined, upMs: 500, atFirstAttempt: true },
        { reasonCode: undefined, upMs: KICKED_MS + 1, atFirstAttempt: true },
        { reasonCode: undefined, upMs: 500, atFirstAttempt: true },
      ],
      false,
    ],
    [
      'closes with another reason (139: server shutting down)',
      Array(3).fill({ reasonCode: 139, upMs: 500, atFirstAttempt: true }),
      false,
    ],
  ];
  for (const [what, drops, clash] of kicks) {
    test(`given ${what}, then ${clash ? 'a clash' : 'no clash'}`, (t) => {
      const h = harness();
      t.after(() => h.presence.stop());
      for (const drop of drops) h.drop(drop);
      assert.equal(h.errors().length, clash ? 1 : 0, h.errors().join('\n'));
      if (clash)
        assert.match(h.errors()[0] ?? '', /closed our connection right after connecting 3 times in a row/);
    });
  }
});

describe('NodePresence: the streak', () => {
  test('given a clash, when no sign comes for quietMs, then it ends (info, onClear) and a new sign is logged again', async (t) => {
    const h = harness({ quietMs: 40 });
    t.after(() => h.presence.stop());
    h.connect();
    h.receive(SELF);
    h.receive(OTHER);
    await new Promise((resolve) => setTimeout(resolve, 25));
    h.receive(OTHER); // extends the streak
    await new Promise((resolve) => setTimeout(resolve, 25));
    assert.equal(h.cleared(), 0, 'not quiet long enough yet');
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(h.cleared(), 1);
    assert.equal(h.presence.clashing, false);
    assert.match(
      h.infos().at(-1) ?? '',
      /^no other homeostat with node id twin seen on the broker for \d+ s$/,
    );
    h.receive(OTHER);
    assert.equal(h.errors().length, 2, 'a new streak is logged again');
  });
});

describe('parseRecord', () => {
  test('given a record with odd fields, then it keeps the instance and bounds the rest', () => {
    assert.deepEqual(parseRecord(Buffer.from(JSON.stringify({ instance: 'i', pid: 'x', host: 5 }))), {
      instance: 'i',
      pid: 0,
      host: '?',
      startedAt: '?',
    });
  });
});
