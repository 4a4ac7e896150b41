/**
 * Zigbee2MQTT's crash, as the broker shows it: its last will sets `<base>/bridge/state` to
 * `{"state":"offline"}` (zigbee2mqtt.io guide/usage/mqtt_topics_and_messages), while each
 * device's `<base>/<device>/availability` stays retained `{"state":"online"}` (Zigbee2MQTT
 * publishes those itself, so nobody clears them). For every sensor kind whose liveness comes
 * from the zigbee2mqtt preset, the config built into a driver must read the bridge offline as
 * the device offline, naming the bridge.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../../src/config/load.js';
import { buildDrivers } from '../../../src/kinds/build.js';
import { FakeTransport, manualTime } from './fake-transport.js';

const BRIDGE = 'z2m/bridge/state';

function configWith(sensor: string): string {
  return `
version: 1
node: { id: pi }
mqtt: {}
sensors:
  probe: { kind: mqtt, topic: th/probe }
  under_test: ${sensor}
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
loops:
  room: { sensor: probe, raise: heater, setpoint: 19, limits: { min: 5, max: 30 }, interlocks: [{ sensor: under_test }], controller: { type: hysteresis } }
`;
}

/** kind, section, its device topic, a state message that reads a number. */
const kinds: [string, string, string, string][] = [
  [
    'mqtt with liveness preset zigbee2mqtt',
    '{ kind: mqtt, topic: z2m/cellar/probe, field: temperature, liveness: { preset: zigbee2mqtt, device: z2m/cellar/probe } }',
    'z2m/cellar/probe',
    '{"temperature":12.5}',
  ],
  [
    'mqtt_binary with preset zigbee2mqtt',
    '{ kind: mqtt_binary, preset: zigbee2mqtt, device: z2m/cellar/window }',
    'z2m/cellar/window',
    '{"contact":true}',
  ],
];

describe('the Zigbee2MQTT bridge state reaches every sensor kind with the zigbee2mqtt availability preset', () => {
  for (const [name, section, device, state] of kinds) {
    test(`given ${name} online with a state, when the bridge dies, then the reading is offline, naming the bridge`, async () => {
      const loaded = parseConfigText(configWith(section));
      assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
      const transport = new FakeTransport();
      const time = manualTime();
      const drivers = buildDrivers(loaded.config, time.nowMs, { mqtt: transport });
      const sensor = drivers.sensors.get('under_test');
      assert.ok(sensor?.readStamped);
      await sensor.start?.();
      assert.ok(
        transport.subscriptions.some((s) => s.filter === BRIDGE && s.qos === 0),
        `subscribed to ${BRIDGE}`,
      );
      transport.deliver(BRIDGE, '{"state":"online"}', { retain: true });
      transport.deliver(`${device}/availability`, '{"state":"online"}', { retain: true });
      transport.deliver(device, state);
      assert.equal((await sensor.readStamped()).liveness?.offlineSinceMs, undefined);

      time.advanceS(10);
      transport.deliver(BRIDGE, '{"state":"offline"}', { retain: true });
      const reading = await sensor.readStamped();
      assert.equal(reading.liveness?.offlineSinceMs, time.nowMs());
      assert.match(reading.liveness?.via ?? '', new RegExp(`bridge ${BRIDGE} offline`));
      await sensor.stop?.();
      assert.equal(transport.handlerCount(BRIDGE), 0);
    });
  }
});
