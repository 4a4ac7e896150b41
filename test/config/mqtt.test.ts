import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LOOP_POLICY, safeLevelOf, toLoopSpec } from '../../src/config/to-loop-spec.js';
import { validConfig } from '../support/config.js';
import { type ConfigErrorCase, testConfigErrorCases } from '../support/config-cases.js';

/** A config with an MQTT sensor and the given actuators (YAML flow mappings by id). */
function configText(
  actuators: Record<string, string>,
  opts: { mqtt?: string; sensor?: string; loop?: string } = {},
) {
  const ids = Object.keys(actuators);
  return `
version: 1
node: { id: pi }
${opts.mqtt ?? 'mqtt: {}'}
sensors:
  t: ${opts.sensor ?? '{ kind: mqtt, topic: tele/th1/SENSOR, field: AM2301.Temperature }'}
actuators:
${ids.map((id) => `  ${id}: ${actuators[id]}`).join('\n')}
loops:
  room: { sensor: t, raise: ${ids[0]}, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis }${opts.loop ?? ''} }
`;
}

const valid = validConfig;

const TASMOTA = '{ kind: mqtt_switch, preset: tasmota, device: plug }';

describe('mqtt sensor', () => {
  test('defaults: periodS 60 (the expected publish period), staleAfterS 3 × periodS, inherited by the loop', () => {
    const config = valid(configText({ heater: TASMOTA }));
    assert.deepEqual(config.sensors.t, {
      kind: 'mqtt',
      topic: 'tele/th1/SENSOR',
      field: 'AM2301.Temperature',
      periodS: 60,
      staleAfterS: 180,
    });
    assert.equal(config.loops.room?.staleAfterS, 180);
  });

  test('a plain-number topic needs no field', () => {
    const config = valid(
      configText({ heater: TASMOTA }, { sensor: '{ kind: mqtt, topic: shellies/ht/sensor/temperature }' }),
    );
    assert.equal(config.sensors.t?.kind === 'mqtt' && config.sensors.t.field, undefined);
  });
});

describe('mqtt_switch presets', () => {
  test('tasmota: cmnd/<device>/POWER and stat/<device>/POWER, ON/OFF; relay settings default like simulated_relay', () => {
    const config = valid(configText({ heater: TASMOTA }));
    assert.deepEqual(config.actuators.heater, {
      kind: 'mqtt_switch',
      preset: 'tasmota',
      device: 'plug',
      commandTopic: 'cmnd/plug/POWER',
      stateTopic: 'stat/plug/POWER',
      payloadOn: 'ON',
      payloadOff: 'OFF',
      stateOn: 'ON',
      stateOff: 'OFF',
      stateStaleAfterS: 600,
      minOnS: 0,
      minOffS: 0,
      windowS: 600,
      modulation: 'band',
      modulationDefaulted: true,
      band: 0.25,
      safeState: 'off',
      deadManS: 600,
      availabilityTopic: 'tele/plug/LWT',
    });
  });

  test('zigbee2mqtt: <device>/set with {"state":…}, state field state of <device>', () => {
    const config = valid(
      configText({ heater: '{ kind: mqtt_switch, preset: zigbee2mqtt, device: zigbee2mqtt/plug }' }),
    );
    const heater = config.actuators.heater;
    assert.ok(heater?.kind === 'mqtt_switch');
    assert.deepEqual(
      [heater.commandTopic, heater.stateTopic, heater.payloadOn, heater.payloadOff, heater.stateField],
      ['zigbee2mqtt/plug/set', 'zigbee2mqtt/plug', '{"state":"ON"}', '{"state":"OFF"}', 'state'],
    );
  });

  test('fields given override the preset (a second Tasmota relay: POWER2)', () => {
    const config = valid(
      configText({
        heater:
          '{ kind: mqtt_switch, preset: tasmota, device: plug, commandTopic: cmnd/plug/POWER2, stateTopic: stat/plug/POWER2 }',
      }),
    );
    const heater = config.actuators.heater;
    assert.ok(heater?.kind === 'mqtt_switch');
    assert.deepEqual(
      [heater.commandTopic, heater.stateTopic, heater.payloadOn],
      ['cmnd/plug/POWER2', 'stat/plug/POWER2', 'ON'],
    );
  });

  test('a Shelly RPC payload written by hand with toggle_after is absolute, not a toggle', () => {
    const config = valid(
      configText({
        heater: `{ kind: mqtt_switch, commandTopic: plug/rpc, stateTopic: plug/status/switch:0, stateField: output, stateOn: 'true', stateOff: 'false', payloadOn: '{"method":"Switch.Set","params":{"id":0,"on":true,"toggle_after":120}}', payloadOff: '{"method":"Switch.Set","params":{"id":0,"on":false}}' }`,
      }),
    );
    assert.equal(config.actuators.heater?.kind, 'mqtt_switch');
  });

  test('an ESPHome object id with a hyphen (kept by ESPHome) is taken', () => {
    const config = valid(
      configText({ heater: '{ kind: mqtt_switch, preset: esphome, device: kettle, entity: heater-relay }' }),
    );
    assert.equal(config.actuators.heater?.kind, 'mqtt_switch');
  });

  test('explicit topics and payloads without a preset (a Shelly Plus relay)', () => {
    const config = valid(
      configText({
        heater:
          "{ kind: mqtt_switch, commandTopic: shelly/command/switch:0, stateTopic: shelly/status/switch:0, payloadOn: 'on', payloadOff: 'off', stateField: output, stateOn: 'true', stateOff: 'false' }",
      }),
    );
    assert.equal(config.actuators.heater?.kind, 'mqtt_switch');
  });
});

