/**
 * Every published component against Home Assistant's MQTT platform schemas: no unknown key, only
 * documented abbreviations, required keys present; and tables for units, names, precision and
 * humidity rounding.
 *
 * Key lists copied from home-assistant/core, homeassistant/components/mqtt/ (read through the
 * code index, 2026): abbreviations.py (current table, as mirrored by the fork Sigri44/core at
 * 5d99f7b1874a90ba25a781fc34aefa189a5c0b8b, which has def_ent_id and curr_hum_t), config.py
 * (MQTT_BASE/RO/RW_SCHEMA), schemas.py (MQTT_ENTITY_COMMON_SCHEMA, core c6ca7f5f; default_entity_id
 * added in 2025.10), climate.py (_PLATFORM_SCHEMA_BASE, 2025+ version with swing_horizontal),
 * humidifier.py, sensor.py, number.py. When HA changes a schema, change the lists here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import type { Config } from '../../src/config/schema.js';
import {
  climatePrecision,
  type DiscoveryComponent,
  discoveryPayload,
  STATE_TEMPLATES,
} from '../../src/mqtt/discovery.js';
import { validConfig } from '../support/config.js';

/** abbreviations.py ABBREVIATIONS: only the entries whose keys homeostat may publish. */
const HA_ABBREVIATIONS: Record<string, string> = {
  act_t: 'action_topic',
  act_tpl: 'action_template',
  avty_t: 'availability_topic',
  cmd_t: 'command_topic',
  cmd_tpl: 'command_template',
  curr_hum_t: 'current_humidity_topic',
  curr_hum_tpl: 'current_humidity_template',
  curr_temp_t: 'current_temperature_topic',
  curr_temp_tpl: 'current_temperature_template',
  def_ent_id: 'default_entity_id',
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
  ops: 'options',
  p: 'platform',
  pl_off: 'payload_off',
  pl_on: 'payload_on',
  pl_prs: 'payload_press',
  pr_mode_cmd_t: 'preset_mode_command_topic',
  pr_mode_stat_t: 'preset_mode_state_topic',
  pr_mode_val_tpl: 'preset_mode_value_template',
  pr_modes: 'preset_modes',
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
/** Full names that have an abbreviation: publishing them in full would be inconsistent. */
const ABBREVIATED = new Set(Object.entries(HA_ABBREVIATIONS).flatMap(([a, f]) => (a === f ? [] : [f])));

/** schemas.py MQTT_ENTITY_COMMON_SCHEMA (+ availability) and config.py MQTT_BASE_SCHEMA, plus `platform`. */
const COMMON = [
  'platform',
  'availability_topic',
  'availability_template',
  'availability_mode',
  'availability',
  'payload_available',
  'payload_not_available',
  'device',
  'origin',
  'enabled_by_default',
  'entity_category',
  'icon',
  'json_attributes_topic',
  'json_attributes_template',
  'object_id',
  'default_entity_id',
  'unique_id',
  'qos',
  'encoding',
];
const RO = ['state_topic', 'value_template']; // config.py MQTT_RO_SCHEMA (state_topic required)
const RW = ['command_topic', 'optimistic', 'retain', 'state_topic']; // MQTT_RW_SCHEMA (command_topic required)

/** Each platform's own schema keys (the ones that exist in HA, not only the ones we use). */
const HA_KEYS: Record<string, { keys: string[]; required: string[] }> = {
  climate: {
    required: [],
    keys: [
      ...['current_humidity_template', 'current_humidity_topic', 'current_temperature_template'],
      ...['current_temperature_topic', 'fan_mode_command_template', 'fan_mode_command_topic', 'fan_modes'],
      ...['fan_mode_state_template', 'fan_mode_state_topic', 'target_humidity_command_template'],
      ...['target_humidity_command_topic', 'min_humidity', 'max_humidity', 'target_humidity_state_template'],
      ...['target_humidity_state_topic', 'mode_command_template', 'mode_command_topic', 'modes'],
      ...['mode_state_template', 'mode_state_topic', 'name', 'optimistic', 'payload_on', 'payload_off'],
      ...['power_command_topic', 'power_command_template', 'precision', 'retain', 'action_template'],
      ...['action_topic', 'preset_mode_command_topic', 'preset_modes', 'preset_mode_command_template'],
      ...['preset_mode_state_topic', 'preset_mode_value_template', 'swing_mode_command_template'],
      ...['swing_mode_command_topic', 'swing_modes', 'swing_mode_state_template', 'swing_mode_state_topic'],
      ...['initial', 'min_temp', 'max_temp', 'temp_step', 'temperature_command_template'],
      ...['temperature_command_topic', 'temperature_high_command_template', 'temperature_high_command_topic'],
      ...[
        'temperature_high_state_topic',
        'temperature_high_state_template',
        'temperature_low_command_template',
      ],
      ...['temperature_low_command_topic', 'temperature_low_state_template', 'temperature_low_state_topic'],
      ...['temperature_state_template', 'temperature_state_topic', 'temperature_unit', 'value_template'],
    ],
  },
  humidifier: {
    required: ['command_topic', 'target_humidity_command_topic'],
    keys: [
      ...RW,
      ...['action_template', 'action_topic', 'modes', 'mode_command_topic', 'command_template'],
      ...['current_humidity_template', 'current_humidity_topic', 'device_class', 'mode_command_template'],
      ...['mode_state_topic', 'mode_state_template', 'name', 'payload_off', 'payload_on'],
      ...['state_value_template', 'target_humidity_command_topic', 'target_humidity_command_template'],
      ...['max_humidity', 'min_humidity', 'target_humidity_state_template', 'target_humidity_state_topic'],
      ...['payload_reset_humidity', 'payload_reset_mode'],
    ],
  },
  sensor: {
    required: ['state_topic'],
    keys: [
      ...RO,
      ...['device_class', 'expire_after', 'force_update', 'last_reset_value_template', 'name', 'options'],
      ...['suggested_display_precision', 'state_class', 'unit_of_measurement'],
    ],
  },
  binary_sensor: {
    required: ['state_topic'],
    keys: [
      ...RO,
      'device_class',
      'expire_after',
      'force_update',
      'name',
      'off_delay',
      'payload_off',
      'payload_on',
    ],
  },
  button: {
    required: ['command_topic'],
    keys: ['command_topic', 'command_template', 'device_class', 'name', 'payload_press', 'retain'],
  },
  number: {
    required: ['command_topic'],
    keys: [
      ...RW,
      ...['command_template', 'device_class', 'max', 'min', 'mode', 'name', 'payload_reset', 'step'],
      ...['unit_of_measurement', 'value_template'],
    ],
  },
  select: {
    required: ['command_topic', 'options'],
    keys: [...RW, 'command_template', 'name', 'options', 'value_template'],
  },
};

// ---------------------------------------------------------------------------------------

function config(loops: string, nodeName = 'Cellar'): Config {
  return validConfig(`
version: 1
node: { id: pi-1, name: ${nodeName} }
simulation:
  plants:
    t: { ambient: 10, timeConstantS: 600 }
    h: { kind: humidity, ambient: 40, timeConstantS: 600 }
sensors:
  temp: { kind: simulated, plant: t }
  temp2: { kind: simulated, plant: t }
  rh: { kind: simulated, plant: h }
actuators:
  heater: { kind: simulated_relay, plant: t, gain: 20 }
  cooler: { kind: simulated_relay, plant: t, gain: -20 }
  heater2: { kind: simulated_relay, plant: t, gain: 20 }
  fogger: { kind: simulated_continuous, plant: h, gain: 30 }
loops:
${loops}
`);
}

const temperatureLoop = (extra: string, id = 'room', sensor = 'temp', raise = 'heater') =>
  `  ${id}: { sensor: ${sensor}, raise: ${raise}, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: pid, kp: 0.1 }${extra} }`;
const humidityLoop = (extra: string) =>
  `  air: { quantity: humidity, sensor: rh, raise: fogger, setpoint: 60, limits: { min: 30, max: 80 }, controller: { type: pid, kp: 0.1 }${extra} }`;

/** A loop with presets, a profile and a set of sensors. */
const scheduledLoop = `  room:
    sensors: [temp, temp2]
    raise: heater
    setpoint: 20
    limits: { min: 2, max: 30 }
    controller: { type: pid, kp: 0.1 }
    presets: { comfort: { setpoint: 21.5 }, eco: { setpoint: 17 } }
    profiles:
      ale: { steps: [{ holdS: 3600, setpoint: 18 }, { rampS: 3600, to: 21 }] }
      lager: { steps: [{ holdS: 3600, setpoint: 10 }] }`;
const scheduledHumidity = humidityLoop(
  ', presets: { dry: { setpoint: 40 } }, profiles: { cure: { steps: [{ holdS: 60, setpoint: 50 }] } }',
);

function cmps(loops: string, nodeName?: string): Record<string, DiscoveryComponent> {
  return discoveryPayload(config(loops, nodeName), {
    prefix: 'homeassistant',
    baseTopic: 'homeostat',
    version: '1',
  }).payload.cmps;
}

/** Every payload homeostat can publish: each platform, each fallback. */
const SAMPLES: [what: string, loops: string][] = [
  ['temperature °C, PID', temperatureLoop('')],
  ['temperature °F, two actuators', temperatureLoop(', lower: cooler, unit: "°F", step: 1')],
  ['kelvin, a generic loop (number fallback)', temperatureLoop(', quantity: generic, unit: K')],
  ['humidity', humidityLoop('')],
  [
    'humidity, narrow limits (number fallback)',
    humidityLoop('')
      .replace('min: 30, max: 80', 'min: 40.2, max: 40.8')
      .replace('setpoint: 60', 'setpoint: 40.5'),
  ],
  ['generic', temperatureLoop(', quantity: generic, unit: cm')],
  ['temperature °C with presets, profiles and two sensors', scheduledLoop],
  ['humidity with presets and a profile (no climate: presets over MQTT only)', scheduledHumidity],
];

describe('every component matches HA’s schema for its platform', () => {
  for (const [what, loops] of SAMPLES) {
    test(what, () => {
      for (const [id, cmp] of Object.entries(cmps(loops))) {
        const schema = HA_KEYS[cmp.p];
        assert.ok(schema, `${id}: platform ${cmp.p}`);
        const allowed = new Set([...COMMON, ...schema.keys]);
        const full = new Set<string>();
        for (const key of Object.keys(cmp)) {
          assert.ok(!ABBREVIATED.has(key), `${id}: ${key} has a documented abbreviation; use it`);
          const name = HA_ABBREVIATIONS[key] ?? key;
          assert.ok(allowed.has(name), `${id}: ${key} (${name}) is not a key of HA's ${cmp.p} schema`);
          full.add(name);
        }
        for (const required of [...schema.required, 'unique_id', 'platform']) {
          assert.ok(full.has(required), `${id}: required ${required} missing`);
        }
        assert.equal(cmp.qos, 1, `${id}: qos`);
      }
    });
  }

  test('the abbreviation table used here is a subset of HA’s (no invented abbreviation)', () => {
    // A key that is not a full name must be one of HA's abbreviations: checked above through
    // HA_ABBREVIATIONS; here, that abbreviated keys map to distinct full names.
    const fulls = Object.values(HA_ABBREVIATIONS);
    assert.equal(new Set(fulls).size, fulls.length);
  });
});

describe('units: HA never shows a wrong unit', () => {
  const table: [unit: string, climateUnit: string | undefined, sensorClass: string | undefined][] = [
    ['°C', 'C', 'temperature'],
    ['°F', 'F', 'temperature'],
  ];
  for (const [unit, climateUnit, sensorClass] of table) {
    test(`${unit} → climate ${climateUnit ?? 'none (number + select)'}, sensor class ${sensorClass ?? 'none'}`, () => {
      const all = cmps(temperatureLoop(`, unit: "${unit}"`));
      const climate = all['homeostat_pi-1_room_climate'];
      assert.equal(climate?.temp_unit, climateUnit);
      if (!climateUnit) {
        assert.equal(climate, undefined);
        const number = all['homeostat_pi-1_room_setpoint'];
        assert.equal(number?.unit_of_meas, unit);
        assert.deepEqual([number?.min, number?.max], [5, 30]);
        assert.equal(all['homeostat_pi-1_room_mode']?.p, 'select');
      }
      const sensor = all['homeostat_pi-1_room_temperature'];
      assert.equal(sensor?.unit_of_meas, unit);
      assert.equal(sensor?.dev_cla, sensorClass);
    });
  }

  // HA's climate temperature_unit is C or F only: a temperature loop in anything else is refused
  // by the config (loop-checks.ts), so no climate can be announced in a wrong unit; kelvin is a
  // generic loop, announced as a number in its own unit.
  for (const unit of ['K', 'C']) {
    test(`a temperature loop in "${unit}" is refused by the config, naming the way out`, () => {
      assert.throws(() => config(temperatureLoop(`, unit: "${unit}"`)), /use quantity: generic/);
    });
  }

  test('kelvin as a generic loop: a number and a sensor in K, no climate', () => {
    const all = cmps(temperatureLoop(', quantity: generic, unit: K'));
    assert.equal(all['homeostat_pi-1_room_climate'], undefined);
    assert.equal(all['homeostat_pi-1_room_setpoint']?.unit_of_meas, 'K');
    assert.equal(all['homeostat_pi-1_room_measured']?.unit_of_meas, 'K');
    assert.equal(all['homeostat_pi-1_room_mode']?.p, 'select');
  });

  test('%RH: humidifier and a humidity sensor in %; generic: the loop’s unit, no device class', () => {
    const humidity = cmps(humidityLoop(''));
    assert.equal(humidity['homeostat_pi-1_air_humidifier']?.p, 'humidifier');
    assert.deepEqual(
      [
        humidity['homeostat_pi-1_air_humidity']?.unit_of_meas,
        humidity['homeostat_pi-1_air_humidity']?.dev_cla,
      ],
      ['%', 'humidity'],
    );
    const generic = cmps(temperatureLoop(', quantity: generic, unit: cm'));
    assert.deepEqual(
      [
        generic['homeostat_pi-1_room_measured']?.unit_of_meas,
        generic['homeostat_pi-1_room_measured']?.dev_cla,
      ],
      ['cm', undefined],
    );
    assert.equal(generic['homeostat_pi-1_room_setpoint']?.unit_of_meas, 'cm');
  });
});

describe('names: HA puts the device name in front (has_entity_name)', () => {
  test('a node with one loop: the main entity is the device (name null), the others short names', () => {
    const all = cmps(temperatureLoop(', name: Greenhouse'), 'Greenhouse');
    const names = Object.fromEntries(
      Object.entries(all).map(([id, c]) => [id.replace('homeostat_pi-1_room_', ''), c.name]),
    );
    assert.deepEqual(names, {
      climate: null,
      temperature: 'Temperature',
      output: 'Output',
      fault: 'Fault',
      storage: 'Storage problem',
      fault_reset: 'Reset fault',
      autotune: 'Autotune',
      autotune_cancel: 'Cancel autotune',
      tuning_accept: 'Accept tuning',
      autotune_status: 'Autotune status',
    });
  });

  test('several loops: each keeps its name in front, except one named like the node', () => {
    const all = cmps(
      [
        temperatureLoop(', name: Greenhouse'),
        temperatureLoop(', name: Seedlings', 'bench', 'temp2', 'heater2'),
      ].join('\n'),
      'Greenhouse',
    );
    assert.equal(all['homeostat_pi-1_room_climate']?.name, null);
    assert.equal(all['homeostat_pi-1_room_output']?.name, 'Output');
    assert.equal(all['homeostat_pi-1_bench_climate']?.name, 'Seedlings');
    assert.equal(all['homeostat_pi-1_bench_output']?.name, 'Seedlings output');
  });

  test('a fallback number and select are never null-named (two entities cannot both be the device)', () => {
    const all = cmps(temperatureLoop(', quantity: generic, unit: K'));
    assert.deepEqual(
      [all['homeostat_pi-1_room_setpoint']?.name, all['homeostat_pi-1_room_mode']?.name],
      ['Setpoint', 'Mode'],
    );
  });
});

describe('climate precision from the loop’s step (HA allows 0.1, 0.5, 1)', () => {
  const table: [step: number, precision: number][] = [
    [0.1, 0.1],
    [0.2, 0.1],
    [0.5, 0.5],
    [1, 1],
    [2, 1],
    [0.25, 0.1], // no HA precision divides it: the finest, smallest display error
    [0.05, 0.1],
  ];
  for (const [step, precision] of table) {
    test(`step ${step} → precision ${precision}, temp_step ${step}`, () => {
      assert.equal(climatePrecision(step), precision);
      const climate = cmps(temperatureLoop(`, step: ${step}`))['homeostat_pi-1_room_climate'];
      assert.deepEqual([climate?.precision, climate?.temp_step], [precision, step]);
    });
  }
});

// Rendered by real Jinja2 (what HA uses) when python3 with jinja2 is present.
const haveJinja = spawnSync('python3', ['-c', 'import jinja2'], { encoding: 'utf8' }).status === 0;

describe('humidity rounding: the target HA receives always lies within the bounds it was given', {
  skip: haveJinja ? false : 'python3 jinja2 not found',
}, () => {
  test('limits 30.5..80.5 → bounds 31..80; setpoints rendered to a whole percent HA accepts', () => {
    const cmp = cmps(humidityLoop('').replace('min: 30, max: 80', 'min: 30.5, max: 80.5'))[
      'homeostat_pi-1_air_humidifier'
    ];
    assert.deepEqual([cmp?.min_hum, cmp?.max_hum], [31, 80]);
    const template = String(cmp?.hum_state_tpl);
    const table: [setpoint: unknown, shown: string][] = [
      [30.5, '31'], // HA alone: round(30.5) = 30 < 31, refused and stale
      [45.4, '45'],
      [45.6, '46'],
      [80.5, '80'],
      [null, 'None'],
    ];
    const script =
      'import json,sys,jinja2\nt=jinja2.Environment().from_string(sys.argv[1])\n' +
      'print(json.dumps([t.render(value_json={"setpoint": s}) for s in json.load(sys.stdin)]))';
    const result = spawnSync('python3', ['-c', script, template], {
      input: JSON.stringify(table.map(([s]) => s)),
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    const rendered = JSON.parse(result.stdout) as string[];
    table.forEach(([setpoint, shown], i) => {
      assert.equal(rendered[i], shown, `setpoint ${setpoint}`);
    });
    assert.equal(template, STATE_TEMPLATES.targetHumidity(31, 80));
  });
});

describe('presets, profiles and several sensors', () => {
  const all = cmps(scheduledLoop);
  const id = (key: string) => `homeostat_pi-1_room_${key}`;

  test('the climate offers the presets, in config order, on <loop>/preset/set, never "none"', () => {
    const climate = all[id('climate')];
    assert.deepEqual(climate?.pr_modes, ['comfort', 'eco']);
    assert.equal(climate?.pr_mode_cmd_t, 'homeostat/pi-1/room/preset/set');
    assert.equal(climate?.pr_mode_stat_t, 'homeostat/pi-1/room/state');
    assert.equal(climate?.pr_mode_val_tpl, STATE_TEMPLATES.preset);
  });

  test('a preset called "none" in the config object is still never offered (HA refuses such a list)', () => {
    const base = config(scheduledLoop);
    const room = base.loops.room!;
    const withNone = {
      ...base,
      loops: { room: { ...room, presets: { none: { setpoint: 18 }, eco: { setpoint: 17 } } } },
    } as Config;
    const climate = discoveryPayload(withNone, {
      prefix: 'homeassistant',
      baseTopic: 'homeostat',
      version: '1',
    }).payload.cmps[id('climate')];
    assert.deepEqual(climate?.pr_modes, ['eco']);
  });

  test('a loop with presets, a schedule or profiles: the schedule part as the main entity’s attributes', () => {
    const climate = all[id('climate')];
    assert.equal(climate?.json_attr_t, 'homeostat/pi-1/room/state');
    assert.equal(climate?.json_attr_tpl, STATE_TEMPLATES.scheduleAttributes);
    const weeklyOnly = cmps(
      temperatureLoop(', schedule: { weekly: [{ days: [mon], at: "06:00", setpoint: 21 }] }'),
    );
    assert.equal(weeklyOnly[id('climate')]?.json_attr_tpl, STATE_TEMPLATES.scheduleAttributes);
    const humidifier = cmps(scheduledHumidity)['homeostat_pi-1_air_humidifier'];
    assert.equal(humidifier?.json_attr_tpl, STATE_TEMPLATES.scheduleAttributes);
    assert.equal(cmps(temperatureLoop(''))[id('climate')]?.json_attr_t, undefined, 'none without');
  });

  test('a loop without presets or profiles gets no preset keys and no profile entities', () => {
    const plain = cmps(temperatureLoop(''));
    const climate = plain[id('climate')];
    for (const key of ['pr_modes', 'pr_mode_cmd_t', 'pr_mode_stat_t', 'pr_mode_val_tpl']) {
      assert.equal(climate?.[key], undefined, key);
    }
    const profileKeys = Object.keys(plain).filter((key) => key.includes('profile'));
    assert.deepEqual(profileKeys, []);
    assert.equal(plain[id('temperature')]?.json_attr_t, undefined);
  });

  test('profiles: a select that starts one, buttons that pause, resume and stop, a status sensor', () => {
    const select = all[id('profile')];
    assert.deepEqual(
      [select?.p, select?.cmd_t, select?.cmd_tpl, select?.ops],
      ['select', 'homeostat/pi-1/room/profile/set', 'start {{ value }}', ['ale', 'lager']],
    );
    const presses = ['pause', 'resume', 'stop'].map((action) => {
      const button = all[id(`profile_${action}`)];
      return [button?.p, button?.cmd_t, button?.pl_prs, button?.ret];
    });
    assert.deepEqual(presses, [
      ['button', 'homeostat/pi-1/room/profile/set', 'pause', false],
      ['button', 'homeostat/pi-1/room/profile/set', 'resume', false],
      ['button', 'homeostat/pi-1/room/profile/set', 'stop', false],
    ]);
    const status = all[id('profile_status')];
    assert.deepEqual(
      [status?.p, status?.val_tpl, status?.json_attr_t, status?.json_attr_tpl],
      [
        'sensor',
        STATE_TEMPLATES.profileState,
        'homeostat/pi-1/room/state',
        STATE_TEMPLATES.profileAttributes,
      ],
    );
  });

  test('several sensors: the measured-value sensor carries the sensor set as attributes', () => {
    const sensor = all[id('temperature')];
    assert.equal(sensor?.json_attr_t, 'homeostat/pi-1/room/state');
    assert.equal(sensor?.json_attr_tpl, STATE_TEMPLATES.sensorsAttributes);
  });

  test('a humidity loop (no climate) still gets the profile entities, and no preset keys anywhere', () => {
    const humidity = cmps(scheduledHumidity);
    assert.ok(humidity['homeostat_pi-1_air_profile']);
    for (const component of Object.values(humidity)) assert.equal(component.pr_modes, undefined);
  });
});

describe('preset, profile and sensor-set templates rendered by real Jinja2', {
  skip: haveJinja ? false : 'python3 jinja2 not found',
}, () => {
  const render = (template: string, states: unknown[]): string[] => {
    const script =
      'import json,sys,jinja2\nt=jinja2.Environment().from_string(sys.argv[1])\n' +
      'print(json.dumps([t.render(value_json=s) for s in json.load(sys.stdin)]))';
    const result = spawnSync('python3', ['-c', script, template], {
      input: JSON.stringify(states),
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    return JSON.parse(result.stdout) as string[];
  };
  const profile = {
    name: 'ale',
    state: 'paused',
    stepIndex: 1,
    stepCount: 4,
    stepKind: 'ramp',
    stepRemainingS: 60,
    totalRemainingS: 600,
  };
  const states = [
    { schedule: { source: 'preset', preset: 'eco', next: [] } },
    { schedule: { source: 'manual', preset: null, next: [] } },
    { schedule: { source: 'profile', preset: null, profile, next: [] } },
    {},
    { schedule: 'garbage' },
  ];

  test('schedule attributes: the schedule part, else {}', () => {
    assert.deepEqual(
      render(STATE_TEMPLATES.scheduleAttributes, states).map((text) => JSON.parse(text)),
      [states[0]!.schedule, states[1]!.schedule, states[2]!.schedule, {}, {}],
    );
  });

  test('preset_mode: the preset in force, else none', () => {
    assert.deepEqual(render(STATE_TEMPLATES.preset, states), ['eco', 'none', 'none', 'none', 'none']);
  });

  test('profile status: its state, else idle; attributes: the progress, else {}', () => {
    assert.deepEqual(render(STATE_TEMPLATES.profileState, states), [
      'idle',
      'idle',
      'paused',
      'idle',
      'idle',
    ]);
    const attributes = render(STATE_TEMPLATES.profileAttributes, states).map((a) => JSON.parse(a));
    assert.deepEqual(attributes, [{}, {}, profile, {}, {}]);
  });

  test('profile select: the started profile, else None (HA: no option)', () => {
    assert.deepEqual(render(STATE_TEMPLATES.profileName, states), ['None', 'None', 'ale', 'None', 'None']);
  });

  test('sensor set attributes: the status part, else {}', () => {
    const sensors = { combine: 'median', used: ['temp'], dropped: [], summary: 'temp' };
    const rendered = render(STATE_TEMPLATES.sensorsAttributes, [{ sensors }, {}]).map((a) => JSON.parse(a));
    assert.deepEqual(rendered, [sensors, {}]);
  });
});
