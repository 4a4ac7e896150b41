import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { IPublishPacket } from 'mqtt';
import pino from 'pino';
import { parseConfigText } from '../../src/config/load.js';
import { applyConfig } from '../../src/daemon/store.js';
import {
  BIRTH_MIN_INTERVAL_MS,
  BUSY_REPORT_MS,
  CHANGE_BURST,
  MqttBridge,
  REJECTION_WINDOW_MS,
} from '../../src/mqtt/bridge.js';
import { topicMatchesFilter } from '../../src/mqtt/client.js';
import { topicsFor } from '../../src/mqtt/topics.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';

/**
 * The bridge's command side with a fake connection that records every publish, the demo
 * config, a real SQLite store and a manual clock: hostile loop ids, retained commands, floods
 * (of rejected commands, of changes, of Home Assistant birth messages) and a failing store.
 * What a real broker adds is covered in test/integration/mqtt-bridge.test.ts.
 */

const BASE = 'homeostat/demo';
const DISCOVERY = 'homeassistant/device/demo/config';
const TEXT = readFileSync('config/demo.yaml', 'utf8');
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Published {
  topic: string;
  payload: string;
  retain: boolean;
}

interface Result {
  loop: string;
  accepted: boolean;
  reason?: string;
  generation?: number;
  change?: { setpoint?: number; mode?: string };
}

interface LogRecord {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** The part of MqttConnection the bridge uses; `deliver` plays the broker. Handlers may throw: the test sees it. */
class FakeConnection {
  connected = true;
  readonly published: Published[] = [];
  private readonly subscriptions: {
    filter: string;
    handler: (t: string, p: Buffer, packet: IPublishPacket) => void;
  }[] = [];
  private readonly connectListeners: (() => void)[] = [];

  start(): void {}
  async stop(): Promise<void> {}
  onConnect(listener: () => void): void {
    this.connectListeners.push(listener);
  }
  publish(topic: string, payload: string | Buffer, opts: { qos: 0 | 1; retain: boolean }): Promise<void> {
    this.published.push({ topic, payload: payload.toString(), retain: opts.retain });
    return Promise.resolve();
  }
  subscribe(
    filter: string,
    _qos: 0 | 1,
    handler: (t: string, p: Buffer, packet: IPublishPacket) => void,
  ): void {
    this.subscriptions.push({ filter, handler });
  }
  deliver(topic: string, payload: string, opts: { retain?: boolean } = {}): void {
    const packet = {
      cmd: 'publish',
      topic,
      payload,
      qos: 1,
      dup: false,
      retain: opts.retain === true,
    } as IPublishPacket;
    for (const { filter, handler } of this.subscriptions) {
      if (topicMatchesFilter(filter, topic)) handler(topic, Buffer.from(payload), packet);
    }
  }
  on(topic: string): Published[] {
    return this.published.filter((p) => p.topic === topic);
  }
}

/** Which store methods fail, and how (a full disk). */
const failing = new Set<string>();
const diskFull = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

function harness(opts: { queued?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'homeostat-bridge-unit-'));
  dirs.push(dir);
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const loaded = parseConfigText(TEXT);
  assert.ok(loaded.ok);
  const config = loaded.config;
  const silent = pino({ level: 'silent' });
  const { db } = openStore({ path: join(dir, 'state.db'), logger: silent, nowMs: () => clock.nowMs() });
  const desired = new DesiredStore(db, () => clock.nowMs());
  applyConfig({ desired, state: new StateStore(db) }, config, TEXT);
  failing.clear();
  // The store as the bridge sees it: any method named in `failing` throws like a full disk.
  const store = new Proxy(desired, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (failing.has(String(prop))) throw diskFull();
        return value.apply(target, args);
      };
    },
  });
  const records: LogRecord[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void records.push(JSON.parse(line)) });
  const connection = new FakeConnection();
  const triggers: string[] = [];
  const resets: { loop: string; atMs: number }[] = [];
  const bridge = new MqttBridge({
    connection,
    topics: topicsFor('homeostat', 'demo'),
    control: {
      currentConfig: () => config,
      statuses: () => [],
      triggerLoop: (loop) => void triggers.push(loop),
      requestFaultReset: (loop, _source, atMs) => {
        resets.push({ loop, atMs });
        return { accepted: true };
      },
    },
    desired: store,
    clock,
    logger,
    version: 'test',
    heartbeatMs: 60_000,
    // Commands are handled as they arrive, unless a test wants the real queue (which yields).
    ...(opts.queued ? {} : { schedule: (fn: () => void) => fn() }),
  });
  bridge.start();
  const results = (loop: string): Result[] =>
    connection.on(`${BASE}/${loop}/result`).map((p) => JSON.parse(p.payload) as Result);
  const rejectedEvents = () => desired.events().filter((e) => e.kind === 'command-rejected');
  return {
    clock,
    config,
    desired,
    connection,
    bridge,
    triggers,
    resets,
    results,
    records,
    rejectedEvents,
    db,
  };
}

