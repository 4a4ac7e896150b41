/**
 * The `mqtt_binary` section (kinds/sensors/mqtt-binary.ts): what a preset resolves to, the
 * defaults a contact gets, and the `path: message` a person gets for a section that cannot work.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';
import { configErrors, validConfig } from '../support/config.js';

/** A heated room whose loop pauses on `window` (the section under test). */
function text(window: string): string {
  return `
version: 1
node: { id: t }
mqtt: { url: "mqtt://127.0.0.1:1" }
sensors:
  room: { kind: mqtt, topic: th/room }
  window: ${window}
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
loops:
  room:
    sensor: room
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    interlocks: [{ sensor: window }]
    controller: { type: hysteresis }
`;
}

function windowOf(section: string) {
  const config = validConfig(text(section));
  const window = config.sensors.window;
  assert.equal(window?.kind, 'mqtt_binary');
  return { config, window: window as Extract<typeof window, { kind: 'mqtt_binary' }> };
}

describe('mqtt_binary: what a section resolves to', () => {
  test('given a Zigbee2MQTT contact preset, then its topic and field, false reads 1, and liveness from its availability topic with the contact defaults', () => {
    const { config, window } = windowOf(
      '{ kind: mqtt_binary, preset: zigbee2mqtt, device: zigbee2mqtt/living_window }',
    );
    assert.deepEqual(window.sources, [{ topic: 'zigbee2mqtt/living_window', field: 'contact' }]);
    assert.deepEqual([window.onWords, window.offWords], [[false], [true]]);
    assert.deepEqual(window.livenessOptions, {
      availabilityTopic: 'zigbee2mqtt/living_window/availability',
      bridgeStateTopic: 'zigbee2mqtt/bridge/state',
      heartbeatTopic: undefined,
      lastSeenField: undefined,
      maxQuietMs: 90_000_000,
    });
    assert.equal(window.staleAfterS, 7200);
    assert.deepEqual(toLoopSpec(config, 'room').interlocks, [
      { sensorId: 'window', pauseWhen: 1, staleAfterMs: 7_200_000 },
    ]);
  });

  const presets: [string, string, unknown[], unknown[], string | undefined][] = [
    [
      'zigbee2mqtt occupancy',
      'preset: zigbee2mqtt, device: zigbee2mqtt/hall, input: occupancy',
      [true],
      [false],
      'zigbee2mqtt/hall/availability',
    ],
    ['tasmota Switch2', 'preset: tasmota, device: sonoff, input: 2', ['ON'], ['OFF'], 'tele/sonoff/LWT'],
    [
      'shelly input 1, inverted',
      'preset: shelly, device: shellyplusi4-ab, input: 1, invert: true',
      [false],
      [true],
      'shellyplusi4-ab/online',
    ],
    ['esphome', 'preset: esphome, device: kitchen, input: window', ['ON'], ['OFF'], 'kitchen/status'],
    [
      'a topic of its own, default words',
      'topic: home/window',
      [true, 'ON', 'open', 1],
      [false, 'OFF', 'closed', 0],
      undefined,
    ],
    [
      'a topic with its own words',
      'topic: home/window, field: s, on: [auf], off: [zu]',
      ['auf'],
      ['zu'],
      undefined,
    ],
  ];
  for (const [name, keys, on, off, availability] of presets) {
    test(`given ${name}, then its words and liveness`, () => {
      const { window } = windowOf(`{ kind: mqtt_binary, ${keys} }`);
      assert.deepEqual([window.onWords, window.offWords], [on, off]);
      assert.equal(window.livenessOptions?.availabilityTopic, availability);
    });
  }

  test('given a liveness block of its own, then it replaces the preset one, maxQuietS as given', () => {
    const { window } = windowOf(
      '{ kind: mqtt_binary, preset: zigbee2mqtt, device: zigbee2mqtt/w, liveness: { lastSeenField: last_seen, maxQuietS: 10800 } }',
    );
    assert.deepEqual(window.livenessOptions, {
      availabilityTopic: undefined,
      bridgeStateTopic: undefined,
      heartbeatTopic: undefined,
      lastSeenField: 'last_seen',
      maxQuietMs: 10_800_000,
    });
  });
});

describe('mqtt_binary: sections that cannot work are refused, saying why', () => {
  const table: [string, string, string][] = [
    ['no preset and no topic', '{ kind: mqtt_binary }', 'sensors.window.topic: required without preset'],
    [
      'a preset without device',
      '{ kind: mqtt_binary, preset: tasmota }',
      'sensors.window.device: required with preset tasmota',
    ],
    [
      'a preset and a topic',
      '{ kind: mqtt_binary, preset: zigbee2mqtt, device: z/w, topic: z/w }',
      'sensors.window.topic: comes from preset zigbee2mqtt: remove it, or the preset',
    ],
    [
      'esphome without its binary sensor',
      '{ kind: mqtt_binary, preset: esphome, device: kitchen }',
      "sensors.window.input: required with preset esphome (the binary sensor's object id)",
    ],
    [
      'tasmota switch 0',
      '{ kind: mqtt_binary, preset: tasmota, device: s, input: 0 }',
      'sensors.window.input: with preset tasmota, 1 or more (Switch1 is 1)',
    ],
    [
      'shelly input by name',
      '{ kind: mqtt_binary, preset: shelly, device: s, input: door }',
      'sensors.window.input: with preset shelly, a number (input:0 is 0)',
    ],
    [
      'an input without preset',
      '{ kind: mqtt_binary, topic: a/b, input: 1 }',
      'sensors.window.input: only with preset',
    ],
    [
      'on without off',
      '{ kind: mqtt_binary, topic: a/b, on: [open] }',
      'sensors.window.off: give on and off together',
    ],
    [
      'a word in both',
      '{ kind: mqtt_binary, topic: a/b, on: [open, "1"], off: [closed, 1] }',
      'sensors.window.off: "1" is in both on and off',
    ],
    [
      'staleAfterS within periodS',
      '{ kind: mqtt_binary, topic: a/b, periodS: 60, staleAfterS: 30 }',
      'sensors.window.staleAfterS: must be greater than periodS (60)',
    ],
    [
      'a liveness maxQuietS within staleAfterS',
      '{ kind: mqtt_binary, topic: a/b, liveness: { heartbeatTopic: a/hb, maxQuietS: 3600 } }',
      'sensors.window.liveness.maxQuietS: must be greater than staleAfterS (7200 s): a quiet state is kept in force past staleAfterS up to maxQuietS (3600 s)',
    ],
    [
      "a preset's default liveness with staleAfterS past the default maxQuietS",
      '{ kind: mqtt_binary, preset: zigbee2mqtt, device: zigbee2mqtt/w, staleAfterS: 90000 }',
      'sensors.window.liveness.maxQuietS: must be greater than staleAfterS (90000 s): a quiet state is kept in force past staleAfterS up to maxQuietS (90000 s)',
    ],
    [
      'a wildcard topic',
      '{ kind: mqtt_binary, topic: "a/+" }',
      'sensors.window.topic: must be a plain topic, without the wildcards + and #',
    ],
  ];
  for (const [name, section, error] of table) {
    test(`given ${name}, then "${error}"`, () => {
      const errors = configErrors(text(section));
      assert.ok(errors.includes(error), errors.join('\n'));
    });
  }
});
