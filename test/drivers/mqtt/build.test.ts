import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfigText } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { MIN_DEAD_MAN_S } from '../../../src/config/schema.js';
import { MqttLevel, MqttSwitch } from '../../../src/drivers/mqtt/actuator.js';
import { MqttSensor } from '../../../src/drivers/mqtt/sensor.js';
import { buildDrivers, createActuatorDriver, speedProblem } from '../../../src/kinds/build.js';
import { driverKey } from '../../../src/kinds/registry.js';
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
      // Each plug's availability topic from its preset, right after its state topic.
      [
        'tele/th1/SENSOR',
        'stat/plug/POWER',
        'tele/plug/LWT',
        'zigbee2mqtt/cooler',
        'zigbee2mqtt/cooler/availability',
        'stat/fan/RESULT',
      ],
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
        // preset tasmota arms its dead man's switch (deadManS 600 by default) before every ON
        ['cmnd/plug/PulseTime1', '700'],
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
      (t) => t.replace('device: zigbee2mqtt/cooler }', 'device: zigbee2mqtt/cooler, safeState: on }'),
      'actuators',
      'cooler',
      true,
    ],
    [
      // safeState on turns the default PulseTime off: the driver stops arming it
      'safeState of a Tasmota plug with the default deadManS',
      (t) => t.replace('device: plug }', 'device: plug, safeState: on }'),
      'actuators',
      'heater',
      false,
    ],
    [
      'relay deadManS',
      (t) => t.replace('device: plug }', 'device: plug, deadManS: 900 }'),
      'actuators',
      'heater',
      false,
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

describe("deadManS in the config: the plug's own off timer", () => {
  const switchOf = (section: string) => {
    const actuator = mqttConfig((t) =>
      t.replace('{ kind: mqtt_switch, preset: tasmota, device: plug }', section),
    ).actuators.heater;
    assert.ok(actuator?.kind === 'mqtt_switch');
    return actuator;
  };
  const errorsOf = (section: string) => {
    const loaded = parseConfigText(`
version: 1
node: { id: pi }
mqtt: {}
sensors: { room: { kind: mqtt, topic: t } }
actuators:
  heater: ${section}
loops:
  room: { sensor: room, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`);
    assert.equal(loaded.ok, false, `${section} should be refused`);
    return loaded.ok ? [] : loaded.errors;
  };

  const defaults: [string, string, number][] = [
    ['preset tasmota: on, 600 s', '{ kind: mqtt_switch, preset: tasmota, device: plug }', 600],
    [
      'preset tasmota on relay 2',
      '{ kind: mqtt_switch, preset: tasmota, device: plug, commandTopic: cmnd/plug/POWER2 }',
      600,
    ],
    [
      'preset tasmota with safeState on: off',
      '{ kind: mqtt_switch, preset: tasmota, device: plug, safeState: on }',
      0,
    ],
    [
      'preset tasmota with a command topic PulseTime cannot time: off',
      '{ kind: mqtt_switch, preset: tasmota, device: plug, commandTopic: cmnd/plug/Backlog }',
      0,
    ],
    [
      'preset zigbee2mqtt: off (opt-in, not every device has it)',
      '{ kind: mqtt_switch, preset: zigbee2mqtt, device: z/plug }',
      0,
    ],
    [
      'zigbee2mqtt opted in',
      '{ kind: mqtt_switch, preset: zigbee2mqtt, device: z/plug, deadManS: 900 }',
      900,
    ],
    ['tasmota turned off', '{ kind: mqtt_switch, preset: tasmota, device: plug, deadManS: 0 }', 0],
    [
      'no preset: off',
      "{ kind: mqtt_switch, commandTopic: s/cmd, stateTopic: s/state, payloadOn: 'on', payloadOff: 'off', stateOn: 'on', stateOff: 'off' }",
      0,
    ],
  ];
  for (const [what, section, seconds] of defaults) {
    test(`${what} → deadManS ${seconds}`, () => assert.equal(switchOf(section).deadManS, seconds));
  }

  const refused: [string, string, RegExp][] = [
    [
      'shorter than the keep-alive plus margin',
      '{ kind: mqtt_switch, preset: tasmota, device: plug, deadManS: 300 }',
      new RegExp(
        `^actuators\\.heater\\.deadManS: must be at least ${MIN_DEAD_MAN_S} s \\(got 300\\): homeostat re-sends ON every 300 s while the plug should stay on`,
      ),
    ],
    [
      'longer than PulseTime holds',
      '{ kind: mqtt_switch, preset: tasmota, device: plug, deadManS: 70000 }',
      /^actuators\.heater\.deadManS: must be at most 64800 s with preset tasmota \(got 70000\)$/,
    ],
    [
      'longer than a Zigbee on_time holds',
      '{ kind: mqtt_switch, preset: zigbee2mqtt, device: z/plug, deadManS: 7000 }',
      /^actuators\.heater\.deadManS: must be at most 6553 s with preset zigbee2mqtt/,
    ],
    [
      'without a preset',
      "{ kind: mqtt_switch, commandTopic: s/cmd, stateTopic: s/state, payloadOn: 'on', payloadOff: 'off', stateOn: 'on', stateOff: 'off', deadManS: 600 }",
      /^actuators\.heater\.deadManS: needs preset tasmota \(PulseTime\), zigbee2mqtt \(on_time\) or shelly \(toggle_after\)/,
    ],
    [
      'with safeState on',
      '{ kind: mqtt_switch, preset: tasmota, device: plug, safeState: on, deadManS: 600 }',
      /^actuators\.heater\.deadManS: turns the plug off when homeostat goes silent, but safeState is on/,
    ],
    [
      'on a Tasmota command topic that is not POWER<n>',
      '{ kind: mqtt_switch, preset: tasmota, device: plug, commandTopic: cmnd/plug/Backlog, deadManS: 600 }',
      /^actuators\.heater\.deadManS: needs a command topic ending in \/POWER or \/POWER<n>/,
    ],
    [
      'zigbee2mqtt with an ON payload that is not JSON',
      "{ kind: mqtt_switch, preset: zigbee2mqtt, device: z/plug, payloadOn: 'ON', deadManS: 600 }",
      /^actuators\.heater\.deadManS: needs payloadOn to be a JSON object/,
    ],
  ];
  for (const [what, section, message] of refused) {
    test(`refused: ${what}`, () => {
      const errors = errorsOf(section);
      assert.ok(
        errors.some((line) => message.test(line)),
        errors.join('\n'),
      );
    });
  }

  test(`the least deadManS is the keep-alive (300 s) plus 60 s: ${MIN_DEAD_MAN_S}`, () =>
    assert.equal(MIN_DEAD_MAN_S, 360));

  test('zigbee2mqtt opted in: the driver sends on_time with ON', async () => {
    const transport = new FakeTransport();
    const config = mqttConfig((t) =>
      t.replace('device: zigbee2mqtt/cooler }', 'device: zigbee2mqtt/cooler, deadManS: 900 }'),
    );
    const drivers = buildDrivers(config, () => 0, { mqtt: transport });
    await drivers.actuators.get('cooler')!.write(1);
    assert.deepEqual(transport.published.at(-1), {
      topic: 'zigbee2mqtt/cooler/set',
      payload: '{"state":"ON","on_time":900}',
      opts: { qos: 1, retain: false },
    });
  });
});
