import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import type { Config } from '../../src/config/schema.js';
import { parseCommand } from '../../src/control/commands.js';
import type { Mode } from '../../src/core/types.js';
import {
  CLIMATE_MODE,
  type DiscoveryComponent,
  type DiscoveryPayload,
  discoveryDiff,
  discoveryPayload,
  homeAssistantStatusTopic,
  STATE_TEMPLATES,
} from '../../src/mqtt/discovery.js';
import { topicsFor } from '../../src/mqtt/topics.js';
import { validConfig } from '../support/config.js';

// ---------------------------------------------------------------------------------------
// Home Assistant's documented keys (read from the docs, not guessed).
//
// Abbreviations: https://www.home-assistant.io/integrations/mqtt/#supported-abbreviations-in-mqtt-discovery-messages
// (same table as homeassistant/components/mqtt/abbreviations.py). Only the ones we use.
const ABBREVIATIONS: Record<string, string> = {
  act_t: 'action_topic',
  act_tpl: 'action_template',
  avty_t: 'availability_topic',
  cmd_t: 'command_topic',
  cmps: 'components',
  curr_hum_t: 'current_humidity_topic',
  curr_hum_tpl: 'current_humidity_template',
  curr_temp_t: 'current_temperature_topic',
  curr_temp_tpl: 'current_temperature_template',
  def_ent_id: 'default_entity_id',
  dev: 'device',
  dev_cla: 'device_class',
  ent_cat: 'entity_category',
  hum_cmd_t: 'target_humidity_command_topic',
  hum_stat_t: 'target_humidity_state_topic',
  hum_state_tpl: 'target_humidity_state_template',
  json_attr_t: 'json_attributes_topic',
  json_attr_tpl: 'json_attributes_template',
  max: 'max',
  max_hum: 'max_humidity',
  max_temp: 'max_temp',
  min: 'min',
  min_hum: 'min_humidity',
  min_temp: 'min_temp',
  mode: 'mode',
  mode_cmd_t: 'mode_command_topic',
  mode_stat_t: 'mode_state_topic',
  mode_stat_tpl: 'mode_state_template',
  modes: 'modes',
  name: 'name',
  o: 'origin',
  ops: 'options',
  p: 'platform',
  pl_off: 'payload_off',
  pl_on: 'payload_on',
  pl_prs: 'payload_press',
  ret: 'retain',
  stat_cla: 'state_class',
  stat_t: 'state_topic',
  stat_val_tpl: 'state_value_template',
  step: 'step',
  temp_cmd_t: 'temperature_command_topic',
  temp_stat_t: 'temperature_state_topic',
  temp_stat_tpl: 'temperature_state_template',
  temp_unit: 'temperature_unit',
  uniq_id: 'unique_id',
  unit_of_meas: 'unit_of_measurement',
  val_tpl: 'value_template',
};
// Full names that have an abbreviation in the table (we must use the abbreviation, consistently).
const ABBREVIATED_FULL_NAMES = new Set(
  Object.entries(ABBREVIATIONS)
    .filter(([abbr, full]) => abbr !== full)
    .map(([, full]) => full),
);
// Device and origin abbreviations: same page, "Supported abbreviations for device registry
// configuration" and "… for origin info".
const DEVICE_KEYS: Record<string, string> = {
  ids: 'identifiers',
  name: 'name',
  mf: 'manufacturer',
  mdl: 'model',
  sw: 'sw_version',
};
const ORIGIN_KEYS: Record<string, string> = { name: 'name', sw: 'sw_version', url: 'support_url' };
// Root of a device payload: https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload
// ("device" and "origin" required; shared options: availability, origin, command_topic,
// state_topic, qos, encoding; components).
const ROOT_KEYS = new Set(['device', 'origin', 'availability_topic', 'qos', 'components']);

