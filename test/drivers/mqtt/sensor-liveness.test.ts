import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { freshnessOf } from '../../../src/core/liveness.js';
import type { LivenessOptions } from '../../../src/drivers/mqtt/liveness.js';
import { MqttSensor } from '../../../src/drivers/mqtt/sensor.js';
import { FakeTransport, manualTime } from './fake-transport.js';

/**
 * An MQTT sensor whose device reports only on change (a Zigbee2MQTT probe), with liveness from
 * its availability topic: the driver's half of core/liveness.ts' rule.
 */
const STATE = 'zigbee2mqtt/fermenter_probe';
const AVAILABILITY = `${STATE}/availability`;
const STALE_AFTER_MS = 180_000;
const MAX_QUIET_MS = 3_600_000;

async function probe(liveness: Partial<LivenessOptions> = { availabilityTopic: AVAILABILITY }) {
  const transport = new FakeTransport();
  const time = manualTime();
  const driver = new MqttSensor({
    id: 'probe',
    transport,
    topic: STATE,
    field: 'temperature',
    staleAfterMs: STALE_AFTER_MS,
    liveness: { maxQuietMs: MAX_QUIET_MS, ...liveness },
    ...time,
  });
  let triggers = 0;
  driver.onValue(() => triggers++);
  await driver.start();
  const state = (temperature: number, extra: Record<string, unknown> = {}, retain = false) =>
    transport.deliver(STATE, JSON.stringify({ temperature, humidity: 61, battery: 97, ...extra }), {
      retain,
    });
  const availability = (word: 'online' | 'offline') =>
    transport.deliver(AVAILABILITY, JSON.stringify({ state: word }), { retain: true });
  return { driver, transport, time, state, availability, triggers: () => triggers };
}

describe('MqttSensor with liveness', () => {
  test('subscribes to the availability topic beside the value topic, and leaves both on stop', async () => {
    const { driver, transport } = await probe();
    assert.deepEqual(
      transport.subscriptions.map((s) => s.filter),
      [STATE, AVAILABILITY],
    );
    await driver.stop();
    assert.deepEqual(transport.subscriptions, []);
  });

  test('given the device online, a quiet value is handed out past staleAfter with its liveness, up to maxQuiet', async () => {
    const { driver, time, state, availability } = await probe();
    availability('online');
    state(19.5);
    const arrivedAtMs = time.nowMs();
    time.advanceS(22 * 60);
    const reading = await driver.readStamped();
    assert.equal(reading.value, 19.5);
    assert.equal(reading.atMs, arrivedAtMs, 'stamped on arrival, not re-stamped');
    assert.equal(reading.liveness?.seenAtMs, time.nowMs(), 'online over a live connection: seen now');
    assert.equal(reading.liveness?.maxQuietMs, MAX_QUIET_MS);
    const freshness = freshnessOf(reading, time.nowMs(), STALE_AFTER_MS);
    assert.ok(freshness.fresh && freshness.quiet?.startsWith('quiet: unchanged for 22 min'));
    time.advanceS(38 * 60 + 1);
    await assert.rejects(driver.read(), /quiet for 60 min .*limit 60 min/);
  });

  test('without any availability message, the value goes stale at staleAfter as without liveness', async () => {
    const { driver, time, state } = await probe();
    state(19.5);
    time.advanceS(181);
    await assert.rejects(driver.read(), /device not seen/);
  });

  test('offline: the reading is handed out with offlineSinceMs (judged Offline at once) and the listener runs', async () => {
    const { driver, time, state, availability, triggers } = await probe();
    availability('online');
    state(19.5);
    const before = triggers();
    time.advanceS(30);
    availability('offline');
    assert.equal(triggers(), before + 1, 'the sampler is told at once');
    const reading = await driver.readStamped();
    assert.equal(reading.liveness?.offlineSinceMs, time.nowMs());
    const freshness = freshnessOf(reading, time.nowMs(), STALE_AFTER_MS);
    assert.ok(!freshness.fresh && freshness.reason === 'Offline');
    assert.match(
      freshness.message,
      /device offline for 0 s \(availability zigbee2mqtt\/fermenter_probe\/availability\)/,
    );
  });

  test('back online, a value from before the offline spell is not kept by liveness: it ages by itself', async () => {
    const { driver, time, state, availability, triggers } = await probe();
    availability('online');
    state(19.5);
    time.advanceS(120);
    availability('offline');
    time.advanceS(120);
    availability('online');
    assert.equal(triggers(), 4, 'value, online at start, offline and online each trigger');
    await assert.rejects(driver.read(), /last value on zigbee2mqtt\/fermenter_probe is 240 s old/);
    state(19.0);
    time.advanceS(600);
    assert.equal(await driver.read(), 19.0, 'a value sent after the return is kept in force again');
  });

  test('a retained value with last_seen is stamped min(arrival, last_seen): an hours-old value is not news', async () => {
    const { driver, time, state, availability } = await probe({
      availabilityTopic: AVAILABILITY,
      lastSeenField: 'last_seen',
    });
    availability('online');
    const sentAtMs = time.nowMs() - 2 * 3_600_000;
    state(19.5, { last_seen: new Date(sentAtMs).toISOString() }, true);
    const reading = await driver.readStamped().catch((err: Error) => err);
    assert.ok(reading instanceof Error && /quiet for 120 min/.test(reading.message), String(reading));
    state(19.6, { last_seen: new Date(time.nowMs()).toISOString() }, false);
    assert.equal((await driver.readStamped()).atMs, time.nowMs(), 'a live message is stamped on arrival');
  });

  test('a live message stamps on arrival even when last_seen lags', async () => {
    const { driver, time, state } = await probe({ lastSeenField: 'last_seen' });
    state(19.5, { last_seen: time.nowMs() - 5_000 });
    const reading = await driver.readStamped();
    assert.equal(reading.atMs, time.nowMs());
    assert.equal(reading.liveness?.seenAtMs, time.nowMs() - 5_000, 'last_seen is a sighting');
  });

  test('a wall-clock step moves the value and the liveness stamps together', async () => {
    const { driver, time, state, availability } = await probe();
    state(19.5);
    availability('offline');
    const offlineAtMs = time.nowMs();
    time.stepWall(3_600_000);
    const reading = await driver.readStamped();
    assert.equal(reading.atMs, offlineAtMs + 3_600_000);
    assert.equal(reading.liveness?.offlineSinceMs, offlineAtMs + 3_600_000);
  });
});
