import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MqttSensor } from '../../../src/drivers/mqtt/sensor.js';
import { SENSOR_TOPIC, topicSensor } from './devices.js';
import { FakeTransport, manualTime } from './fake-transport.js';

const TOPIC = SENSOR_TOPIC;

/** A started sensor (Tasmota's AM2301 unless told) on a fake transport, stale after 180 s, and a clock moved by hand. */
async function sensor({ field }: { field?: string } = { field: 'AM2301.Temperature' }) {
  const transport = new FakeTransport();
  const time = manualTime();
  const driver = topicSensor(transport, { field, ...time });
  await driver.start();
  const tasmota = (temperature: unknown) =>
    transport.deliver(TOPIC, JSON.stringify({ AM2301: { Temperature: temperature, Humidity: 40 } }));
  return { driver, transport, time, tasmota };
}

describe('MqttSensor', () => {
  test('is a real (not simulated) driver that subscribes to its topic at QoS 0 on start, once', async () => {
    const { driver, transport } = await sensor();
    await driver.start();
    assert.equal(driver.simulated, false);
    assert.deepEqual(transport.subscriptions, [{ filter: TOPIC, qos: 0 }]);
  });

  test('given no message yet, read throws "no value received yet"', async () => {
    const { driver } = await sensor();
    await assert.rejects(driver.read(), /no value received yet on tele\/th1\/SENSOR/);
  });

  test('given no message and no broker, the error says MQTT is not connected', async () => {
    const { driver, transport } = await sensor();
    transport.connected = false;
    await assert.rejects(driver.read(), /\(MQTT not connected\)/);
  });

  test('given a message, read returns its value until it is older than staleAfter, then throws stale', async () => {
    const { driver, time, tasmota } = await sensor();
    tasmota(21.4);
    assert.equal(await driver.read(), 21.4);
    time.advanceS(180);
    assert.equal(await driver.read(), 21.4, 'exactly staleAfter old is still fresh');
    time.advanceS(1);
    await assert.rejects(driver.read(), /last value on tele\/th1\/SENSOR is 181 s old \(stale after 180 s\)/);
    tasmota(21.6);
    assert.equal(await driver.read(), 21.6, 'a new message makes it fresh again');
  });

  test('readStamped gives the arrival time, not the time of the read', async () => {
    const { driver, time, tasmota } = await sensor();
    const arrivedAtMs = time.nowMs();
    tasmota(20);
    time.advanceS(30);
    assert.deepEqual(await driver.readStamped(), { value: 20, atMs: arrivedAtMs });
  });

  test('given a good value then garbage, read gives NaN (unknown now: the loop goes safe) until the next good value', async () => {
    const { driver, tasmota } = await sensor();
    tasmota(21);
    tasmota('error');
    assert.ok(Number.isNaN(await driver.read()));
    tasmota(null);
    assert.ok(Number.isNaN(await driver.read()));
    tasmota(22);
    assert.equal(await driver.read(), 22);
  });

  test('a message without the field is ignored: the previous value stays', async () => {
    const { driver, transport, tasmota } = await sensor();
    tasmota(21);
    transport.deliver(TOPIC, JSON.stringify({ DS18B20: { Temperature: 55 } }));
    assert.equal(await driver.read(), 21);
  });

  test('only messages without the field: the error says so (a misspelt field)', async () => {
    const { driver, transport } = await sensor({ field: 'AM2301.Temprature' });
    transport.deliver(TOPIC, JSON.stringify({ AM2301: { Temperature: 21 } }));
    transport.deliver(TOPIC, JSON.stringify({ AM2301: { Temperature: 21 } }));
    await assert.rejects(driver.read(), /2 message\(s\) without field AM2301.Temprature/);
  });

  test('plain payloads: the number is the payload', async () => {
    const { driver, transport } = await sensor({});
    transport.deliver(TOPIC, '19.5');
    assert.equal(await driver.read(), 19.5);
    transport.deliver(TOPIC, 'nan');
    assert.ok(Number.isNaN(await driver.read()), 'nan is a reading: unknown now');
    transport.deliver(TOPIC, '1e999');
    assert.equal(await driver.read(), Number.POSITIVE_INFINITY);
  });

  test('a retained message counts, stamped on arrival (and goes stale like any other)', async () => {
    const { driver, transport, time } = await sensor({});
    transport.deliver(TOPIC, '18', { retain: true });
    assert.equal(await driver.read(), 18);
    time.advanceS(181);
    await assert.rejects(driver.read(), /stale/);
  });

  test('onValue: the listener is told about every value and refusal, not about ignored messages', async () => {
    const { driver, transport, tasmota } = await sensor();
    let calls = 0;
    driver.onValue(() => calls++);
    tasmota(21);
    tasmota('garbage');
    transport.deliver(TOPIC, '{"other":1}');
    assert.equal(calls, 2);
  });

  test('onValue replaces the previous listener (registering again on reload is harmless)', async () => {
    const { driver, tasmota } = await sensor();
    const calls: string[] = [];
    driver.onValue(() => calls.push('first'));
    driver.onValue(() => calls.push('second'));
    tasmota(21);
    assert.deepEqual(calls, ['second']);
  });

  test('after stop, messages are ignored and the listener is not called', async () => {
    const { driver, tasmota } = await sensor();
    let calls = 0;
    driver.onValue(() => calls++);
    tasmota(21);
    await driver.stop();
    tasmota(30);
    assert.equal(await driver.read(), 21);
    assert.equal(calls, 1);
  });

  test('staleAfterMs must be positive', () => {
    assert.throws(
      () =>
        new MqttSensor({
          id: 's',
          transport: new FakeTransport(),
          topic: 't',
          staleAfterMs: 0,
          nowMs: () => 0,
        }),
      RangeError,
    );
  });
});