// Options every MQTT entity platform documents (each platform page's configuration list).
const ENTITY_KEYS = [
  'platform',
  'name',
  'unique_id',
  'default_entity_id',
  'entity_category',
  'availability_topic',
  'qos',
];
// Per platform, from https://www.home-assistant.io/integrations/<platform>.mqtt/
const PLATFORM_KEYS: Record<string, string[]> = {
  climate: [
    'action_template',
    'action_topic',
    'current_temperature_template',
    'current_temperature_topic',
    'max_temp',
    'min_temp',
    'mode_command_topic',
    'mode_state_template',
    'mode_state_topic',
    'modes',
    'precision',
    'retain',
    'temp_step',
    'temperature_command_topic',
    'temperature_state_template',
    'temperature_state_topic',
    'temperature_unit',
  ],
  humidifier: [
    'action_template',
    'action_topic',
    'command_topic',
    'current_humidity_template',
    'current_humidity_topic',
    'device_class',
    'max_humidity',
    'min_humidity',
    'mode_command_topic',
    'mode_state_template',
    'mode_state_topic',
    'modes',
    'payload_off',
    'payload_on',
    'retain',
    'state_topic',
    'state_value_template',
    'target_humidity_command_topic',
    'target_humidity_state_template',
    'target_humidity_state_topic',
  ],
  sensor: [
    'device_class',
    'json_attributes_template',
    'json_attributes_topic',
    'state_class',
    'state_topic',
    'unit_of_measurement',
    'value_template',
  ],
  binary_sensor: ['device_class', 'state_topic', 'value_template'],
  button: ['command_topic', 'payload_press', 'retain'],
  number: [
    'command_topic',
    'max',
    'min',
    'mode',
    'retain',
    'state_topic',
    'step',
    'unit_of_measurement',
    'value_template',
  ],
  select: ['command_topic', 'options', 'retain', 'state_topic', 'value_template'],
};
// Valid action values: climate.mqtt and humidifier.mqtt docs, action_topic.
const HA_CLIMATE_ACTIONS = ['off', 'heating', 'cooling', 'drying', 'idle', 'fan'];
const HA_HUMIDIFIER_ACTIONS = ['off', 'humidifying', 'drying', 'idle'];
// HA HVAC modes (climate entity docs).
const HA_HVAC_MODES = ['off', 'heat', 'cool', 'heat_cool', 'auto', 'dry', 'fan_only'];

// ---------------------------------------------------------------------------------------
// Fixtures

const options = { prefix: 'homeassistant', baseTopic: 'homeostat', version: '1.2.3' };

/** A config with one thermal plant `t` and one humidity plant `h`, and the given loops. */
function makeConfig(loops: string, nodeId = 'pi-1'): Config {
  return validConfig(`
version: 1
node: { id: ${nodeId}, name: Cellar }
simulation:
  plants:
    t: { ambient: 10, timeConstantS: 600 }
    h: { kind: humidity, ambient: 40, timeConstantS: 600 }
sensors:
  temp: { kind: simulated, plant: t }
  temp2: { kind: simulated, plant: t }
  temp3: { kind: simulated, plant: t }
  rh: { kind: simulated, plant: h }
actuators:
  heater: { kind: simulated_relay, plant: t, gain: 20 }
  heater2: { kind: simulated_relay, plant: t, gain: 20 }
  cooler: { kind: simulated_relay, plant: t, gain: -20 }
  heater3: { kind: simulated_relay, plant: t, gain: 20 }
  fogger: { kind: simulated_continuous, plant: h, gain: 30 }
  dryer: { kind: simulated_continuous, plant: h, gain: -30 }
loops:
${loops}
`);
}

const ROOM =
  '  room: { name: Room, sensor: temp, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }';
const CHAMBER =
  '  chamber: { sensor: temp2, raise: heater2, lower: cooler, setpoint: 18, step: 0.1, limits: { min: 0, max: 30 }, controller: { type: hysteresis } }';
const AIR =
  '  air: { quantity: humidity, sensor: rh, raise: fogger, setpoint: 60, limits: { min: 30.5, max: 80 }, controller: { type: pid, kp: 0.1 } }';

function components(payload: DiscoveryPayload): [string, DiscoveryComponent][] {
  return Object.entries(payload.cmps);
}

function component(payload: DiscoveryPayload, key: string): DiscoveryComponent {
  const found = payload.cmps[key];
  assert.ok(found, `no component ${key} (have ${Object.keys(payload.cmps).join(', ')})`);
  return found;
}

// ---------------------------------------------------------------------------------------

