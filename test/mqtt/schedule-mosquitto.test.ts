/**
 * Presets and profiles over a real Mosquitto (one per test, on a free port; the project's
 * helper test/integration/mosquitto.ts): an in-process node on the demo config, with presets on
 * `room` and a profile on `fermenter`, and an MQTT.js client playing Home Assistant. A command on
 * `<loop>/preset/set` or `<loop>/profile/set` is answered on `<loop>/result`, stored before the
 * answer; a hostile one is refused and changes nothing (a retained command's refusal is the same
 * for every kind: test/integration/mqtt-retained.test.ts); discovery offers the presets and the profile entities; the state carries the preset in force.
 * Needs the mosquitto binary (installed in CI; `apt-get install mosquitto`).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import mqtt from 'mqtt';
import { ScaledClock } from '../../src/runtime/scaled-clock.js';
import { demoConfigText, makeTempDir, waitUntil } from '../integration/helpers.js';
import { type Broker, brokerFor } from '../integration/mosquitto.js';
import { startTestNode } from '../support/node.js';

const BASE = 'homeostat/demo';

interface Result {
  loop: string;
  accepted: boolean;
  reason?: string;
  generation?: number;
  requestId?: string;
  change?: unknown;
}

async function stack(t: TestContext) {
  const broker: Broker = await brokerFor(t);
  const { dir, remove } = makeTempDir('homeostat-schedule-mqtt-');
  const text = demoConfigText((doc) => {
    doc.setIn(['mqtt', 'url'], broker.url);
    doc.setIn(
      ['loops', 'room', 'presets'],
      doc.createNode({ comfort: { setpoint: 21.5 }, eco: { setpoint: 17 } }),
    );
    doc.setIn(
      ['loops', 'fermenter', 'profiles'],
      doc.createNode({ ale: { steps: [{ holdS: 86400, setpoint: 18 }] } }),
    );
  });
  const node = await startTestNode(text, join(dir, 'state.db'), { clock: new ScaledClock(60), mqtt: {} });
  const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  t.after(async () => {
    await client.endAsync();
    await node.stop();
    remove();
  });
  const results: Result[] = [];
  const retained = new Map<string, string>();
  client.on('message', (topic, payload) => {
    if (topic.endsWith('/result')) results.push(JSON.parse(payload.toString()) as Result);
    else retained.set(topic, payload.toString());
  });
  await client.subscribeAsync([`${BASE}/+/result`, `${BASE}/+/state`, 'homeassistant/device/demo/config'], {
    qos: 1,
  });
  /** Publishes and waits for the result carrying `requestId` (or the next one without). */
  const command = async (topic: string, payload: string, opts: { retain?: boolean } = {}) => {
    const before = results.length;
    await client.publishAsync(`${BASE}/${topic}`, payload, { qos: 1, retain: opts.retain ?? false });
    return waitUntil(() => results.slice(before)[0], { what: `a result for ${topic} ${payload}` });
  };
  return { node, client, command, retained, results };
}

describe('presets and profiles over MQTT (real Mosquitto)', () => {
  test('room/preset/set eco: accepted on room/result with the generation it stored; the state then shows it', async (t) => {
    const s = await stack(t);
    const result = await s.command('room/preset/set', 'eco');
    assert.equal(result.accepted, true, result.reason);
    assert.deepEqual(result.change, { preset: 'eco' });
    const row = s.node.store.desired.desired('room');
    assert.equal(row?.preset, 'eco');
    assert.equal(row?.generation, result.generation, 'stored before the result');
    const state = await waitUntil(
      () => {
        const text = s.retained.get(`${BASE}/room/state`);
        const parsed = text ? (JSON.parse(text) as { schedule?: { preset?: string | null } }) : undefined;
        return parsed?.schedule?.preset === 'eco' ? parsed : undefined;
      },
      { what: 'room/state with schedule.preset eco' },
    );
    assert.equal(state.schedule?.preset, 'eco');
    // What Home Assistant sends to clear it.
    const cleared = await s.command('room/preset/set', 'none');
    assert.equal(cleared.accepted, true, cleared.reason);
    assert.equal(s.node.store.desired.desired('room')?.preset, undefined);
  });

  test('hostile preset commands are refused with a reason and change nothing', async (t) => {
    const s = await stack(t);
    const before = s.node.store.desired.desired('room');
    const cases: [topic: string, payload: string, reason: RegExp][] = [
      ['room/preset/set', 'away', /^unknown preset "away" \(known: comfort, eco, or none\)$/],
      ['fermenter/preset/set', 'eco', /^loop fermenter has no presets/],
      ['room/preset/set', '{"preset": 3, "requestId": "bad-1"}', /invalid preset command/],
      ['room/preset/set', 'x'.repeat(2_000), /more than the 1024 allowed/],
    ];
    for (const [topic, payload, reason] of cases) {
      const result = await s.command(topic, payload);
      assert.equal(result.accepted, false, topic);
      assert.match(result.reason ?? '', reason);
    }
    assert.deepEqual(s.node.store.desired.desired('room'), before);
  });

  test('fermenter/profile/set: start ale, then pause and stop, each answered and stored', async (t) => {
    const s = await stack(t);
    const started = await s.command('fermenter/profile/set', 'start ale');
    assert.equal(started.accepted, true, started.reason);
    assert.equal(s.node.store.desired.desired('fermenter')?.profileRun?.name, 'ale');
    const paused = await s.command('fermenter/profile/set', '{"action":"pause","requestId":"p-1"}');
    assert.deepEqual([paused.accepted, paused.requestId], [true, 'p-1']);
    const stopped = await s.command('fermenter/profile/set', 'stop');
    assert.equal(stopped.accepted, true, stopped.reason);
    assert.equal(s.node.store.desired.desired('fermenter')?.profileRun, undefined);
    const unknown = await s.command('fermenter/profile/set', 'start lager');
    assert.match(unknown.reason ?? '', /^unknown profile "lager" \(known: ale\)$/);
  });

  test('discovery: the climate offers the presets on room/preset/set; the fermenter has its profile entities', async (t) => {
    const s = await stack(t);
    const discovery = await waitUntil(() => s.retained.get('homeassistant/device/demo/config'), {
      what: 'the discovery message',
    });
    const cmps = (JSON.parse(discovery) as { cmps: Record<string, Record<string, unknown>> }).cmps;
    assert.deepEqual(cmps.homeostat_demo_room_climate?.pr_modes, ['comfort', 'eco']);
    assert.equal(cmps.homeostat_demo_room_climate?.pr_mode_cmd_t, `${BASE}/room/preset/set`);
    assert.deepEqual(cmps.homeostat_demo_fermenter_profile?.ops, ['ale']);
    assert.equal(cmps.homeostat_demo_fermenter_profile_stop?.pl_prs, 'stop');
  });
});
