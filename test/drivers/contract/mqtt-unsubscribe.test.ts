/**
 * Replaced MQTT drivers must unsubscribe their topics (section 7): a driver replaced
 * on reload, or stopped, leaves no handler on the shared transport, and the driver that
 * replaces it on the same topic keeps receiving.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DIMMER_TOPICS,
  PLUG_TOPICS,
  SENSOR_TOPIC,
  tasmotaDimmer,
  tasmotaSwitch,
  topicSensor,
} from '../mqtt/devices.js';
import { FakeTransport } from '../mqtt/fake-transport.js';

/** Each MQTT driver kind, the topic it subscribes to, and a message it understands as 1. */
const cases = [
  { name: 'MqttSwitch', build: tasmotaSwitch, topic: PLUG_TOPICS.state, message: 'ON' },
  { name: 'MqttLevel', build: tasmotaDimmer, topic: DIMMER_TOPICS.state, message: '{"Dimmer":100}' },
  { name: 'MqttSensor', build: topicSensor, topic: SENSOR_TOPIC, message: '1' },
] as const;

type MqttDriver = ReturnType<(typeof cases)[number]['build']>;

/** What the driver reports now: an actuator's observed state, a sensor's reading. */
const report = (driver: MqttDriver) => ('observe' in driver ? driver.observe() : driver.read());

for (const c of cases) {
  describe(`replaced MQTT drivers unsubscribe their topics: ${c.name}`, () => {
    test('given two drivers on one topic (a reload: old and new), when the old one stops, then only its handler is gone and the new one keeps receiving', async () => {
      const transport = new FakeTransport();
      const old = c.build(transport);
      const replacement = c.build(transport);
      await old.start();
      await replacement.start();
      assert.equal(transport.handlerCount(c.topic), 2);
      await old.stop();
      assert.equal(transport.handlerCount(c.topic), 1);
      assert.deepEqual(transport.unsubscribed, [c.topic]);
      transport.deliver(c.topic, c.message);
      assert.equal(await report(replacement), 1);
      await replacement.stop();
      assert.equal(transport.handlerCount(c.topic), 0);
      assert.deepEqual(transport.subscriptions, []);
    });

    test('stopped twice, or before it started, it unsubscribes nothing more', async () => {
      const transport = new FakeTransport();
      const other = c.build(transport);
      await other.start();
      await c.build(transport).stop();
      const driver = c.build(transport);
      await driver.start();
      await driver.stop();
      await driver.stop();
      assert.equal(transport.handlerCount(c.topic), 1);
      assert.deepEqual(transport.unsubscribed, [c.topic]);
    });
  });
}

test('a listener registered on a stopped MqttSensor is not called once its replacement receives', async () => {
  const transport = new FakeTransport();
  const old = topicSensor(transport);
  await old.start();
  let oldCalls = 0;
  old.onValue(() => oldCalls++);
  await old.stop();
  const replacement = topicSensor(transport);
  await replacement.start();
  transport.deliver(SENSOR_TOPIC, '21.5');
  assert.equal(oldCalls, 0);
  assert.equal(await replacement.read(), 21.5);
});