describe('discoveryPayload: one device, one component per entity', () => {
  const config = makeConfig([ROOM, CHAMBER, AIR].join('\n'));
  const { topic, payload } = discoveryPayload(config, options);

  test('device-based discovery topic, device, origin and shared availability', () => {
    assert.equal(topic, 'homeassistant/device/pi-1/config');
    assert.deepEqual(payload.dev, {
      ids: ['homeostat_pi-1'],
      name: 'Cellar',
      mf: 'homeostat',
      mdl: 'homeostat',
      sw: '1.2.3',
    });
    assert.deepEqual(payload.o, { name: 'homeostat', sw: '1.2.3' });
    assert.equal(payload.avty_t, 'homeostat/pi-1/availability');
    assert.equal(homeAssistantStatusTopic('homeassistant'), 'homeassistant/status');
  });

  test('origin carries a support URL when given', () => {
    const withUrl = discoveryPayload(config, { ...options, supportUrl: 'https://example.org/homeostat' });
    assert.equal(withUrl.payload.o.url, 'https://example.org/homeostat');
  });

  test('every key is a documented Home Assistant key, abbreviated wherever an abbreviation exists', () => {
    for (const key of Object.keys(payload)) {
      assert.ok(ROOT_KEYS.has(ABBREVIATIONS[key] ?? key), `root key ${key}`);
    }
    for (const key of Object.keys(payload.dev)) assert.ok(key in DEVICE_KEYS, `device key ${key}`);
    for (const key of Object.keys(payload.o)) assert.ok(key in ORIGIN_KEYS, `origin key ${key}`);
    for (const [id, cmp] of components(payload)) {
      const documented = new Set([...ENTITY_KEYS, ...(PLATFORM_KEYS[cmp.p] ?? [])]);
      for (const key of Object.keys(cmp)) {
        const full = ABBREVIATIONS[key] ?? key;
        assert.ok(documented.has(full), `${id}: ${key} (${full}) is not a documented ${cmp.p} key`);
        assert.ok(!ABBREVIATED_FULL_NAMES.has(key), `${id}: ${key} has an abbreviation; use it`);
      }
    }
  });

  test('every component has a platform, a unique id equal to its key and a default entity id of its platform', () => {
    for (const [id, cmp] of components(payload)) {
      assert.ok(cmp.p in PLATFORM_KEYS, `${id}: platform ${cmp.p}`);
      assert.equal(cmp.uniq_id, id);
      assert.match(id, /^homeostat_pi-1_[a-z0-9_]+$/);
      assert.match(String(cmp.def_ent_id), new RegExp(`^${cmp.p}\\.homeostat_pi_1_[a-z0-9_]+$`));
    }
    const entityIds = components(payload).map(([, cmp]) => cmp.def_ent_id);
    assert.equal(new Set(entityIds).size, entityIds.length, 'entity ids are unique');
  });

  test('per loop: the main entity, measured value, output, fault, storage problem and fault reset; on PID loops the autotune', () => {
    assert.deepEqual(Object.keys(payload.cmps).sort(), [
      'homeostat_pi-1_air_autotune',
      'homeostat_pi-1_air_autotune_cancel',
      'homeostat_pi-1_air_autotune_status',
      'homeostat_pi-1_air_fault',
      'homeostat_pi-1_air_fault_reset',
      'homeostat_pi-1_air_humidifier',
      'homeostat_pi-1_air_humidity',
      'homeostat_pi-1_air_output',
      'homeostat_pi-1_air_storage',
      'homeostat_pi-1_air_tuning_accept',
      'homeostat_pi-1_chamber_climate',
      'homeostat_pi-1_chamber_fault',
      'homeostat_pi-1_chamber_fault_reset',
      'homeostat_pi-1_chamber_output',
      'homeostat_pi-1_chamber_storage',
      'homeostat_pi-1_chamber_temperature',
      'homeostat_pi-1_room_climate',
      'homeostat_pi-1_room_fault',
      'homeostat_pi-1_room_fault_reset',
      'homeostat_pi-1_room_output',
      'homeostat_pi-1_room_storage',
      'homeostat_pi-1_room_temperature',
    ]);
  });

  test('storage problem: a diagnostic problem sensor, ON while StorageHealthy is False', () => {
    const storage = component(payload, 'homeostat_pi-1_room_storage');
    assert.equal(storage.p, 'binary_sensor');
    assert.equal(storage.stat_t, 'homeostat/pi-1/room/state');
    assert.equal(storage.dev_cla, 'problem');
    assert.equal(storage.val_tpl, STATE_TEMPLATES.storageProblem);
  });

  test('climate: state from <loop>/state, commands to setpoint/set and mode/set, limits and step', () => {
    const room = component(payload, 'homeostat_pi-1_room_climate');
    assert.deepEqual(room, {
      p: 'climate',
      name: 'Room',
      uniq_id: 'homeostat_pi-1_room_climate',
      def_ent_id: 'climate.homeostat_pi_1_room',
      modes: ['off', 'heat'],
      mode_cmd_t: 'homeostat/pi-1/room/mode/set',
      mode_stat_t: 'homeostat/pi-1/room/state',
      mode_stat_tpl: '{{ value_json.mode }}',
      temp_cmd_t: 'homeostat/pi-1/room/setpoint/set',
      temp_stat_t: 'homeostat/pi-1/room/state',
      temp_stat_tpl: '{{ value_json.setpoint }}',
      curr_temp_t: 'homeostat/pi-1/room/state',
      curr_temp_tpl: STATE_TEMPLATES.measured,
      act_t: 'homeostat/pi-1/room/state',
      act_tpl: STATE_TEMPLATES.climateAction,
      min_temp: 5,
      max_temp: 30,
      temp_step: 0.5,
      precision: 0.5,
      temp_unit: 'C',
      ret: false,
      qos: 1,
    });
    assert.equal(component(payload, 'homeostat_pi-1_chamber_climate').temp_step, 0.1);
  });

  test('sensors, fault and reset button', () => {
    assert.deepEqual(component(payload, 'homeostat_pi-1_room_temperature'), {
      p: 'sensor',
      name: 'Room temperature',
      uniq_id: 'homeostat_pi-1_room_temperature',
      def_ent_id: 'sensor.homeostat_pi_1_room_temperature',
      stat_t: 'homeostat/pi-1/room/state',
      val_tpl: STATE_TEMPLATES.measured,
      stat_cla: 'measurement',
      dev_cla: 'temperature',
      unit_of_meas: '°C',
      qos: 1,
    });
    const output = component(payload, 'homeostat_pi-1_room_output');
    assert.equal(output.unit_of_meas, '%');
    assert.equal(output.stat_cla, 'measurement');
    const fault = component(payload, 'homeostat_pi-1_room_fault');
    assert.equal(fault.p, 'binary_sensor');
    assert.equal(fault.dev_cla, 'problem');
    assert.deepEqual(component(payload, 'homeostat_pi-1_room_fault_reset'), {
      p: 'button',
      name: 'Room reset fault',
      uniq_id: 'homeostat_pi-1_room_fault_reset',
      def_ent_id: 'button.homeostat_pi_1_room_fault_reset',
      cmd_t: 'homeostat/pi-1/room/fault/reset',
      pl_prs: 'reset',
      ent_cat: 'config',
      ret: false,
      qos: 1,
    });
  });

  test('every component carries qos 1 itself (HA did not pass the device-level qos on to components)', () => {
    for (const [id, cmp] of components(payload)) assert.equal(cmp.qos, 1, id);
    assert.equal(payload.qos, 1);
  });

  test('a PID loop: autotune, cancel and accept buttons, and an autotune status sensor reading the state', () => {
    const cmps = Object.fromEntries(
      ['autotune', 'autotune_cancel', 'tuning_accept', 'autotune_status'].map((key) => [
        key,
        component(payload, `homeostat_pi-1_air_${key}`),
      ]),
    );
    assert.deepEqual(cmps.autotune, {
      p: 'button',
      name: 'air autotune',
      uniq_id: 'homeostat_pi-1_air_autotune',
      def_ent_id: 'button.homeostat_pi_1_air_autotune',
      cmd_t: 'homeostat/pi-1/air/autotune/set',
      pl_prs: 'start',
      ent_cat: 'config',
      ret: false,
      qos: 1,
    });
    assert.deepEqual(
      [cmps.autotune_cancel?.name, cmps.autotune_cancel?.cmd_t, cmps.autotune_cancel?.pl_prs],
      ['air cancel autotune', 'homeostat/pi-1/air/autotune/set', 'cancel'],
    );
    assert.deepEqual(
      [cmps.tuning_accept?.name, cmps.tuning_accept?.cmd_t, cmps.tuning_accept?.pl_prs],
      ['air accept tuning', 'homeostat/pi-1/air/tuning/set', 'latest'],
    );
    assert.deepEqual(cmps.autotune_status, {
      p: 'sensor',
      name: 'air autotune status',
      uniq_id: 'homeostat_pi-1_air_autotune_status',
      def_ent_id: 'sensor.homeostat_pi_1_air_autotune_status',
      stat_t: 'homeostat/pi-1/air/state',
      val_tpl: STATE_TEMPLATES.autotunePhase,
      json_attr_t: 'homeostat/pi-1/air/state',
      json_attr_tpl: STATE_TEMPLATES.autotuneAttributes,
      ent_cat: 'diagnostic',
      qos: 1,
    });
  });

  test('a hysteresis loop (no gains to tune): no autotune entities', () => {
    for (const key of Object.keys(payload.cmps).filter((k) => !k.startsWith('homeostat_pi-1_air_'))) {
      assert.doesNotMatch(key, /autotune|tuning/, key);
    }
  });

  test('every command HA can send is a command topic and payload homeostat accepts', () => {
    const topics = topicsFor('homeostat', 'pi-1');
    for (const [id, cmp] of components(payload)) {
      for (const key of ['cmd_t', 'mode_cmd_t', 'temp_cmd_t', 'hum_cmd_t']) {
        if (cmp[key] === undefined) continue;
        assert.ok(topics.parseCommandTopic(String(cmp[key])), `${id}.${key} = ${cmp[key]}`);
      }
    }
    const loopConfig = config.loops.room!;
    const target = { limits: loopConfig.limits, modes: ['off', 'heat'] as Mode[] };
    const room = component(payload, 'homeostat_pi-1_room_climate');
    for (const mode of room.modes as string[]) {
      assert.ok(parseCommand('mode', Buffer.from(mode), target).accepted, `climate mode ${mode}`);
    }
    // HA sends the target temperature as a plain float.
    assert.ok(parseCommand('setpoint', Buffer.from('21.5'), target).accepted);
    const reset = component(payload, 'homeostat_pi-1_room_fault_reset');
    assert.ok(parseCommand('faultReset', Buffer.from(String(reset.pl_prs)), target).accepted);
    const presses: [key: string, expected: unknown][] = [
      ['air_autotune', { autotune: { action: 'start' } }],
      ['air_autotune_cancel', { autotune: { action: 'cancel' } }],
      ['air_tuning_accept', { tuning: 'latest' }],
    ];
    for (const [key, expected] of presses) {
      const button = component(payload, `homeostat_pi-1_${key}`);
      const kind = topics.parseCommandTopic(String(button.cmd_t))?.kind;
      assert.ok(kind, key);
      const outcome = parseCommand(kind, Buffer.from(String(button.pl_prs)), target);
      assert.deepEqual(outcome, { accepted: true, change: expected }, key);
    }
  });
});

