/**
 * The Home Assistant "actuator problem" entity: a `problem` binary_sensor per loop with an
 * MQTT actuator, ON while ActuatorConfirmed is False for DeviceOffline or NotConfirmedOff.
 * Keys are HA's abbreviations (https://www.home-assistant.io/integrations/mqtt/, "Supported
 * abbreviations"); availability is the device payload's root `avty_t`, which every component
 * inherits (same page, "Device discovery payload").
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import type { Config } from '../../src/config/schema.js';
import { discoveryPayload } from '../../src/mqtt/discovery.js';
import {
  ACTUATOR_ATTRIBUTES_TEMPLATE,
  ACTUATOR_PROBLEM_TEMPLATE,
  actuatorProblemComponents,
} from '../../src/mqtt/discovery-actuator.js';
import { topicsFor } from '../../src/mqtt/topics.js';
import { validConfig } from '../support/config.js';

/** A node `pi` whose loop `room` (name "Fermenter") has the given raise actuator (YAML flow mapping). */
function nodeWith(heater: string, extraLoop = ''): Config {
  return validConfig(`
version: 1
node: { id: pi, name: Brew shed }
mqtt: {}
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors:
  t: { kind: mqtt, topic: tele/th1/SENSOR, field: AM2301.Temperature }
  sim: { kind: simulated, plant: p }
actuators:
  heater: ${heater}
  mat: { kind: simulated_relay, plant: p, gain: 20 }
loops:
  room: { name: Fermenter, sensor: t, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
${extraLoop}`);
}

const SHELLY = '{ kind: mqtt_switch, preset: shelly, device: shellyplus1pm-a8 }';

describe('actuator problem entity', () => {
  test('given a loop on a Shelly plug, then one problem binary_sensor reading the loop state', () => {
    const config = nodeWith(SHELLY);
    const components = actuatorProblemComponents(
      config,
      { nodeId: 'pi', loopId: 'room' },
      config.loops.room!,
      topicsFor('homeostat', 'pi'),
      { standalone: true },
    );
    assert.deepEqual(components, {
      homeostat_pi_room_actuator: {
        p: 'binary_sensor',
        name: 'Actuator problem',
        uniq_id: 'homeostat_pi_room_actuator',
        def_ent_id: 'binary_sensor.homeostat_pi_room_actuator',
        stat_t: 'homeostat/pi/room/state',
        val_tpl: ACTUATOR_PROBLEM_TEMPLATE,
        json_attr_t: 'homeostat/pi/room/state',
        json_attr_tpl: ACTUATOR_ATTRIBUTES_TEMPLATE,
        dev_cla: 'problem',
        ent_cat: 'diagnostic',
        qos: 1,
      },
    });
  });

  test('given several loops, then the name carries the loop name', () => {
    const config = nodeWith(SHELLY);
    const [component] = Object.values(
      actuatorProblemComponents(
        config,
        { nodeId: 'pi', loopId: 'room' },
        config.loops.room!,
        topicsFor('homeostat', 'pi'),
        { standalone: false },
      ),
    );
    assert.equal(component?.name, 'Fermenter actuator problem');
  });

  test('in the device payload: the entity inherits the node availability (root avty_t), carrying none itself', () => {
    const { payload } = discoveryPayload(nodeWith(SHELLY), {
      prefix: 'homeassistant',
      baseTopic: 'homeostat',
      version: '1.0.0',
    });
    assert.equal(payload.avty_t, 'homeostat/pi/availability');
    const entity = payload.cmps.homeostat_pi_room_actuator;
    assert.ok(entity, 'the actuator problem entity is published');
    assert.equal(entity.dev_cla, 'problem');
    assert.equal(entity.stat_t, 'homeostat/pi/room/state');
    for (const key of ['avty_t', 'avty', 'availability', 'availability_topic']) {
      assert.equal(key in entity, false, `${key} would override the node's last will`);
    }
  });

  // Given the loop's actuator kind, then whether it gets the entity:
  const kinds: [string, string, boolean][] = [
    ['mqtt_switch (shelly)', SHELLY, true],
    ['mqtt_switch (esphome)', '{ kind: mqtt_switch, preset: esphome, device: shed, entity: mat }', true],
    [
      'mqtt_level (esphome)',
      '{ kind: mqtt_level, preset: esphome, device: shed, entity: power, levelScale: 100 }',
      true,
    ],
    ['simulated_relay (read back)', '{ kind: simulated_relay, plant: p, gain: 20 }', false],
  ];
  for (const [name, heater, expected] of kinds) {
    test(`${name} → ${expected ? 'an' : 'no'} actuator problem entity`, () => {
      const { payload } = discoveryPayload(nodeWith(heater), {
        prefix: 'homeassistant',
        baseTopic: 'homeostat',
        version: '1.0.0',
      });
      assert.equal('homeostat_pi_room_actuator' in payload.cmps, expected);
    });
  }

  test('a loop whose MQTT actuator is its lower one gets it too; a simulated loop beside it does not', () => {
    const config = validConfig(`
version: 1
node: { id: pi }
mqtt: {}
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
sensors:
  sim: { kind: simulated, plant: p }
actuators:
  mat: { kind: simulated_relay, plant: p, gain: 20 }
  cooler: { kind: mqtt_switch, preset: tasmota, device: fridge }
  lamp: { kind: simulated_relay, plant: p, gain: 20 }
loops:
  cellar: { sensor: sim, raise: mat, lower: cooler, setpoint: 12, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
  tank: { sensor: sim, raise: lamp, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`);
    const { payload } = discoveryPayload(config, {
      prefix: 'homeassistant',
      baseTopic: 'homeostat',
      version: '1',
    });
    const problems = Object.keys(payload.cmps).filter((id) => id.endsWith('_actuator'));
    assert.deepEqual(problems, ['homeostat_pi_cellar_actuator']);
  });
});

