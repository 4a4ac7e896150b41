import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { DesiredCommands } from '../../src/control/desired-commands.js';
import type { LoopControl } from '../../src/control/loop-control.js';
import { applyConfig } from '../../src/daemon/store.js';
import { MqttBridge } from '../../src/mqtt/bridge.js';
import { topicMatchesFilter } from '../../src/mqtt/client.js';
import { topicsFor } from '../../src/mqtt/topics.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { minimalSimConfigText, validConfig } from '../support/config.js';
import { silentLogger } from '../support/logger.js';
import { type MemoryStore, memoryStore } from '../support/store.js';

/**
 * The MQTT bridge on a DesiredCommands it is given (as the node wires it, shared with the HTTP
 * API): one change budget and one rejection log for both sources. A fake connection delivers
 * MQTT commands straight to the bridge's handler.
 */

const TEXT = minimalSimConfigText();
const BASE = 'homeostat/pi';
const open: MemoryStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

type Handler = (topic: string, payload: Buffer, packet: { retain: boolean }) => void;
interface Subscription {
  filter: string;
  handler: Handler;
}

function givenSharedCommands() {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const config = validConfig(TEXT);
  const store = memoryStore(clock);
  open.push(store);
  applyConfig(store, config, TEXT);
  const control: LoopControl = {
    currentConfig: () => config,
    statuses: () => [],
    triggerLoop: () => {},
    requestFaultReset: () => ({ accepted: false, reason: 'not in this test' }),
  };
  const commands = new DesiredCommands({
    control,
    desired: store.desired,
    clock,
    logger: silentLogger,
    changeLimit: { burst: 2, perMinute: 1 },
  });
  const subscriptions: Subscription[] = [];
  const published: { topic: string; payload: string }[] = [];
  const bridge = new MqttBridge({
    connection: {
      connected: true,
      start: () => {},
      stop: async () => {},
      onConnect: () => {},
      publish: async (topic, payload) => void published.push({ topic, payload: payload.toString() }),
      subscribe: (filter, _qos, handler) => void subscriptions.push({ filter, handler: handler as Handler }),
    },
    topics: topicsFor('homeostat', 'pi'),
    control,
    desired: store.desired,
    clock,
    logger: silentLogger,
    version: 'test',
    heartbeatMs: 60_000,
    schedule: (fn) => fn(),
    commands,
  });
  bridge.start();
  const deliver = (suffix: string, payload: string, retain = false) => {
    const topic = `${BASE}/room/${suffix}`;
    for (const { filter, handler } of subscriptions) {
      if (topicMatchesFilter(filter, topic)) handler(topic, Buffer.from(payload), { retain });
    }
  };
  const results = () =>
    published.filter((p) => p.topic === `${BASE}/room/result`).map((p) => JSON.parse(p.payload));
  return { clock, store, commands, bridge, deliver, results };
}

describe('MQTT and HTTP share one DesiredCommands', () => {
  test('given MQTT spent the loop change budget, when HTTP sends a change, then it is refused as rate-limited', async () => {
    const h = givenSharedCommands();
    h.deliver('setpoint/set', '21');
    h.deliver('setpoint/set', '22');
    await h.bridge.commandsHandled();
    assert.deepEqual(
      h.results().map((r) => r.accepted),
      [true, true],
    );
    assert.equal(h.store.desired.desired('room')?.setpointSource, 'mqtt');

    const answer = h.commands.submit({
      loop: 'room',
      kind: 'json',
      payload: Buffer.from('{"setpoint":23}'),
      source: 'http',
      receivedAtMs: h.clock.nowMs(),
    });
    assert.equal(answer.refusal, 'rate-limited');
    assert.equal(h.store.desired.desired('room')?.setpoint, 22);
    await h.bridge.stop();
  });

  test('given a retained MQTT command, then the shared log notes it with source mqtt and the result says why', async () => {
    const h = givenSharedCommands();
    h.deliver('setpoint/set', '21', true);
    await h.bridge.commandsHandled();

    const [result] = h.results();
    assert.equal(result.accepted, false);
    assert.match(result.reason, /retained command refused/);
    const rejected = h.store.desired.events().filter((e) => e.kind === 'command-rejected');
    assert.deepEqual(
      rejected.map((e) => [e.source, e.loop]),
      [['mqtt', 'room']],
    );
    assert.equal(h.store.desired.desired('room')?.setpoint, 20, 'nothing stored');
    await h.bridge.stop();
  });
});
