import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { MqttLevel, MqttSwitch } from '../../../src/drivers/mqtt/actuator.js';
import { switchPreset } from '../../../src/drivers/mqtt/payload.js';
import { FakeTransport, manualTime } from './fake-transport.js';

const NO_RETAIN_QOS1 = { qos: 1, retain: false };

/** A started Tasmota plug `plug` (state stale after 600 s) on a fake transport. */
async function tasmotaPlug(opts: { logger?: pino.Logger } = {}) {
  const transport = new FakeTransport();
  const time = manualTime();
  const plug = new MqttSwitch({
    id: 'heater',
    transport,
    ...switchPreset('tasmota', 'plug'),
    stateStaleAfterMs: 600_000,
    ...time,
    ...opts,
  });
  await plug.start();
  return { plug, transport, time, state: (payload: string) => transport.deliver('stat/plug/POWER', payload) };
}

/** A started dimmer: plain Dimmer commands, state in the field Dimmer of stat/dim/RESULT. */
async function dimmer(levelScale = 100, commandField?: string) {
  const transport = new FakeTransport();
  const time = manualTime();
  const driver = new MqttLevel({
    id: 'fan',
    transport,
    commandTopic: 'cmnd/dim/Dimmer',
    stateTopic: 'stat/dim/RESULT',
    stateField: 'Dimmer',
    commandField,
    levelScale,
    stateStaleAfterMs: 600_000,
    ...time,
  });
  await driver.start();
  const report = (dimmerValue: unknown) =>
    transport.deliver('stat/dim/RESULT', JSON.stringify({ POWER: 'ON', Dimmer: dimmerValue }));
  return { driver, transport, time, report };
}

describe('MqttSwitch', () => {
  test('is a real relay that subscribes to its state topic at QoS 0 on start', async () => {
    const { plug, transport } = await tasmotaPlug();
    assert.equal(plug.kind, 'relay');
    assert.equal(plug.simulated, false);
    assert.deepEqual(transport.subscriptions, [{ filter: 'stat/plug/POWER', qos: 0 }]);
  });

  test('tasmota: write(1) publishes ON and write(0) OFF on cmnd/plug/POWER, QoS 1, never retained', async () => {
    const { plug, transport } = await tasmotaPlug();
    await plug.write(1);
    await plug.write(0);
    await plug.write(1);
    assert.deepEqual(transport.published, [
      { topic: 'cmnd/plug/POWER', payload: 'ON', opts: NO_RETAIN_QOS1 },
      { topic: 'cmnd/plug/POWER', payload: 'OFF', opts: NO_RETAIN_QOS1 },
      { topic: 'cmnd/plug/POWER', payload: 'ON', opts: NO_RETAIN_QOS1 },
    ]);
  });

  test('zigbee2mqtt: write publishes {"state":"ON"} on <device>/set and reads the state field of <device>', async () => {
    const transport = new FakeTransport();
    const plug = new MqttSwitch({
      id: 'heater',
      transport,
      ...switchPreset('zigbee2mqtt', 'zigbee2mqtt/heater_plug'),
      stateStaleAfterMs: 600_000,
      ...manualTime(),
    });
    await plug.start();
    await plug.write(1);
    await plug.write(0);
    assert.deepEqual(transport.published, [
      { topic: 'zigbee2mqtt/heater_plug/set', payload: '{"state":"ON"}', opts: NO_RETAIN_QOS1 },
      { topic: 'zigbee2mqtt/heater_plug/set', payload: '{"state":"OFF"}', opts: NO_RETAIN_QOS1 },
    ]);
    assert.deepEqual(transport.subscriptions, [{ filter: 'zigbee2mqtt/heater_plug', qos: 0 }]);
    transport.deliver('zigbee2mqtt/heater_plug', '{"state":"ON","linkquality":90}');
    assert.equal(await plug.observe(), 1);
  });

  test('observe: unknown until a state arrives, then known, then unknown once older than stateStaleAfter', async () => {
    const { plug, time, state } = await tasmotaPlug();
    assert.equal(await plug.observe(), undefined, 'nothing reported yet');
    state('ON');
    assert.equal(await plug.observe(), 1);
    time.advanceS(300);
    state('OFF');
    assert.equal(await plug.observe(), 0, 'switched by hand: the latest report wins');
    time.advanceS(600);
    assert.equal(await plug.observe(), 0, 'exactly stateStaleAfter old is still known');
    time.advanceS(1);
    assert.equal(await plug.observe(), undefined, 'a plug that stopped reporting is unknown');
    state('OFF');
    assert.equal(await plug.observe(), 0);
  });

  test('a write does not change what is observed: only the state topic confirms', async () => {
    const { plug, state } = await tasmotaPlug();
    state('OFF');
    await plug.write(1);
    assert.equal(await plug.observe(), 0);
    state('ON');
    assert.equal(await plug.observe(), 1);
  });

  test('a state it does not understand makes the state unknown, logged once per streak', async () => {
    const lines: { msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const { plug, state } = await tasmotaPlug({ logger });
    state('ON');
    state('BLINK');
    assert.equal(await plug.observe(), undefined);
    state('???');
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!.msg,
      /heater: state on stat\/plug\/POWER not understood \(state "BLINK" is neither "ON" nor "OFF"\)/,
    );
    state('ON');
    assert.equal(await plug.observe(), 1);
    state('BLINK');
    assert.equal(lines.length, 2, 'a new streak is logged again');
  });

  test('write rejects when offline (the core retries with backoff)', async () => {
    const { plug, transport } = await tasmotaPlug();
    transport.connected = false;
    await assert.rejects(plug.write(1), /MQTT not connected/);
    assert.equal(transport.published.length, 0);
  });

  test('write rejects levels a relay does not take, without publishing', async () => {
    const { plug, transport } = await tasmotaPlug();
    for (const level of [0.5, -1, 2, Number.NaN]) await assert.rejects(plug.write(level), RangeError);
    assert.equal(transport.published.length, 0);
  });

  test('after stop, states are ignored', async () => {
    const { plug, state } = await tasmotaPlug();
    state('ON');
    await plug.stop();
    state('OFF');
    assert.equal(await plug.observe(), 1);
  });
});

