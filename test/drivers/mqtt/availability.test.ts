import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AVAILABILITY_PRESET_NAMES,
  AvailabilityWatcher,
  availabilityTopic,
  bridgeStateTopic,
  parseAvailability,
} from '../../../src/drivers/mqtt/availability.js';
import { FakeTransport, manualTime } from './fake-transport.js';

describe('availabilityTopic', () => {
  const table: [(typeof AVAILABILITY_PRESET_NAMES)[number], string, string][] = [
    ['zigbee2mqtt', 'zigbee2mqtt/fermenter_probe', 'zigbee2mqtt/fermenter_probe/availability'],
    ['tasmota', 'plug', 'tele/plug/LWT'],
    ['esphome', 'kettle', 'kettle/status'],
    ['shelly', 'shellyplus1pm-a8032ab12345', 'shellyplus1pm-a8032ab12345/online'],
    ['shelly', 'shellies/shelly1-ABC123', 'shellies/shelly1-ABC123/online'],
  ];
  for (const [preset, device, topic] of table) {
    test(`${preset} ${device} → ${topic}`, () => {
      assert.equal(availabilityTopic(preset, device), topic);
    });
  }

  test('every preset has a topic', () => {
    for (const preset of AVAILABILITY_PRESET_NAMES) assert.match(availabilityTopic(preset, 'x'), /x/);
  });
});

describe('bridgeStateTopic', () => {
  const table: [(typeof AVAILABILITY_PRESET_NAMES)[number], string, string | undefined][] = [
    ['zigbee2mqtt', 'zigbee2mqtt/fermenter_probe', 'zigbee2mqtt/bridge/state'],
    ['zigbee2mqtt', 'z2m/upstairs/living_window', 'z2m/bridge/state'],
    ['tasmota', 'plug', undefined],
    ['esphome', 'kettle', undefined],
    ['shelly', 'shellies/shelly1-ABC123', undefined],
  ];
  for (const [preset, device, topic] of table) {
    test(`${preset} ${device} → ${topic ?? 'no bridge'}`, () => {
      assert.equal(bridgeStateTopic(preset, device), topic);
    });
  }
});

describe('parseAvailability', () => {
  const table: [string, string, ReturnType<typeof parseAvailability>][] = [
    ['Zigbee2MQTT JSON online', '{"state":"online"}', 'online'],
    ['Zigbee2MQTT JSON offline', '{"state":"offline"}', 'offline'],
    ['Zigbee2MQTT legacy online', 'online', 'online'],
    ['Zigbee2MQTT legacy offline', 'offline', 'offline'],
    ['Tasmota LWT Online', 'Online', 'online'],
    ['Tasmota LWT Offline', 'Offline', 'offline'],
    ['ESPHome birth', 'online', 'online'],
    ['Shelly true', 'true', 'online'],
    ['Shelly false', 'false', 'offline'],
    ['blanks around', '  Online\n', 'online'],
    ['a JSON string', '"offline"', 'offline'],
    ['state as a boolean', '{"state":false}', 'offline'],
    ['empty', '', 'garbage'],
    ['a number', '1', 'garbage'],
    ['a word', 'maybe', 'garbage'],
    ['broken JSON', '{"state":"online"', 'garbage'],
    ['JSON without state', '{"status":"online"}', 'garbage'],
    ['null state', '{"state":null}', 'garbage'],
    ['an array', '["online"]', 'garbage'],
    ['oversized', `{"state":"online","pad":"${'x'.repeat(300)}"}`, 'garbage'],
  ];
  for (const [name, payload, expected] of table) {
    test(`${name}: ${JSON.stringify(payload.slice(0, 30))} → ${expected}`, () => {
      assert.equal(parseAvailability(Buffer.from(payload)), expected);
    });
  }
});

describe('AvailabilityWatcher', () => {
  const TOPIC = 'zigbee2mqtt/probe/availability';

  function watcher() {
    const transport = new FakeTransport();
    const time = manualTime();
    let changes = 0;
    const watch = new AvailabilityWatcher(transport, TOPIC, time.nowMs, () => changes++);
    watch.start();
    return { transport, time, watch, changes: () => changes };
  }

  test('given no message, the state is unknown; it subscribes once at QoS 0', () => {
    const { transport, watch } = watcher();
    watch.start();
    assert.deepEqual(watch.status, { state: 'unknown' });
    assert.deepEqual(transport.subscriptions, [{ filter: TOPIC, qos: 0 }]);
  });

  test('given online then a repeat, the state keeps its since and moves its last; one change is told', () => {
    const { transport, time, watch, changes } = watcher();
    const startMs = time.nowMs();
    transport.deliver(TOPIC, '{"state":"online"}', { retain: true });
    time.advanceS(30);
    transport.deliver(TOPIC, '{"state":"online"}');
    assert.deepEqual(watch.status, { state: 'online', sinceMs: startMs, lastMs: startMs + 30_000 });
    assert.equal(changes(), 1);
  });

  test('given online then offline, the state is offline since the second message, and both changes are told', () => {
    const { transport, time, watch, changes } = watcher();
    transport.deliver(TOPIC, 'online');
    time.advanceS(10);
    transport.deliver(TOPIC, 'offline');
    assert.equal(watch.status.state, 'offline');
    assert.equal(watch.status.sinceMs, time.nowMs());
    assert.equal(changes(), 2);
  });

  test('given online then garbage, the device is no longer taken as alive and the garbage is named', () => {
    const { transport, watch } = watcher();
    transport.deliver(TOPIC, 'online');
    transport.deliver(TOPIC, 'banana');
    assert.deepEqual(watch.status, { state: 'unknown', garbage: '"banana"' });
  });

  test('after stop, messages change nothing and the subscription is gone', () => {
    const { transport, watch } = watcher();
    transport.deliver(TOPIC, 'online');
    watch.stop();
    transport.deliver(TOPIC, 'offline');
    assert.equal(watch.status.state, 'online');
    assert.equal(transport.handlerCount(TOPIC), 0);
  });
});