describe('climate modes follow the actuators (CLIMATE_MODE maps each to the same HA HVAC mode)', () => {
  const table: [actuators: string, modes: string[]][] = [
    ['raise: heater', ['off', 'heat']],
    ['lower: cooler', ['off', 'cool']],
    ['raise: heater, lower: cooler', ['off', 'heat', 'cool', 'heat_cool']],
  ];
  for (const [actuators, modes] of table) {
    test(`${actuators} → ${modes.join(', ')}`, () => {
      const config = makeConfig(
        `  x: { sensor: temp, ${actuators}, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }`,
      );
      const cmp = component(discoveryPayload(config, options).payload, 'homeostat_pi-1_x_climate');
      assert.deepEqual(cmp.modes, modes);
      for (const mode of modes) assert.ok(HA_HVAC_MODES.includes(mode), mode);
    });
  }
  test('the mapping is the identity, so HA mode commands need no template', () => {
    for (const [ours, theirs] of Object.entries(CLIMATE_MODE)) assert.equal(theirs, ours);
  });
});

describe('humidity loops: a humidifier entity', () => {
  test('humidify only: device class humidifier, on/off is the mode, whole-percent bounds', () => {
    const { payload } = discoveryPayload(makeConfig(AIR), options);
    const cmp = component(payload, 'homeostat_pi-1_air_humidifier');
    assert.deepEqual(cmp, {
      p: 'humidifier',
      name: null, // the only loop: the entity is the device (named Cellar in HA)
      uniq_id: 'homeostat_pi-1_air_humidifier',
      def_ent_id: 'humidifier.homeostat_pi_1_air',
      dev_cla: 'humidifier',
      cmd_t: 'homeostat/pi-1/air/mode/set',
      pl_on: 'humidify',
      pl_off: 'off',
      stat_t: 'homeostat/pi-1/air/state',
      stat_val_tpl: "{{ 'off' if value_json.mode == 'off' else 'humidify' }}",
      hum_cmd_t: 'homeostat/pi-1/air/setpoint/set',
      hum_stat_t: 'homeostat/pi-1/air/state',
      hum_state_tpl: STATE_TEMPLATES.targetHumidity(31, 80),
      curr_hum_t: 'homeostat/pi-1/air/state',
      curr_hum_tpl: STATE_TEMPLATES.measured,
      act_t: 'homeostat/pi-1/air/state',
      act_tpl: STATE_TEMPLATES.humidifierAction,
      min_hum: 31, // limits 30.5..80: HA takes whole percent within them
      max_hum: 80,
      ret: false, // HA's default too (DEFAULT_RETAIN); stated so no HA version can retain commands
      qos: 1,
    });
    const sensor = component(payload, 'homeostat_pi-1_air_humidity');
    assert.equal(sensor.dev_cla, 'humidity');
    assert.equal(sensor.unit_of_meas, '%');
  });

  test('dehumidify only: device class dehumidifier', () => {
    const config = makeConfig(
      '  air: { quantity: humidity, sensor: rh, lower: dryer, setpoint: 60, limits: { min: 30, max: 80 }, controller: { type: pid, kp: 0.1 } }',
    );
    const cmp = component(discoveryPayload(config, options).payload, 'homeostat_pi-1_air_humidifier');
    assert.equal(cmp.dev_cla, 'dehumidifier');
    assert.equal(cmp.pl_on, 'dehumidify');
    assert.equal(cmp.modes, undefined);
  });

  test('both actuators: HA modes humidify, dehumidify, auto; on restores the file mode', () => {
    const config = makeConfig(
      '  air: { quantity: humidity, sensor: rh, raise: fogger, lower: dryer, mode: dehumidify, setpoint: 60, limits: { min: 30, max: 80 }, controller: { type: pid, kp: 0.1 } }',
    );
    const cmp = component(discoveryPayload(config, options).payload, 'homeostat_pi-1_air_humidifier');
    assert.deepEqual(cmp.modes, ['humidify', 'dehumidify', 'auto']);
    assert.equal(cmp.mode_cmd_t, 'homeostat/pi-1/air/mode/set');
    assert.equal(cmp.pl_on, 'dehumidify');
  });

  test('humidity bounds: the limits rounded inward, within HA rules (0 <= min < max <= 100); else a number', () => {
    const table: [limits: [number, number], bounds: [number, number] | 'number'][] = [
      [
        [30, 80],
        [30, 80],
      ],
      [
        [30.5, 80.5],
        [31, 80],
      ],
      [
        [-10, 120],
        [0, 100],
      ],
      // Fewer than two whole percents inside the limits: HA's humidifier cannot show them.
      [[99.5, 100], 'number'],
      [[40.2, 40.8], 'number'],
    ];
    for (const [[min, max], bounds] of table) {
      const config = makeConfig(
        `  air: { quantity: humidity, sensor: rh, raise: fogger, setpoint: ${(min + max) / 2}, limits: { min: ${min}, max: ${max} }, controller: { type: pid, kp: 0.1 } }`,
      );
      const { payload } = discoveryPayload(config, options);
      if (bounds === 'number') {
        assert.equal(payload.cmps['homeostat_pi-1_air_humidifier'], undefined, `limits ${min}..${max}`);
        const number = component(payload, 'homeostat_pi-1_air_setpoint');
        assert.deepEqual([number.min, number.max, number.unit_of_meas], [min, max, '%']);
        continue;
      }
      const cmp = component(payload, 'homeostat_pi-1_air_humidifier');
      assert.deepEqual([cmp.min_hum, cmp.max_hum], bounds, `limits ${min}..${max}`);
    }
  });

  test('a loop configured off turns on in the mode using every actuator', () => {
    const config = makeConfig(
      '  air: { quantity: humidity, sensor: rh, raise: fogger, lower: dryer, mode: "off", setpoint: 60, limits: { min: 30, max: 80 }, controller: { type: pid, kp: 0.1 } }',
    );
    const cmp = component(discoveryPayload(config, options).payload, 'homeostat_pi-1_air_humidifier');
    assert.equal(cmp.pl_on, 'auto');
  });
});