const SUFFIXES = ['setpoint/set', 'mode/set', 'set', 'fault/reset', 'autotune/set', 'tuning/set'] as const;
const VALID: Record<(typeof SUFFIXES)[number], string> = {
  'setpoint/set': '21.5',
  'mode/set': 'off',
  set: '{"setpoint":21.5}',
  'fault/reset': '',
  'autotune/set': 'start',
  'tuning/set': 'config',
};

describe('loop ids that are JavaScript built-ins are unknown loops', () => {
  for (const id of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
    test(`"${id}" on every command topic: rejected as an unknown loop, nothing triggered, never a crash`, () => {
      const h = harness();
      for (const suffix of SUFFIXES) h.connection.deliver(`${BASE}/${id}/${suffix}`, VALID[suffix]);

      const results = h.results(id);
      assert.equal(results.length, SUFFIXES.length, 'one result per command');
      for (const result of results) {
        assert.equal(result.accepted, false);
        assert.match(result.reason ?? '', new RegExp(`unknown loop "${id}"`));
      }
      assert.deepEqual(h.triggers, []);
      assert.deepEqual(h.resets, []);
    });
  }
});

describe('retained commands are refused and cleared', () => {
  for (const suffix of SUFFIXES) {
    test(`a retained ${suffix}: refused with the reason, nothing changed, the retained message cleared, its echo ignored`, () => {
      const h = harness();
      const before = h.desired.desired('room');
      const topic = `${BASE}/room/${suffix}`;

      h.connection.deliver(topic, VALID[suffix], { retain: true });

      const [result, ...more] = h.results('room');
      assert.deepEqual(more, []);
      assert.equal(result?.accepted, false);
      assert.match(result?.reason ?? '', /retained/);
      assert.deepEqual(h.desired.desired('room'), before, 'the desired state is unchanged');
      assert.deepEqual(h.resets, [], 'no fault reset');
      assert.deepEqual(h.triggers, []);
      assert.deepEqual(
        h.connection.on(topic),
        [{ topic, payload: '', retain: true }],
        'the retained command is cleared',
      );

      // The broker forwards the clearing publish to us as an empty live message: not a command.
      h.connection.deliver(topic, '');
      assert.equal(h.results('room').length, 1, 'no result for our own clearing message');
      assert.deepEqual(h.resets, []);
    });
  }

  test('a live fault/reset (not retained) resets the loop with the time it was received', () => {
    const h = harness();
    h.connection.deliver(`${BASE}/room/fault/reset`, 'reset');
    assert.deepEqual(h.resets, [{ loop: 'room', atMs: h.clock.nowMs() }]);
    assert.equal(h.results('room')[0]?.accepted, true);
  });
});

