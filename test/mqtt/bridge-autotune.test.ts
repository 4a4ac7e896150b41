/**
 * Autotune and tuning commands through the MQTT bridge (a fake connection that records every
 * publish, the demo config, a real SQLite store, a manual clock): `<loop>/autotune/set` and
 * `<loop>/tuning/set` reach the shared command path, each gets one result on `<loop>/result`
 * after the change is stored, source mqtt. Demo loops: room (PID, heat), fermenter (heat_cool).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { IPublishPacket } from 'mqtt';
import pino from 'pino';
import { parseConfigText } from '../../src/config/load.js';
import { applyConfig } from '../../src/daemon/store.js';
import { MqttBridge } from '../../src/mqtt/bridge.js';
import { topicMatchesFilter } from '../../src/mqtt/client.js';
import { topicsFor } from '../../src/mqtt/topics.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';

const BASE = 'homeostat/demo';
const TEXT = readFileSync('config/demo.yaml', 'utf8');
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Result {
  loop: string;
  accepted: boolean;
  reason?: string;
  generation?: number;
  requestId?: string;
  change?: unknown;
}

/** The part of MqttConnection the bridge uses; `deliver` plays the broker. */
class FakeConnection {
  connected = true;
  readonly published: { topic: string; payload: string; retain: boolean }[] = [];
  private readonly subscriptions: {
    filter: string;
    handler: (t: string, p: Buffer, packet: IPublishPacket) => void;
  }[] = [];
  start(): void {}
  async stop(): Promise<void> {}
  onConnect(): void {}
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
  deliver(topic: string, payload: string, retain = false): void {
    const packet = { cmd: 'publish', topic, payload, qos: 1, dup: false, retain } as IPublishPacket;
    for (const { filter, handler } of this.subscriptions) {
      if (topicMatchesFilter(filter, topic)) handler(topic, Buffer.from(payload), packet);
    }
  }
}

function harness() {
  const dir = mkdtempSync(join(tmpdir(), 'homeostat-bridge-autotune-'));
  dirs.push(dir);
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const loaded = parseConfigText(TEXT);
  assert.ok(loaded.ok);
  const config = loaded.config;
  const silent = pino({ level: 'silent' });
  const { db } = openStore({ path: join(dir, 'state.db'), logger: silent, nowMs: () => clock.nowMs() });
  const desired = new DesiredStore(db, () => clock.nowMs());
  applyConfig({ desired, state: new StateStore(db) }, config, TEXT);
  const connection = new FakeConnection();
  const triggers: string[] = [];
  const bridge = new MqttBridge({
    connection,
    topics: topicsFor('homeostat', 'demo'),
    control: {
      currentConfig: () => config,
      statuses: () => [],
      triggerLoop: (loop, reason) => void triggers.push(`${loop}: ${reason}`),
      requestFaultReset: () => ({ accepted: false, reason: 'not in these tests' }),
    },
    desired,
    clock,
    logger: silent,
    version: 'test',
    heartbeatMs: 60_000,
    schedule: (fn: () => void) => fn(),
  });
  bridge.start();
  const results = (loop: string): Result[] =>
    connection.published
      .filter((p) => p.topic === `${BASE}/${loop}/result`)
      .map((p) => JSON.parse(p.payload));
  return { desired, connection, triggers, results, db };
}

describe('MQTT autotune/set', () => {
  test('"start" on room: accepted with the generation it was stored as, source mqtt, the loop woken', () => {
    const h = harness();
    h.connection.deliver(`${BASE}/room/autotune/set`, 'start');
    const [result] = h.results('room');
    const stored = h.desired.desired('room');
    assert.equal(result?.accepted, true);
    assert.deepEqual(result?.change, { autotune: { action: 'start' } });
    assert.equal(result?.generation, stored?.generation);
    assert.equal(stored?.autotuneRequest?.action, 'start');
    const event = h.desired.events().find((e) => e.kind === 'autotune-requested');
    assert.equal(event?.source, 'mqtt');
    assert.deepEqual(h.triggers, ['room: mqtt autotune']);
  });

  test('the Home Assistant button on a heat_cool loop ("start", no side): refused with what to do, nothing stored', () => {
    const h = harness();
    const before = h.desired.desired('fermenter');
    h.connection.deliver(`${BASE}/fermenter/autotune/set`, 'start');
    const [result] = h.results('fermenter');
    assert.equal(result?.accepted, false);
    assert.match(result?.reason ?? '', /^mode heat_cool has two sides: say which one to tune/);
    assert.equal(result?.generation, before?.generation);
    assert.deepEqual(h.desired.desired('fermenter'), before);
  });

  test('JSON with a side and a requestId on fermenter: accepted, the requestId echoed', () => {
    const h = harness();
    h.connection.deliver(`${BASE}/fermenter/autotune/set`, '{"side":"raise","requestId":"ha-1"}');
    const [result] = h.results('fermenter');
    assert.deepEqual([result?.accepted, result?.requestId], [true, 'ha-1']);
    assert.deepEqual(h.desired.desired('fermenter')?.autotuneRequest?.options, { side: 'raise' });
  });

  test('a retained "start": refused and cleared (a replay must never start a run)', () => {
    const h = harness();
    h.connection.deliver(`${BASE}/room/autotune/set`, 'start', true);
    const [result] = h.results('room');
    assert.equal(result?.accepted, false);
    assert.match(result?.reason ?? '', /retained command refused/);
    assert.equal(h.desired.desired('room')?.autotuneRequest, undefined);
    assert.deepEqual(
      h.connection.published.filter((p) => p.topic === `${BASE}/room/autotune/set`),
      [{ topic: `${BASE}/room/autotune/set`, payload: '', retain: true }],
    );
  });
});

describe('MQTT tuning/set', () => {
  test('"latest" accepts the newest proposal: the result names version 2; a duplicate changes nothing', () => {
    const h = harness();
    h.desired.recordTuning(
      'room',
      { gains: { kp: 0.5, tiS: 900, tdS: 0 } },
      { apply: false, source: 'autotune' },
    );
    h.desired.recordTuning(
      'room',
      { gains: { kp: 0.6, tiS: 900, tdS: 0 } },
      { apply: false, source: 'autotune' },
    );
    h.connection.deliver(`${BASE}/room/tuning/set`, 'latest');
    h.connection.deliver(`${BASE}/room/tuning/set`, 'latest'); // QoS 1 duplicate
    const [first, second] = h.results('room');
    assert.deepEqual([first?.accepted, first?.change], [true, { tuning: 2 }]);
    assert.deepEqual([second?.accepted, second?.generation], [true, first?.generation]);
    assert.equal(h.desired.desired('room')?.tuning?.version, 2);
    assert.equal(h.desired.events().filter((e) => e.kind === 'tuning-applied').length, 1);
  });

  test('an unknown version: refused with the store’s message', () => {
    const h = harness();
    h.connection.deliver(`${BASE}/room/tuning/set`, '7');
    const [result] = h.results('room');
    assert.deepEqual([result?.accepted, result?.reason], [false, 'loop "room" has no tuning version 7']);
  });
});