describe('generic loops: a number for the setpoint, a select for the mode', () => {
  test('no climate or humidifier; setpoint and mode entities command the contract topics', () => {
    const config = makeConfig(
      '  level: { quantity: generic, unit: cm, sensor: temp3, raise: heater3, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }',
    );
    const { payload } = discoveryPayload(config, options);
    const number = component(payload, 'homeostat_pi-1_level_setpoint');
    assert.equal(number.p, 'number');
    assert.deepEqual([number.min, number.max, number.step, number.unit_of_meas], [5, 30, 0.5, 'cm']);
    assert.equal(number.cmd_t, 'homeostat/pi-1/level/setpoint/set');
    const select = component(payload, 'homeostat_pi-1_level_mode');
    assert.deepEqual(select.ops, ['off', 'heat']);
    assert.equal(select.cmd_t, 'homeostat/pi-1/level/mode/set');
    const measured = component(payload, 'homeostat_pi-1_level_measured');
    assert.equal(measured.dev_cla, undefined, 'no device class for an arbitrary unit');
    assert.equal(measured.unit_of_meas, 'cm');
  });
});

// ---------------------------------------------------------------------------------------
// Templates. Asserted as strings above; here rendered by real Jinja2 (what HA uses) when a
// python3 with jinja2 is on the machine, against sample state JSON.