// Rendered by real Jinja2 (what Home Assistant uses) when python3 has it, against state JSON as
// src/mqtt/state-payload.ts publishes it.
const haveJinja = spawnSync('python3', ['-c', 'import jinja2'], { encoding: 'utf8' }).status === 0;

function render(cases: [template: string, state: unknown][]): string[] {
  const script = `
import json, sys, jinja2
env = jinja2.Environment()
out = [env.from_string(t).render(value_json=v) for t, v in json.load(sys.stdin)]
print(json.dumps(out))
`;
  const result = spawnSync('python3', ['-c', script], { input: JSON.stringify(cases), encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as string[];
}

describe('actuator problem templates render what Home Assistant expects', {
  skip: haveJinja ? false : 'python3 jinja2 not found',
}, () => {
  const state = (status: string, reason: string, message: string) => ({
    conditions: [
      { type: 'SensorHealthy', status: 'False', reason: 'Stale', message: 'stale' },
      { type: 'ActuatorConfirmed', status, reason, message },
    ],
  });
  const offline = 'heater is not confirmed off: device offline since 12:03 UTC';
  const table: [name: string, state: unknown, problem: string, attributes: unknown][] = [
    [
      'DeviceOffline → ON',
      state('False', 'DeviceOffline', offline),
      'ON',
      { reason: 'DeviceOffline', message: offline },
    ],
    [
      'NotConfirmedOff → ON',
      state('False', 'NotConfirmedOff', 'heater is not confirmed off: no state'),
      'ON',
      { reason: 'NotConfirmedOff', message: 'heater is not confirmed off: no state' },
    ],
    [
      'Pending (a command on its way) → OFF',
      state('False', 'Pending', 'an actuator is not (yet) at its wanted level'),
      'OFF',
      { reason: 'Pending', message: 'an actuator is not (yet) at its wanted level' },
    ],
    [
      'Confirmed → OFF',
      state('True', 'Confirmed', 'every actuator is at its wanted level'),
      'OFF',
      { reason: 'Confirmed', message: 'every actuator is at its wanted level' },
    ],
    ['no conditions → OFF', {}, 'OFF', { reason: '', message: '' }],
  ];
  test('value and attributes, row by row', () => {
    const rendered = render(
      table.flatMap(([, value]) => [
        [ACTUATOR_PROBLEM_TEMPLATE, value] as [string, unknown],
        [ACTUATOR_ATTRIBUTES_TEMPLATE, value] as [string, unknown],
      ]),
    );
    table.forEach(([name, , problem, attributes], index) => {
      assert.equal(rendered[2 * index], problem, name);
      assert.deepEqual(JSON.parse(rendered[2 * index + 1] ?? ''), attributes, name);
    });
  });
});