describe('mqtt_level', () => {
  test('defaults: levelScale 100, safeLevel 0, state stale after 600 s', () => {
    const config = valid(
      configText({
        fan: '{ kind: mqtt_level, commandTopic: cmnd/fan/Dimmer, stateTopic: stat/fan/RESULT, stateField: Dimmer }',
      }),
    );
    assert.deepEqual(config.actuators.fan, {
      kind: 'mqtt_level',
      commandTopic: 'cmnd/fan/Dimmer',
      stateTopic: 'stat/fan/RESULT',
      stateField: 'Dimmer',
      levelScale: 100,
      stateStaleAfterS: 600,
      safeLevel: 0,
    });
  });
});

describe('mqtt config errors', () => {
  const LEVEL = (extra: string) =>
    `{ kind: mqtt_level, commandTopic: cmnd/fan/Dimmer, stateTopic: stat/fan/RESULT${extra} }`;
  // [what, config text, expected `path: message` lines (every one must be reported)]
  const cases: ConfigErrorCase[] = [
    [
      'no mqtt block',
      configText({ heater: TASMOTA, fan: LEVEL('') }, { mqtt: '' }),
      [
        'sensors.t: kind mqtt needs the mqtt block (broker)',
        'actuators.heater: kind mqtt_switch needs the mqtt block (broker)',
        'actuators.fan: kind mqtt_level needs the mqtt block (broker)',
      ],
    ],
    [
      'a wildcard sensor topic',
      configText({ heater: TASMOTA }, { sensor: '{ kind: mqtt, topic: tele/+/SENSOR }' }),
      ['sensors.t.topic: must be a plain topic, without the wildcards + and #'],
    ],
    [
      'wildcard actuator topics',
      configText({
        heater: '{ kind: mqtt_switch, preset: tasmota, device: "#" }',
        fan: '{ kind: mqtt_level, commandTopic: cmnd/fan/Dimmer, stateTopic: stat/+/RESULT }',
      }),
      [
        'actuators.heater.device: must be a plain topic, without the wildcards + and #',
        'actuators.fan.stateTopic: must be a plain topic, without the wildcards + and #',
      ],
    ],
    [
      'a toggle command',
      configText({ heater: '{ kind: mqtt_switch, preset: tasmota, device: plug, payloadOn: TOGGLE }' }),
      ['actuators.heater.payloadOn: must be an absolute command (ON/OFF), never a toggle'],
    ],
    [
      'the same command for on and off',
      configText({ heater: '{ kind: mqtt_switch, preset: tasmota, device: plug, payloadOff: "ON" }' }),
      ['actuators.heater.payloadOff: must differ from payloadOn'],
    ],
    [
      'the same state for on and off',
      configText({ heater: '{ kind: mqtt_switch, preset: tasmota, device: plug, stateOff: "on" }' }),
      ['actuators.heater.stateOff: must differ from stateOn'],
    ],
    [
      'a preset without its device',
      configText({ heater: '{ kind: mqtt_switch, preset: tasmota }' }),
      ['actuators.heater.device: required with preset tasmota'],
    ],
    [
      'a device without a preset',
      configText({
        heater:
          '{ kind: mqtt_switch, device: plug, commandTopic: a, stateTopic: b, payloadOn: "1", payloadOff: "0", stateOn: "1", stateOff: "0" }',
      }),
      [
        'actuators.heater.preset: required with device (tasmota, zigbee2mqtt, shelly or esphome), or give the topics instead',
      ],
    ],
    [
      'no preset and missing payloads',
      configText({
        heater: '{ kind: mqtt_switch, commandTopic: cmnd/plug/POWER, stateTopic: stat/plug/POWER }',
      }),
      [
        'actuators.heater.payloadOn: required (or a preset and device)',
        'actuators.heater.payloadOff: required (or a preset and device)',
        'actuators.heater.stateOn: required (or a preset and device)',
        'actuators.heater.stateOff: required (or a preset and device)',
      ],
    ],
    [
      'two actuators on one command topic',
      configText({ heater: TASMOTA, other: '{ kind: mqtt_switch, preset: tasmota, device: plug }' }),
      ["actuators.other: command topic cmnd/plug/POWER is already actuators.heater's"],
    ],
    [
      'a levelScale that is not a whole number',
      configText({ fan: LEVEL(', levelScale: 2.5') }),
      ['actuators.fan.levelScale: expected an integer, got 2.5'],
    ],
    [
      'a stale-after no longer than the publish period',
      configText({ heater: TASMOTA }, { sensor: '{ kind: mqtt, topic: t, periodS: 300, staleAfterS: 300 }' }),
      ['sensors.t.staleAfterS: must be greater than periodS (300): the device publishes that often'],
    ],
    [
      'a field path with an empty part',
      configText({ heater: TASMOTA }, { sensor: '{ kind: mqtt, topic: t, field: AM2301..Temperature }' }),
      ['sensors.t.field: use a dot path such as AM2301.Temperature (no spaces, no empty parts)'],
    ],
    [
      'band modulation on an MQTT relay under hysteresis',
      configText({ heater: '{ kind: mqtt_switch, preset: tasmota, device: plug, modulation: band }' }),
      [
        'actuators.heater.modulation: modulation "band" needs a pid controller, but loops.room uses hysteresis (use modulation "window" or a pid controller)',
      ],
    ],
  ];
  testConfigErrorCases(cases, (what, expected) => `${what} → ${expected.length} error(s)`);
});