const jinja = spawnSync('python3', ['-c', 'import jinja2'], { encoding: 'utf8' });
const haveJinja = jinja.status === 0;

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

describe('state templates render what Home Assistant expects', {
  skip: haveJinja ? false : 'python3 jinja2 not found',
}, () => {
  const faulted = (status: string) => ({
    conditions: [
      { type: 'SensorHealthy', status: status === 'True' ? 'False' : 'True' },
      { type: 'Faulted', status },
    ],
  });
  const table: [name: string, template: string, state: unknown, expected: string][] = [
    ['setpoint', STATE_TEMPLATES.setpoint, { setpoint: 21.5 }, '21.5'],
    ['mode', STATE_TEMPLATES.mode, { mode: 'heat_cool' }, 'heat_cool'],
    ['measured', STATE_TEMPLATES.measured, { measured: 19.875 }, '19.875'],
    ['measured null → None (unknown)', STATE_TEMPLATES.measured, { measured: null }, 'None'],
    ['measured absent → None', STATE_TEMPLATES.measured, {}, 'None'],
    ['output → percent', STATE_TEMPLATES.outputPercent, { output: 0.4213 }, '42.1'],
    ['output negative (lowering)', STATE_TEMPLATES.outputPercent, { output: -0.75 }, '-75.0'],
    ['Faulted True → ON', STATE_TEMPLATES.faulted, faulted('True'), 'ON'],
    ['Faulted False → OFF', STATE_TEMPLATES.faulted, faulted('False'), 'OFF'],
    ['no conditions → OFF', STATE_TEMPLATES.faulted, {}, 'OFF'],
    [
      'StorageHealthy False → storage problem ON',
      STATE_TEMPLATES.storageProblem,
      { conditions: [{ type: 'StorageHealthy', status: 'False' }] },
      'ON',
    ],
    [
      'StorageHealthy True → OFF',
      STATE_TEMPLATES.storageProblem,
      { conditions: [{ type: 'StorageHealthy', status: 'True' }] },
      'OFF',
    ],
    ['no StorageHealthy condition → OFF', STATE_TEMPLATES.storageProblem, faulted('True'), 'OFF'],
    ['climate heating', STATE_TEMPLATES.climateAction, { action: 'heating' }, 'heating'],
    ['climate idle', STATE_TEMPLATES.climateAction, { action: 'idle' }, 'idle'],
    [
      'climate: humidifying is not a climate action',
      STATE_TEMPLATES.climateAction,
      { action: 'humidifying' },
      'None',
    ],
    ['humidifier humidifying', STATE_TEMPLATES.humidifierAction, { action: 'humidifying' }, 'humidifying'],
    ['humidifier drying', STATE_TEMPLATES.humidifierAction, { action: 'drying' }, 'drying'],
    [
      'humidifier: heating is not a humidifier action',
      STATE_TEMPLATES.humidifierAction,
      { action: 'heating' },
      'None',
    ],
    ['humidifier on', STATE_TEMPLATES.humidifierState('auto'), { mode: 'humidify' }, 'auto'],
    ['humidifier off', STATE_TEMPLATES.humidifierState('auto'), { mode: 'off' }, 'off'],
    ['humidifier mode', STATE_TEMPLATES.humidifierMode, { mode: 'dehumidify' }, 'dehumidify'],
    ['humidifier mode when off', STATE_TEMPLATES.humidifierMode, { mode: 'off' }, 'None'],
    [
      'autotune relay phase',
      STATE_TEMPLATES.autotunePhase,
      { autotune: { phase: 'relay', cycles: 1 } },
      'relay',
    ],
    ['autotune aborted', STATE_TEMPLATES.autotunePhase, { autotune: { phase: 'aborted' } }, 'aborted'],
    ['no autotune → idle', STATE_TEMPLATES.autotunePhase, { mode: 'heat' }, 'idle'],
    ['autotune null → idle', STATE_TEMPLATES.autotunePhase, { autotune: null }, 'idle'],
    ['autotune without a phase → idle', STATE_TEMPLATES.autotunePhase, { autotune: {} }, 'idle'],
    [
      'autotune attributes: the object as JSON',
      STATE_TEMPLATES.autotuneAttributes,
      { autotune: { phase: 'relay', cycles: 2 } },
      '{"cycles": 2, "phase": "relay"}',
    ],
    ['no autotune → no attributes', STATE_TEMPLATES.autotuneAttributes, {}, '{}'],
    ['autotune null → no attributes', STATE_TEMPLATES.autotuneAttributes, { autotune: null }, '{}'],
  ];
  test('table', () => {
    const rendered = render(table.map(([, template, state]) => [template, state]));
    table.forEach(([name, , , expected], i) => {
      assert.equal(rendered[i], expected, name);
    });
  });

  test('every action the core produces renders to a valid HA action of the entity that shows it', () => {
    const ours = ['off', 'idle', 'heating', 'cooling', 'drying', 'fan', 'humidifying'];
    const climate = render(ours.map((action) => [STATE_TEMPLATES.climateAction, { action }]));
    const humidifier = render(ours.map((action) => [STATE_TEMPLATES.humidifierAction, { action }]));
    for (const value of climate) assert.ok([...HA_CLIMATE_ACTIONS, 'None'].includes(value), value);
    for (const value of humidifier) assert.ok([...HA_HUMIDIFIER_ACTIONS, 'None'].includes(value), value);
  });
});