describe('MqttLevel', () => {
  test('write sends round(level × levelScale), plain or as a JSON field, QoS 1, never retained', async () => {
    const plain = await dimmer();
    await plain.driver.write(0.42);
    await plain.driver.write(1);
    await plain.driver.write(0);
    assert.deepEqual(plain.transport.published, [
      { topic: 'cmnd/dim/Dimmer', payload: '42', opts: NO_RETAIN_QOS1 },
      { topic: 'cmnd/dim/Dimmer', payload: '100', opts: NO_RETAIN_QOS1 },
      { topic: 'cmnd/dim/Dimmer', payload: '0', opts: NO_RETAIN_QOS1 },
    ]);
    const zigbee = await dimmer(254, 'brightness');
    await zigbee.driver.write(0.5);
    assert.deepEqual(zigbee.transport.published, [
      { topic: 'cmnd/dim/Dimmer', payload: '{"brightness":127}', opts: NO_RETAIN_QOS1 },
    ]);
  });

  test('observe: unknown → the reported level / levelScale → unknown when stale', async () => {
    const { driver, time, report } = await dimmer();
    assert.equal(await driver.observe(), undefined);
    report(30);
    assert.equal(await driver.observe(), 0.3);
    time.advanceS(601);
    assert.equal(await driver.observe(), undefined);
  });

  test('a report of the value it sent is the level it was asked for (no rounding mismatch)', async () => {
    const { driver, report } = await dimmer();
    await driver.write(0.425); // sent as 43
    report(43);
    assert.equal(await driver.observe(), 0.425);
    report(44);
    assert.equal(await driver.observe(), 0.44, 'anything else is taken as reported');
  });

  test('messages without the field are ignored; out-of-range or garbage levels are unknown', async () => {
    const { driver, transport, report } = await dimmer();
    report(50);
    transport.deliver('stat/dim/RESULT', '{"POWER":"ON"}');
    assert.equal(await driver.observe(), 0.5);
    report(101);
    assert.equal(await driver.observe(), undefined);
    report(-1);
    assert.equal(await driver.observe(), undefined);
    report('dim');
    assert.equal(await driver.observe(), undefined);
  });

  test('write rejects levels outside 0..1', async () => {
    const { driver, transport } = await dimmer();
    for (const level of [-0.1, 1.1, Number.NaN]) await assert.rejects(driver.write(level), RangeError);
    assert.equal(transport.published.length, 0);
  });

  test('levelScale must be an integer >= 1', () => {
    for (const levelScale of [0, 1.5, -100]) {
      assert.throws(
        () =>
          new MqttLevel({
            id: 'x',
            transport: new FakeTransport(),
            commandTopic: 'a',
            stateTopic: 'b',
            levelScale,
            stateStaleAfterMs: 1000,
            nowMs: () => 0,
          }),
        RangeError,
      );
    }
  });
});