describe('a flood of commands does not grow the database', () => {
  test('given 1,000 rejected setpoints in a minute, then each gets its result, and the events are one at once plus one with the count', async () => {
    const h = harness();
    for (let i = 0; i < 1_000; i++) h.connection.deliver(`${BASE}/room/setpoint/set`, String(31 + i));

    const results = h.results('room');
    assert.equal(results.length, 1_000, 'every command answered');
    assert.ok(results.every((r) => !r.accepted && /outside the limits/.test(r.reason ?? '')));
    assert.equal(h.rejectedEvents().length, 1, 'the first one is recorded at once');

    await h.clock.advance(REJECTION_WINDOW_MS);
    const events = h.rejectedEvents();
    assert.equal(events.length, 2, JSON.stringify(events));
    assert.deepEqual((events[1]!.data as { count: number }).count, 999);
    assert.match(events[1]!.message, /999 more/);

    await h.clock.advance(5 * REJECTION_WINDOW_MS);
    assert.equal(h.rejectedEvents().length, 2, 'nothing more once the flood is over');
  });

  test('given rejections of different reasons, loops and unknown loops, then each kind gets its own event', async () => {
    const h = harness();
    h.connection.deliver(`${BASE}/room/setpoint/set`, '99');
    h.connection.deliver(`${BASE}/room/setpoint/set`, 'warm');
    h.connection.deliver(`${BASE}/fermenter/setpoint/set`, '99');
    for (let i = 0; i < 100; i++) h.connection.deliver(`${BASE}/nope${i}/setpoint/set`, '20');

    assert.deepEqual(
      h.rejectedEvents().map((e) => [e.loop ?? null, e.message.slice(0, 30)]),
      [
        ['room', 'setpoint rejected: setpoint 99'],
        ['room', 'setpoint rejected: setpoint mu'],
        ['fermenter', 'setpoint rejected: setpoint 99'],
        [null, 'unknown loop "nope0"'],
      ],
    );
    await h.clock.advance(REJECTION_WINDOW_MS);
    const last = h.rejectedEvents().at(-1)!;
    assert.equal((last.data as { count: number }).count, 99);
  });

  test(`given 1,000 different valid setpoints, then the first ${CHANGE_BURST} are applied, the rest refused as too many, every one answered`, async () => {
    const h = harness();
    const initial = h.desired.desired('room')!.generation;
    for (let i = 0; i < 1_000; i++)
      h.connection.deliver(`${BASE}/room/setpoint/set`, i % 2 === 0 ? '20' : '21');

    const results = h.results('room');
    assert.equal(results.length, 1_000);
    const generations = new Set(
      results.filter((r) => r.accepted && r.generation !== initial).map((r) => r.generation),
    );
    assert.equal(generations.size, CHANGE_BURST, 'a burst of changes is applied (then 21 again is a no-op)');
    assert.ok(
      results.filter((r) => !r.accepted).every((r) => /too many changes/.test(r.reason ?? '')),
      'the rest are refused with the reason',
    );
    const changes = h.desired.events({ loop: 'room' }).filter((e) => e.kind === 'setpoint-changed');
    assert.equal(changes.length, CHANGE_BURST);
    assert.ok(h.rejectedEvents().length <= 1);

    await h.clock.advance(60_000);
    h.connection.deliver(`${BASE}/room/setpoint/set`, '22');
    assert.equal(h.results('room').at(-1)?.accepted, true, 'accepted again after a minute');
  });

  test('given a loop at its change limit, when a person sends mode off, then it is applied at once (stopping is never rate-limited)', () => {
    const h = harness();
    for (let i = 0; i < 100; i++)
      h.connection.deliver(`${BASE}/room/setpoint/set`, i % 2 === 0 ? '20' : '21');
    assert.match(h.results('room').at(-1)?.reason ?? '', /too many changes/, 'the limit is reached');
    h.connection.deliver(`${BASE}/room/mode/set`, 'off');
    assert.equal(h.results('room').at(-1)?.accepted, true);
    assert.equal(h.desired.desired('room')?.mode, 'off');
  });

  test('given 1,000 copies of the current setpoint, then all are accepted without a write (duplicates cost nothing)', () => {
    const h = harness();
    const current = h.desired.desired('room')!;
    for (let i = 0; i < 1_000; i++)
      h.connection.deliver(`${BASE}/room/setpoint/set`, String(current.setpoint));
    const results = h.results('room');
    assert.equal(results.length, 1_000);
    assert.ok(results.every((r) => r.accepted && r.generation === current.generation));
    h.connection.deliver(`${BASE}/room/setpoint/set`, String(current.setpoint + 1));
    assert.equal(h.results('room').at(-1)?.accepted, true, 'a real change still goes through');
  });
});

