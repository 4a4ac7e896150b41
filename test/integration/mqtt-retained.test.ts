/**
 * Commands mean what they meant when sent: a `fault/reset` left retained on the broker is
 * replayed at every subscribe, and used to clear the thermal-protection latch at every
 * restart (heater back on within half a second). A real Mosquitto, the daemon with its store
 * on a manual clock (the latch needs 15 simulated minutes), and its MQTT bridge.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import mqtt from 'mqtt';
import type { Daemon } from '../../src/daemon/daemon.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { LATCHING_DEMO } from '../storage/support.js';
import { startStoreDaemon, startTestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { waitUntil } from './helpers.js';
import { brokerFor } from './mosquitto.js';

const BASE = 'homeostat/demo';
const RESET = `${BASE}/room/fault/reset`;

/** The demo, with a room heater that barely heats and an effect watch on the room loop. */
function latchingConfig(brokerUrl: string): string {
  return LATCHING_DEMO.replace('url: mqtt://127.0.0.1:1883', `url: ${brokerUrl}`);
}

const faulted = (daemon: Daemon) =>
  daemon
    .statuses()
    .find((s) => s.loop === 'room')
    ?.conditions.find((c) => c.type === 'Faulted');
const heater = (daemon: Daemon) => daemon.drivers.actuators.get('room_heater')!.observe();

test('given a latched fault and a fault/reset left retained on the broker, when the daemon restarts, then the latch stays, the replay is refused and cleared; a live reset still clears it', async (t) => {
  const broker = await brokerFor(t);
  const dbPath = path.join(tempDir(t, 'homeostat-retained-reset-'), 'state.db');
  const text = latchingConfig(broker.url);
  const clock = new ManualClock(Date.UTC(2026, 0, 1));

  // Given a latched fault (ten minutes of full heating without effect) …
  const first = await startStoreDaemon(text, dbPath, clock);
  await clock.advance(15 * 60_000);
  assert.equal(faulted(first.daemon)?.reason, 'LatchedHeatingIneffective');
  await first.daemon.stop();
  first.db.close();

  // … and a fault reset someone published with the retain flag (an old one, sent before).
  const ha = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  t.after(() => ha.endAsync(true));
  const results: { accepted: boolean; reason?: string }[] = [];
  ha.on('message', (topic, payload) => {
    if (topic === `${BASE}/room/result`) results.push(JSON.parse(payload.toString()));
  });
  await ha.subscribeAsync(`${BASE}/room/result`, { qos: 1 });
  await ha.publishAsync(RESET, 'reset', { qos: 1, retain: true });

  // When the daemon starts again with its bridge …
  const second = await startTestNode(text, dbPath, { clock, mqtt: {} });
  t.after(() => second.stop());
  assert.ok(second.node.bridge, 'the config names a broker: the node runs its bridge');

  // … then the replayed reset is refused, with the reason, and nothing is reset.
  await waitUntil(() => results.length > 0, { what: 'the result of the replayed reset' });
  assert.equal(results[0]?.accepted, false);
  assert.match(results[0]?.reason ?? '', /retained command refused/);
  await clock.advance(60_000);
  assert.equal(faulted(second.daemon)?.reason, 'LatchedHeatingIneffective', 'still latched');
  assert.equal(await heater(second.daemon), 0, 'the heater stays off');

  // The retained message is gone from the broker: the next restart sees nothing.
  const probe = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  t.after(() => probe.endAsync(true));
  const retained: string[] = [];
  probe.on('message', (_topic, payload, packet) => packet.retain && retained.push(payload.toString()));
  await probe.subscribeAsync(RESET, { qos: 1 });
  await probe.publishAsync(`${BASE}/probe`, 'x', { qos: 1 }); // a round trip after the SUBACK
  assert.deepEqual(retained, [], 'no retained fault/reset left');

  // A reset sent now, live, is a person's intent: it clears the latch.
  await ha.publishAsync(RESET, 'reset', { qos: 1 });
  await waitUntil(() => results.length > 1, { what: 'the result of the live reset' });
  assert.equal(results[1]?.accepted, true, JSON.stringify(results[1]));
  await clock.advance(2 * 60_000);
  assert.equal(faulted(second.daemon)?.status, 'False');
  assert.equal(await heater(second.daemon), 1, 'heating again');
});

test('given a latched fault and the daemon stopped after running with the broker, when a fault reset and an autotune start are published (retained) meanwhile, then the restart applies neither: the broker queued them for the old session, which the new process does not resume', async (t) => {
  const broker = await brokerFor(t);
  const dbPath = path.join(tempDir(t, 'homeostat-queued-reset-'), 'state.db');
  const text = latchingConfig(broker.url);
  const clock = new ManualClock(Date.UTC(2026, 0, 1));

  // Given a latched fault, with the daemon connected (so the broker keeps a session for it) …
  const first = await startTestNode(text, dbPath, { clock, mqtt: {} });
  await waitUntil(() => first.node.connection?.connected, { what: "the first run's connection" });
  await clock.advance(15 * 60_000);
  assert.equal(faulted(first.daemon)?.reason, 'LatchedHeatingIneffective');
  await first.stop();

  // … and, while it is down, a reset and an autotune start someone published (retained).
  const ha = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
  t.after(() => ha.endAsync(true));
  const results: { accepted: boolean; reason?: string; change?: unknown }[] = [];
  ha.on('message', (topic, payload) => {
    if (topic === `${BASE}/room/result`) results.push(JSON.parse(payload.toString()));
  });
  await ha.subscribeAsync(`${BASE}/room/result`, { qos: 1 });
  await ha.publishAsync(RESET, 'reset', { qos: 1, retain: true });
  await ha.publishAsync(`${BASE}/room/autotune/set`, 'start', { qos: 1, retain: true });

  // When the daemon starts again …
  const second = await startTestNode(text, dbPath, { clock, mqtt: {} });
  t.after(() => second.stop());

  // … then both arrive only as retained replays, refused; nothing is reset, nothing started.
  await waitUntil(() => results.length >= 2, { what: 'the results of both replays' });
  assert.deepEqual(
    results.map((r) => [r.accepted, /retained command refused/.test(r.reason ?? '')]),
    [
      [false, true],
      [false, true],
    ],
    JSON.stringify(results),
  );
  await clock.advance(60_000);
  assert.equal(faulted(second.daemon)?.reason, 'LatchedHeatingIneffective', 'still latched');
  assert.equal(await heater(second.daemon), 0, 'the heater stays off');
  const status = second.daemon.statuses().find((s) => s.loop === 'room');
  assert.equal(status?.autotune, undefined, 'no autotune run');
});