// ---------------------------------------------------------------------------------------

describe('discoveryDiff: publish only what changed, remove what disappeared', () => {
  const both = discoveryPayload(makeConfig([ROOM, AIR].join('\n')), options);
  const roomOnly = discoveryPayload(makeConfig(ROOM), options);

  test('nothing published yet (or unknown): publish the payload, retained', () => {
    const { publishes, published } = discoveryDiff(undefined, both);
    assert.deepEqual(publishes, [{ topic: both.topic, payload: JSON.stringify(both.payload), retain: true }]);
    assert.deepEqual([...published], [[both.topic, JSON.stringify(both.payload)]]);
  });

  test('unchanged: nothing to publish (reconciling twice = once)', () => {
    const first = discoveryDiff(undefined, both);
    const second = discoveryDiff(
      first.published,
      discoveryPayload(makeConfig([ROOM, AIR].join('\n')), options),
    );
    assert.deepEqual(second.publishes, []);
    assert.deepEqual(second.published, first.published);
  });

  test('changed component: the new payload, no removal markers', () => {
    const previous = discoveryDiff(undefined, roomOnly).published;
    const changed = discoveryPayload(makeConfig(ROOM.replace('max: 30', 'max: 28')), options);
    const { publishes } = discoveryDiff(previous, changed);
    assert.equal(publishes.length, 1);
    assert.equal(
      (JSON.parse(publishes[0]!.payload) as DiscoveryPayload).cmps['homeostat_pi-1_room_climate']!.max_temp,
      28,
    );
  });

  test('a loop removed: first its components reduced to their platform, then the payload without them', () => {
    const previous = discoveryDiff(undefined, both).published;
    const { publishes, published } = discoveryDiff(previous, roomOnly);
    assert.equal(publishes.length, 2);
    const [marker, final] = publishes.map((p) => JSON.parse(p.payload) as DiscoveryPayload);
    assert.ok(publishes.every((p) => p.topic === roomOnly.topic && p.retain));
    // The marker still carries dev and o (required), the kept components unchanged, and each
    // removed component as {"p": platform} only.
    assert.deepEqual(marker!.dev, roomOnly.payload.dev);
    assert.deepEqual(marker!.o, roomOnly.payload.o);
    for (const [key, cmp] of Object.entries(roomOnly.payload.cmps)) assert.deepEqual(marker!.cmps[key], cmp);
    const removed = Object.entries(marker!.cmps).filter(([key]) => !(key in roomOnly.payload.cmps));
    assert.deepEqual(Object.fromEntries(removed), {
      'homeostat_pi-1_air_humidifier': { p: 'humidifier' },
      'homeostat_pi-1_air_humidity': { p: 'sensor' },
      'homeostat_pi-1_air_output': { p: 'sensor' },
      'homeostat_pi-1_air_fault': { p: 'binary_sensor' },
      'homeostat_pi-1_air_storage': { p: 'binary_sensor' },
      'homeostat_pi-1_air_fault_reset': { p: 'button' },
      'homeostat_pi-1_air_autotune': { p: 'button' },
      'homeostat_pi-1_air_autotune_cancel': { p: 'button' },
      'homeostat_pi-1_air_tuning_accept': { p: 'button' },
      'homeostat_pi-1_air_autotune_status': { p: 'sensor' },
    });
    assert.deepEqual(final, roomOnly.payload);
    assert.equal(published.get(roomOnly.topic), JSON.stringify(roomOnly.payload));
  });

  test('a loop whose quantity changed: the old entity is removed, the new one added', () => {
    const previous = discoveryDiff(undefined, roomOnly).published;
    const generic = discoveryPayload(
      makeConfig(ROOM.replace('name: Room,', 'name: Room, quantity: generic,')),
      options,
    );
    const [marker] = discoveryDiff(previous, generic).publishes.map(
      (p) => JSON.parse(p.payload) as DiscoveryPayload,
    );
    assert.deepEqual(marker!.cmps['homeostat_pi-1_room_climate'], { p: 'climate' });
    assert.deepEqual(marker!.cmps['homeostat_pi-1_room_temperature'], { p: 'sensor' });
    assert.equal(marker!.cmps['homeostat_pi-1_room_setpoint']!.p, 'number');
  });

  test('a device topic no longer wanted (node renamed, discovery off): an empty retained payload', () => {
    const previous = discoveryDiff(undefined, roomOnly).published;
    const renamed = discoveryPayload(makeConfig(ROOM, 'pi-2'), options);
    assert.deepEqual(discoveryDiff(previous, renamed).publishes, [
      { topic: renamed.topic, payload: JSON.stringify(renamed.payload), retain: true },
      { topic: 'homeassistant/device/pi-1/config', payload: '', retain: true },
    ]);
    const off = discoveryDiff(previous, []);
    assert.deepEqual(off.publishes, [
      { topic: 'homeassistant/device/pi-1/config', payload: '', retain: true },
    ]);
    assert.equal(off.published.size, 0);
  });

  test('an unreadable previous payload is simply replaced', () => {
    const previous = new Map([[roomOnly.topic, '{not json']]);
    assert.deepEqual(discoveryDiff(previous, roomOnly).publishes, [
      { topic: roomOnly.topic, payload: JSON.stringify(roomOnly.payload), retain: true },
    ]);
  });
});