describe('commands are handled off the receive path, boundedly', () => {
  test('given 3,000 commands in one read (one turn of the event loop), then none is handled during it; 1,000 wait and get their results, 2,000 are dropped and answered by one coalesced rejection', async () => {
    const h = harness({ queued: true });
    for (let i = 0; i < 3_000; i++) h.connection.deliver(`${BASE}/room/setpoint/set`, '99');
    assert.equal(h.results('room').length, 0, 'nothing is handled on the receive path');

    await h.bridge.commandsHandled();
    await h.clock.advance(BUSY_REPORT_MS);
    const results = h.results('room');
    assert.equal(results.filter((r) => /outside the limits/.test(r.reason ?? '')).length, 1_000);
    const busy = results.filter((r) => /busy/.test(r.reason ?? ''));
    assert.equal(busy.length, 1, JSON.stringify(busy));
    assert.match(busy[0]!.reason!, /busy: 2000 commands dropped unread \(more than 1000 were waiting\)/);
    assert.ok(h.rejectedEvents().length <= 2, 'two kinds of rejection, one event each');
  });
});

describe('Home Assistant birth messages are coalesced', () => {
  test('given 2,000 "online" messages at once, then discovery is republished once, after the burst', async () => {
    const h = harness();
    const before = h.connection.on(DISCOVERY).length;
    for (let i = 0; i < 2_000; i++) h.connection.deliver('homeassistant/status', 'online');
    assert.equal(h.connection.on(DISCOVERY).length, before, 'nothing published during the burst');

    await h.clock.advance(BIRTH_MIN_INTERVAL_MS);
    assert.equal(h.connection.on(DISCOVERY).length, before + 1, 'one republish');
  });

  test('given "online" 10 times a second for 60 s, then discovery is republished at most once per interval', async () => {
    const h = harness();
    const before = h.connection.on(DISCOVERY).length;
    for (let i = 0; i < 600; i++) {
      h.connection.deliver('homeassistant/status', 'online');
      await h.clock.advance(100);
    }
    await h.clock.advance(BIRTH_MIN_INTERVAL_MS);
    const republished = h.connection.on(DISCOVERY).length - before;
    assert.ok(republished >= 1, 'republished');
    assert.ok(republished <= 60_000 / BIRTH_MIN_INTERVAL_MS + 1, `${republished} republishes`);
  });
});

describe('a failing store (full disk) still answers every command', () => {
  test('given every store call failing, then each command gets a result with the reason, and the error is logged once', async () => {
    const h = harness();
    for (const method of ['setDesired', 'recordEvent', 'desired', 'getMeta', 'setMeta']) failing.add(method);

    for (let i = 0; i < 100; i++) {
      h.connection.deliver(`${BASE}/room/setpoint/set`, i % 2 === 0 ? '20' : '99');
      h.connection.deliver(`${BASE}/room/fault/reset`, '');
    }
    h.connection.deliver('homeassistant/status', 'online');
    await h.clock.advance(REJECTION_WINDOW_MS);

    const results = h.results('room');
    assert.equal(results.length, 200, 'every command answered');
    const setpoints = results.filter(
      (r) => r.change?.setpoint !== undefined || r.reason?.includes('setpoint'),
    );
    assert.ok(
      setpoints.every((r) => !r.accepted),
      'no setpoint accepted without being stored',
    );
    assert.match(results[0]?.reason ?? '', /not stored: database or disk is full/);
    // Once per streak: one line for failing reads, one for failing writes (a full disk reads).
    const storageLogs = h.records.filter((r) => r.level >= 40 && /storage|store/i.test(r.msg));
    assert.deepEqual(
      storageLogs.map((r) => /storage (read|write)/.exec(r.msg)?.[1]).sort(),
      ['read', 'write'],
      JSON.stringify(storageLogs),
    );

    // The disk has room again: commands are stored, and that is said once.
    failing.clear();
    h.connection.deliver(`${BASE}/room/setpoint/set`, '21');
    assert.equal(h.results('room').at(-1)?.accepted, true);
    assert.ok(h.records.some((r) => r.level === 30 && /storage.*again/i.test(r.msg)));
  });
});
