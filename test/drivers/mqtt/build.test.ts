import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { buildDrivers, createActuatorDriver, driverKey, speedProblem } from '../../../src/drivers/build.js';
import { MqttLevel, MqttSwitch } from '../../../src/drivers/mqtt/actuator.js';
import { MqttSensor } from '../../../src/drivers/mqtt/sensor.js';
import { FakeTransport } from './fake-transport.js';

/** A node with a Tasmota sensor, a Tasmota plug, a Zigbee2MQTT plug, a dimmer and a simulated sensor. */
function mqttConfig(edit = (text: string) => text): Config {
  const text = edit(`
version: 1
node: { id: pi }
mqtt: {}
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors:
  room: { kind: mqtt, topic: tele/th1/SENSOR, field: AM2301.Temperature, periodS: 30 }
  sim: { kind: simulated, plant: p }
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
  cooler: { kind: mqtt_switch, preset: zigbee2mqtt, device: zigbee2mqtt/cooler }
  fan: { kind: mqtt_level, commandTopic: cmnd/fan/Dimmer, stateTopic: stat/fan/RESULT, stateField: Dimmer }
loops:
  room: { sensor: room, raise: heater, lower: cooler, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
  air: { sensor: sim, raise: fan, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: pid, kp: 0.2 } }
`);
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  return loaded.config;
}

describe('buildDrivers with MQTT kinds', () => {
  test('builds MQTT drivers on the transport passed in, and keeps it for drivers created later (reload)', async () => {
    const transport = new FakeTransport();
    const config = mqttConfig();
    const drivers = buildDrivers(config, () => 0, { mqtt: transport });
    assert.ok(drivers.sensors.get('room') instanceof MqttSensor);
    assert.ok(drivers.actuators.get('heater') instanceof MqttSwitch);
    assert.ok(drivers.actuators.get('cooler') instanceof MqttSwitch);
    assert.ok(drivers.actuators.get('fan') instanceof MqttLevel);
    assert.equal(drivers.mqtt, transport);
    for (const driver of [...drivers.sensors.values(), ...drivers.actuators.values()]) await driver.start?.();
    assert.deepEqual(
      transport.subscriptions.map((s) => s.filter),
      ['tele/th1/SENSOR', 'stat/plug/POWER', 'zigbee2mqtt/cooler', 'stat/fan/RESULT'],
    );
    const later = createActuatorDriver(config, 'heater', drivers, () => 0);
    await later.write(1);
    assert.deepEqual(transport.published.at(-1), {
      topic: 'cmnd/plug/POWER',
      payload: 'ON',
      opts: { qos: 1, retain: false },
    });
  });

  test('the preset topics and payloads reach the wire exactly', async () => {
    const transport = new FakeTransport();
    const drivers = buildDrivers(mqttConfig(), () => 0, { mqtt: transport });
    await drivers.actuators.get('heater')!.write(1);
    await drivers.actuators.get('cooler')!.write(0);
    await drivers.actuators.get('fan')!.write(0.25);
    assert.deepEqual(
      transport.published.map(({ topic, payload }) => [topic, payload]),
      [
        ['cmnd/plug/POWER', 'ON'],
        ['zigbee2mqtt/cooler/set', '{"state":"OFF"}'],
        ['cmnd/fan/Dimmer', '25'],
      ],
    );
  });

  test('without a transport, MQTT drivers are built but their writes reject and say why', async () => {
    const drivers = buildDrivers(mqttConfig(), () => 0);
    await assert.rejects(drivers.actuators.get('heater')!.write(0), /MQTT not configured/);
    assert.equal(await drivers.actuators.get('heater')!.observe(), undefined);
  });

  test('--speed is refused: MQTT drivers are not simulated', () => {
    const drivers = buildDrivers(mqttConfig(), () => 0, { mqtt: new FakeTransport() });
    assert.equal(
      speedProblem(drivers),
      '--speed needs every driver to be simulated; real drivers: room, heater, cooler, fan',
    );
  });
});

describe('driverKey of MQTT kinds', () => {
  // [edit, which section, same driver?]
  const cases: [string, (text: string) => string, 'sensors' | 'actuators', string, boolean][] = [
    [
      'sensor periodS, stale-after kept',
      (t) => t.replace('periodS: 30', 'periodS: 60, staleAfterS: 90'),
      'sensors',
      'room',
      true,
    ],
    [
      'sensor periodS, and the stale-after that follows it',
      (t) => t.replace('periodS: 30', 'periodS: 60'),
      'sensors',
      'room',
      false,
    ],
    [
      'sensor staleAfterS (the driver checks it)',
      (t) => t.replace('periodS: 30', 'periodS: 30, staleAfterS: 45'),
      'sensors',
      'room',
      false,
    ],
    ['sensor topic', (t) => t.replace('tele/th1/SENSOR', 'tele/th2/SENSOR'), 'sensors', 'room', false],
    [
      'relay minOnS',
      (t) => t.replace('device: plug }', 'device: plug, minOnS: 60 }'),
      'actuators',
      'heater',
      true,
    ],
    [
      'relay safeState',
      (t) => t.replace('device: plug }', 'device: plug, safeState: on }'),
      'actuators',
      'heater',
      true,
    ],
    ['relay device', (t) => t.replace('device: plug }', 'device: plug2 }'), 'actuators', 'heater', false],
    [
      'level safeLevel',
      (t) => t.replace('stateField: Dimmer }', 'stateField: Dimmer, safeLevel: 0.2 }'),
      'actuators',
      'fan',
      true,
    ],
  ];
  for (const [what, edit, section, id, same] of cases) {
    test(`changing ${what} ${same ? 'keeps' : 'replaces'} the driver`, () => {
      const before = mqttConfig()[section][id]!;
      const after = mqttConfig(edit)[section][id]!;
      assert.notDeepEqual(before, after, 'the edit changed the section');
      assert.equal(driverKey(before) === driverKey(after), same);
    });
  }
});
