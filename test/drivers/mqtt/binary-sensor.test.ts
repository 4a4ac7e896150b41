/**
 * The MQTT contact driver (drivers/mqtt/binary-sensor.ts) on a fake transport and a clock moved
 * by hand: what `readStamped()` hands the sampler for each thing a Zigbee2MQTT Aqara contact
 * and its availability topic can say, and for a Tasmota switch on its two topics.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { binaryPreset } from '../../../src/drivers/mqtt/binary-payload.js';
import { MqttBinarySensor } from '../../../src/drivers/mqtt/binary-sensor.js';
import { FakeTransport, manualTime } from './fake-transport.js';

const WINDOW = 'zigbee2mqtt/living_window';
const AVAILABILITY = `${WINDOW}/availability`;
const VIA = `availability ${AVAILABILITY}`;
const MAX_QUIET_MS = 90_000_000;

/** The next turn of the event loop: the driver tells its listener then (once per burst). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function aqaraContact(opts: { liveness?: boolean } = {}) {
  const transport = new FakeTransport();
  const time = manualTime();
  const sensor = new MqttBinarySensor({
    id: 'window',
    transport,
    ...binaryPreset('zigbee2mqtt', WINDOW, 'contact'),
    liveness:
      opts.liveness === false ? undefined : { availabilityTopic: AVAILABILITY, maxQuietMs: MAX_QUIET_MS },
    nowMs: time.nowMs,
    monotonicMs: time.monotonicMs,
  });
  let changes = 0;
  sensor.onValue(() => changes++);
  return { transport, time, sensor, changes: () => changes };
}

describe('MqttBinarySensor: a Zigbee2MQTT Aqara contact', () => {
  test('given nothing received, read throws and names the topic', async () => {
    const { sensor } = aqaraContact();
    await sensor.start();
    await assert.rejects(sensor.readStamped(), /no state received yet on zigbee2mqtt\/living_window/);
  });

  test('it subscribes to the state and the availability topic, at QoS 0, and lets go of both', async () => {
    const { sensor, transport } = aqaraContact();
    await sensor.start();
    assert.deepEqual(transport.subscriptions, [
      { filter: WINDOW, qos: 0 },
      { filter: AVAILABILITY, qos: 0 },
    ]);
    await sensor.stop();
    assert.deepEqual(transport.subscriptions, []);
  });

  test('given online and closed, then 0 stamped on arrival, with the device seen now; open reads 1', async () => {
    const { sensor, transport, time, changes } = aqaraContact();
    await sensor.start();
    transport.deliver(AVAILABILITY, '{"state":"online"}', { retain: true });
    transport.deliver(WINDOW, '{"battery":97,"contact":true,"linkquality":72}');
    await nextTurn();
    assert.equal(changes(), 1, 'availability and state in one burst: the listener is told once, after both');
    const closedAtMs = time.nowMs();
    time.advanceS(3600);
    assert.deepEqual(await sensor.readStamped(), {
      value: 0,
      atMs: closedAtMs,
      liveness: { via: VIA, maxQuietMs: MAX_QUIET_MS, seenAtMs: time.nowMs() },
    });
    transport.deliver(WINDOW, '{"battery":97,"contact":false,"linkquality":72}');
    assert.equal(await sensor.read(), 1);
    await nextTurn();
    assert.equal(changes(), 2, 'the opening makes the sampler read at once');
  });

  test('given garbage, then NaN at once with what was sent; a good state again reads again', async () => {
    const { sensor, transport, time, changes } = aqaraContact({ liveness: false });
    await sensor.start();
    transport.deliver(WINDOW, '{"contact":true}');
    time.advanceS(10);
    transport.deliver(WINDOW, '{"contact":"banana"}');
    assert.deepEqual(await sensor.readStamped(), {
      value: Number.NaN,
      atMs: time.nowMs(),
      whyNotANumber: `${WINDOW}: field contact is "banana", neither on (false) nor off (true)`,
    });
    transport.deliver(WINDOW, 'banana');
    assert.match((await sensor.readStamped()).whyNotANumber ?? '', /payload "banana" is not JSON/);
    transport.deliver(WINDOW, '{"contact":true}');
    assert.deepEqual(await sensor.readStamped(), { value: 0, atMs: time.nowMs() });
    await nextTurn();
    assert.equal(changes(), 1, 'one burst, one call');
  });

  test('a message without the contact field is ignored', async () => {
    const { sensor, transport, changes } = aqaraContact({ liveness: false });
    await sensor.start();
    transport.deliver(WINDOW, '{"contact":false}');
    await nextTurn();
    transport.deliver(WINDOW, '{"linkquality":40}');
    await nextTurn();
    assert.equal(await sensor.read(), 1);
    assert.equal(changes(), 1, 'the message without the field told nobody');
  });

  test('given the device goes offline, then NaN carrying offlineSinceMs, and the loop is told at once', async () => {
    const { sensor, transport, time, changes } = aqaraContact();
    await sensor.start();
    transport.deliver(AVAILABILITY, '{"state":"online"}', { retain: true });
    transport.deliver(WINDOW, '{"contact":true}');
    const closedAtMs = time.nowMs();
    time.advanceS(60);
    await nextTurn();
    const before = changes();
    transport.deliver(AVAILABILITY, '{"state":"offline"}');
    const offlineAtMs = time.nowMs();
    await nextTurn();
    assert.equal(changes(), before + 1, 'the offline message itself makes the sampler read');
    time.advanceS(5);
    assert.deepEqual(await sensor.readStamped(), {
      value: Number.NaN,
      atMs: closedAtMs,
      liveness: { via: VIA, maxQuietMs: MAX_QUIET_MS, offlineSinceMs: offlineAtMs },
      whyNotANumber: `device offline (${VIA})`,
    });
    // Back online: the state from before the outage vouches for nothing (the window may have
    // opened meanwhile, unreported): NaN, saying so, until a new state comes.
    transport.deliver(AVAILABILITY, 'online');
    assert.deepEqual(await sensor.readStamped(), {
      value: Number.NaN,
      atMs: closedAtMs,
      liveness: { via: VIA, maxQuietMs: MAX_QUIET_MS, seenAtMs: time.nowMs() },
      whyNotANumber: `device back online; no state since it went offline (${VIA})`,
    });
  });

  /**
   * What a state message after an outage does. Zigbee2MQTT publishes the state live (not
   * retained unless `retain: true` is set for the device; zigbee2mqtt.io guide/configuration/
   * devices-groups), and the broker resends a retained one at every resubscribe.
   */
  const afterOutage: [string, (at: { offlineMs: number; nowMs: number }) => [string, boolean], number][] = [
    ['a live closed state', () => ['{"contact":true}', false], 0],
    ['a live open state', () => ['{"contact":false}', false], 1],
    ['a retained closed state (the broker resending it)', () => ['{"contact":true}', true], Number.NaN],
    [
      'a retained closed state whose last_seen is from before the outage',
      ({ offlineMs }) => [JSON.stringify({ contact: true, last_seen: offlineMs - 60_000 }), true],
      Number.NaN,
    ],
    [
      'a retained closed state whose last_seen postdates the outage',
      ({ nowMs }) => [JSON.stringify({ contact: true, last_seen: nowMs - 1000 }), true],
      0,
    ],
  ];
  for (const [name, message, expected] of afterOutage) {
    test(`given closed, offline, then online again, when ${name} comes, then it reads ${expected}`, async () => {
      const transport = new FakeTransport();
      const time = manualTime();
      const sensor = new MqttBinarySensor({
        id: 'window',
        transport,
        ...binaryPreset('zigbee2mqtt', WINDOW, 'contact'),
        liveness: { availabilityTopic: AVAILABILITY, lastSeenField: 'last_seen', maxQuietMs: MAX_QUIET_MS },
        nowMs: time.nowMs,
      });
      await sensor.start();
      transport.deliver(AVAILABILITY, 'online', { retain: true });
      transport.deliver(WINDOW, '{"contact":true}');
      time.advanceS(60);
      const offlineMs = time.nowMs();
      transport.deliver(AVAILABILITY, 'offline');
      time.advanceS(600);
      transport.deliver(AVAILABILITY, 'online');
      time.advanceS(5);
      const [payload, retain] = message({ offlineMs, nowMs: time.nowMs() });
      transport.deliver(WINDOW, payload, { retain });
      const reading = await sensor.readStamped();
      assert.ok(Object.is(reading.value, expected), `read ${reading.value}`);
      if (Number.isNaN(expected))
        assert.match(reading.whyNotANumber ?? '', /^device back online; no state since/);
    });
  }

  test('given offline, when the retained state is resent (a resubscribe), then it is void once the device is back', async () => {
    const { sensor, transport } = aqaraContact();
    await sensor.start();
    transport.deliver(AVAILABILITY, 'offline', { retain: true });
    transport.deliver(WINDOW, '{"contact":true}', { retain: true });
    transport.deliver(AVAILABILITY, 'online');
    const reading = await sensor.readStamped();
    assert.ok(Number.isNaN(reading.value));
    assert.match(reading.whyNotANumber ?? '', /^device back online; no state since it went offline/);
    transport.deliver(WINDOW, '{"contact":true}');
    assert.equal(await sensor.read(), 0, 'a live state after the return counts');
  });

  test('given no outage, a retained state at start counts (the daemon restarting learns it at once)', async () => {
    const { sensor, transport } = aqaraContact();
    await sensor.start();
    transport.deliver(WINDOW, '{"contact":true}', { retain: true });
    transport.deliver(AVAILABILITY, 'online', { retain: true });
    assert.equal(await sensor.read(), 0);
  });

  test('given offline before any state, then NaN (a reading, so the reason shows), not an error', async () => {
    const { sensor, transport, time } = aqaraContact();
    await sensor.start();
    transport.deliver(AVAILABILITY, 'offline', { retain: true });
    const reading = await sensor.readStamped();
    assert.ok(Number.isNaN(reading.value));
    assert.equal(reading.atMs, time.nowMs());
    assert.equal(reading.liveness?.offlineSinceMs, time.nowMs());
  });

  test('after stop, messages change nothing, read keeps the last state, and nobody is told', async () => {
    const { sensor, transport, changes } = aqaraContact({ liveness: false });
    await sensor.start();
    transport.deliver(WINDOW, '{"contact":true}');
    await sensor.stop();
    transport.deliver(WINDOW, '{"contact":false}');
    await nextTurn();
    assert.equal(await sensor.read(), 0);
    assert.equal(changes(), 0, 'stopped before the burst was told');
  });

  test('a wall-clock step moves the stamps: the state keeps its real age', async () => {
    const { sensor, transport, time } = aqaraContact({ liveness: false });
    await sensor.start();
    transport.deliver(WINDOW, '{"contact":true}');
    const atMs = time.nowMs();
    time.stepWall(-7_200_000);
    assert.equal((await sensor.readStamped()).atMs, atMs - 7_200_000);
  });
});

describe('MqttBinarySensor: a Tasmota switch read on RESULT and SENSOR', () => {
  test('the latest of either topic is the state; a RESULT about the relay is ignored', async () => {
    const transport = new FakeTransport();
    const time = manualTime();
    const sensor = new MqttBinarySensor({
      id: 'door',
      transport,
      ...binaryPreset('tasmota', 'sonoff', 1),
      nowMs: time.nowMs,
    });
    await sensor.start();
    transport.deliver('tele/sonoff/SENSOR', '{"Time":"2026-12-02T07:41:28","Switch1":"OFF"}');
    assert.equal(await sensor.read(), 0);
    transport.deliver('stat/sonoff/RESULT', '{"Switch1":{"Action":"ON"}}');
    assert.equal(await sensor.read(), 1);
    transport.deliver('stat/sonoff/RESULT', '{"POWER":"OFF"}');
    assert.equal(await sensor.read(), 1);
  });
});