describe('toLoopSpec with MQTT actuators', () => {
  test('an mqtt_switch is a relay with its timing and safe state, like simulated_relay', () => {
    const config = valid(
      configText({
        heater:
          '{ kind: mqtt_switch, preset: tasmota, device: plug, minOnS: 30, minOffS: 60, windowS: 300, safeState: on }',
      }),
    );
    assert.deepEqual(toLoopSpec(config, 'room').raise, {
      id: 'heater',
      kind: 'relay',
      safeLevel: 1,
      timeProportioning: { windowMs: 300_000, minOnMs: 30_000, minOffMs: 60_000 },
    });
  });

  test('an mqtt_level is continuous with its safe level', () => {
    const config = valid(
      configText({
        fan: '{ kind: mqtt_level, commandTopic: cmnd/fan/Dimmer, stateTopic: stat/fan/RESULT, safeLevel: 0.3 }',
      }),
    );
    assert.deepEqual(toLoopSpec(config, 'room').raise, { id: 'fan', kind: 'continuous', safeLevel: 0.3 });
  });

  test('retryInitialS sets the first retry of an unconfirmed command; default LOOP_POLICY (5 s)', () => {
    assert.equal(
      toLoopSpec(valid(configText({ heater: TASMOTA })), 'room').retryInitialMs,
      LOOP_POLICY.retryInitialMs,
    );
    assert.equal(LOOP_POLICY.retryInitialMs, 5_000);
    const fast = valid(configText({ heater: TASMOTA }, { loop: ', retryInitialS: 0.5' }));
    assert.equal(toLoopSpec(fast, 'room').retryInitialMs, 500);
  });

  test('safeLevelOf: relays from safeState, continuous from safeLevel', () => {
    const config = valid(
      configText({
        a: '{ kind: mqtt_switch, preset: tasmota, device: a, safeState: on }',
        b: '{ kind: mqtt_switch, preset: tasmota, device: b }',
        c: '{ kind: mqtt_level, commandTopic: c, stateTopic: cs, safeLevel: 0.4 }',
      }),
    );
    assert.deepEqual(
      ['a', 'b', 'c'].map((id) => safeLevelOf(config.actuators[id]!)),
      [1, 0, 0.4],
    );
  });
});
