/**
 * A device that publishes "nan", "inf" or null (ESPHome with a disconnected probe, Tasmota's
 * null, a broken gateway) is saying the value is unknown now. The MQTT sensor hands that on as
 * a non-finite reading stamped on arrival, so the loop goes safe at once, instead of refusing
 * the message and letting the last good value run the heater until it goes stale (180 s).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_PAYLOAD_BYTES } from '../../src/drivers/mqtt/payload.js';
import { SENSOR_TOPIC, topicSensor } from './mqtt/devices.js';
import { FakeTransport, manualTime } from './mqtt/fake-transport.js';

const TOPIC = SENSOR_TOPIC;

async function sensor(field?: string) {
  const transport = new FakeTransport();
  const time = manualTime();
  const driver = topicSensor(transport, { field, ...time });
  await driver.start();
  let told = 0;
  driver.onValue(() => told++);
  return { driver, transport, time, told: () => told };
}

describe('MqttSensor: values that are not numbers', () => {
  const plain: Array<[payload: string, value: number]> = [
    ['nan', Number.NaN],
    ['NaN', Number.NaN],
    ['inf', Number.POSITIVE_INFINITY],
    ['-inf', Number.NEGATIVE_INFINITY],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['1e999', Number.POSITIVE_INFINITY],
    ['-1e999', Number.NEGATIVE_INFINITY],
    ['unavailable', Number.NaN],
    ['', Number.NaN],
    ['x'.repeat(MAX_PAYLOAD_BYTES + 1), Number.NaN],
  ];
  for (const [payload, value] of plain) {
    test(`plain payload ${JSON.stringify(payload.slice(0, 12))}: given a good value, then the reading is ${value}, stamped on arrival`, async () => {
      const { driver, transport, time, told } = await sensor();
      transport.deliver(TOPIC, '21.5');
      time.advanceS(5);
      const arrivedAtMs = time.nowMs();
      transport.deliver(TOPIC, payload);
      time.advanceS(1);
      assert.deepEqual(await driver.readStamped(), { value, atMs: arrivedAtMs });
      assert.ok(Object.is(await driver.read(), value));
      assert.equal(told(), 2, 'the daemon is told at once, so the loop runs now');
    });
  }

  const json: Array<[document: string, value: number]> = [
    ['{"AM2301":{"Temperature":null}}', Number.NaN],
    ['{"AM2301":{"Temperature":"nan"}}', Number.NaN],
    ['{"AM2301":{"Temperature":"inf"}}', Number.POSITIVE_INFINITY],
    ['{"AM2301":{"Temperature":1e999}}', Number.POSITIVE_INFINITY],
    ['{"AM2301":{"Temperature":"error"}}', Number.NaN],
    ['{"AM2301":{"Temperature":{"v":1}}}', Number.NaN],
    ['not json', Number.NaN],
  ];
  for (const [document, value] of json) {
    test(`JSON field: ${document} gives ${value}`, async () => {
      const { driver, transport, time } = await sensor('AM2301.Temperature');
      transport.deliver(TOPIC, '{"AM2301":{"Temperature":21.5}}');
      const arrivedAtMs = time.nowMs();
      transport.deliver(TOPIC, document);
      assert.deepEqual(await driver.readStamped(), { value, atMs: arrivedAtMs });
    });
  }

  test('a message without the field still says nothing about this sensor: the good value stays', async () => {
    const { driver, transport } = await sensor('AM2301.Temperature');
    transport.deliver(TOPIC, '{"AM2301":{"Temperature":21.5}}');
    transport.deliver(TOPIC, '{"DS18B20":{"Temperature":55}}');
    assert.equal(await driver.read(), 21.5);
  });

  test('after a NaN, the next good value is read again', async () => {
    const { driver, transport } = await sensor();
    transport.deliver(TOPIC, 'nan');
    transport.deliver(TOPIC, '22');
    assert.equal(await driver.read(), 22);
  });

  test('a NaN older than staleAfter is stale like any other value', async () => {
    const { driver, transport, time } = await sensor();
    transport.deliver(TOPIC, 'nan');
    time.advanceS(181);
    await assert.rejects(driver.read(), /181 s old/);
  });
});
