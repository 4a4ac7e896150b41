/**
 * On/off out of what contact, motion and leak sensors publish (drivers/mqtt/binary-payload.ts),
 * every family's exact payloads as their docs and sources give them (cited there): 1 is open,
 * occupied, wet or the input on, as a gpio_input reads 1 for an open window.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type BinaryFormat,
  binaryPreset,
  DEFAULT_OFF,
  DEFAULT_ON,
  parseBinaryPayload,
} from '../../../src/drivers/mqtt/binary-payload.js';

/** What a payload reads through one of a preset's sources. */
function readThrough(format: BinaryFormat, payload: string): 0 | 1 | 'ignored' | 'garbage' {
  const parsed = parseBinaryPayload(Buffer.from(payload), format);
  if (parsed.ok) return parsed.value;
  return parsed.missing ? 'ignored' : 'garbage';
}

describe('binaryPreset: each family, the topics it reads and what its payloads read', () => {
  const aqara = binaryPreset('zigbee2mqtt', 'zigbee2mqtt/living_window', 'contact');
  const motion = binaryPreset('zigbee2mqtt', 'zigbee2mqtt/hall_motion', 'occupancy');
  const leak = binaryPreset('zigbee2mqtt', 'zigbee2mqtt/boiler_leak', 'water_leak');
  const tasmota = binaryPreset('tasmota', 'sonoff', 1);
  const shelly = binaryPreset('shelly', 'shellyplusi4-a8032ab12345', 0);
  const esphome = binaryPreset('esphome', 'kitchen', 'window');

  test('topics', () => {
    assert.deepEqual(aqara.sources, [{ topic: 'zigbee2mqtt/living_window', field: 'contact' }]);
    assert.deepEqual(tasmota.sources, [
      { topic: 'stat/sonoff/RESULT', field: 'Switch1.Action' },
      { topic: 'tele/sonoff/SENSOR', field: 'Switch1' },
    ]);
    assert.deepEqual(binaryPreset('tasmota', 'sonoff', 3).sources[1], {
      topic: 'tele/sonoff/SENSOR',
      field: 'Switch3',
    });
    assert.deepEqual(shelly.sources, [{ topic: 'shellyplusi4-a8032ab12345/status/input:0', field: 'state' }]);
    assert.deepEqual(esphome.sources, [{ topic: 'kitchen/binary_sensor/window/state' }]);
  });

  const table: [
    family: string,
    preset: ReturnType<typeof binaryPreset>,
    source: number,
    payload: string,
    reads: ReturnType<typeof readThrough>,
  ][] = [
    // Zigbee2MQTT Aqara MCCGQ11LM: contact true = closed, false = open.
    [
      'Aqara closed',
      aqara,
      0,
      '{"battery":97,"contact":true,"linkquality":72,"temperature":24,"voltage":2995}',
      0,
    ],
    [
      'Aqara open',
      aqara,
      0,
      '{"battery":97,"contact":false,"linkquality":72,"temperature":24,"voltage":2995}',
      1,
    ],
    ['Aqara, a message without contact (a bridge echo)', aqara, 0, '{"linkquality":72}', 'ignored'],
    ['Aqara, contact null', aqara, 0, '{"contact":null,"linkquality":72}', 'garbage'],
    ['Aqara, contact "banana"', aqara, 0, '{"contact":"banana"}', 'garbage'],
    ['Aqara, not JSON', aqara, 0, 'banana', 'garbage'],
    // Zigbee2MQTT motion and leak: true = tripped.
    ['motion: occupied', motion, 0, '{"battery":100,"illuminance":5,"occupancy":true}', 1],
    ['motion: clear', motion, 0, '{"battery":100,"illuminance":5,"occupancy":false}', 0],
    ['leak: wet', leak, 0, '{"battery":100,"water_leak":true}', 1],
    ['leak: dry', leak, 0, '{"battery":100,"water_leak":false}', 0],
    // Tasmota: RESULT at each change (SetOption114 1), SENSOR at each change or TelePeriod.
    ['Tasmota RESULT on', tasmota, 0, '{"Switch1":{"Action":"ON"}}', 1],
    ['Tasmota RESULT off', tasmota, 0, '{"Switch1":{"Action":"OFF"}}', 0],
    ['Tasmota RESULT of a command (POWER): not about the switch', tasmota, 0, '{"POWER":"ON"}', 'ignored'],
    ['Tasmota SENSOR on', tasmota, 1, '{"Time":"2026-12-02T07:41:28","Switch1":"ON"}', 1],
    ['Tasmota SENSOR off', tasmota, 1, '{"Time":"2026-12-02T07:41:28","Switch1":"OFF"}', 0],
    [
      'Tasmota SENSOR of a thermometer only',
      tasmota,
      1,
      '{"Time":"2026-12-02T07:41:28","DS18B20":{"Temperature":21.5}}',
      'ignored',
    ],
    ['Tasmota button TOGGLE', tasmota, 0, '{"Switch1":{"Action":"TOGGLE"}}', 'garbage'],
    // Shelly Gen2/Gen3 Input component status.
    ['Shelly input on', shelly, 0, '{"id":0,"state":true}', 1],
    ['Shelly input off', shelly, 0, '{"id":0,"state":false}', 0],
    ['Shelly input of type button (stateless)', shelly, 0, '{"id":0,"state":null}', 'garbage'],
    // ESPHome binary_sensor state topic.
    ['ESPHome ON', esphome, 0, 'ON', 1],
    ['ESPHome OFF', esphome, 0, 'OFF', 0],
    ['ESPHome empty', esphome, 0, '', 'garbage'],
  ];
  for (const [name, preset, source, payload, reads] of table) {
    test(`${name}: ${payload} → ${reads}`, () => {
      const format = { field: preset.sources[source]!.field, on: preset.on, off: preset.off };
      assert.equal(readThrough(format, payload), reads);
    });
  }
});

describe('parseBinaryPayload with the default words', () => {
  const plain: BinaryFormat = { on: DEFAULT_ON, off: DEFAULT_OFF };
  const table: [string, ReturnType<typeof readThrough>][] = [
    ['ON', 1],
    ['on', 1],
    [' On \n', 1],
    ['OFF', 0],
    ['open', 1],
    ['OPEN', 1],
    ['closed', 0],
    ['true', 1],
    ['false', 0],
    ['TRUE', 1],
    ['1', 1],
    ['0', 0],
    ['"ON"', 'garbage'],
    ['2', 'garbage'],
    ['banana', 'garbage'],
    ['', 'garbage'],
    ['nan', 'garbage'],
  ];
  for (const [payload, reads] of table) {
    test(`plain ${JSON.stringify(payload)} → ${reads}`, () =>
      assert.equal(readThrough(plain, payload), reads));
  }

  const json: BinaryFormat = { field: 'state', on: DEFAULT_ON, off: DEFAULT_OFF };
  const fieldTable: [string, ReturnType<typeof readThrough>][] = [
    ['{"state":true}', 1],
    ['{"state":false}', 0],
    ['{"state":"ON"}', 1],
    ['{"state":"closed"}', 0],
    ['{"state":1}', 1],
    ['{"state":0}', 0],
    ['{"state":0.5}', 'garbage'],
    ['{"state":{"on":true}}', 'garbage'],
    ['{"other":true}', 'ignored'],
  ];
  for (const [payload, reads] of fieldTable) {
    test(`field state of ${payload} → ${reads}`, () => assert.equal(readThrough(json, payload), reads));
  }
});

describe('parseBinaryPayload: the reason a garbage payload gives', () => {
  test('plain payload: what was sent, and the words it is not', () => {
    const parsed = parseBinaryPayload(Buffer.from('banana'), { on: ['open'], off: ['closed'] });
    assert.deepEqual(parsed, {
      ok: false,
      missing: false,
      reason: 'payload is "banana", neither on (open) nor off (closed)',
    });
  });
  test('a field: its name and value as JSON', () => {
    const parsed = parseBinaryPayload(Buffer.from('{"contact":null}'), {
      field: 'contact',
      on: [false],
      off: [true],
    });
    assert.equal(!parsed.ok && parsed.reason, 'field contact is null, neither on (false) nor off (true)');
  });
  test('an oversized payload is refused unread', () => {
    const parsed = parseBinaryPayload(Buffer.alloc(20_000, 0x20), { on: DEFAULT_ON, off: DEFAULT_OFF });
    assert.equal(!parsed.ok && parsed.reason, 'payload of 20000 bytes is too large (limit 16384)');
  });
  test('a long payload is cut in the reason', () => {
    const parsed = parseBinaryPayload(Buffer.from('x'.repeat(100)), { on: ['ON'], off: ['OFF'] });
    assert.equal(
      !parsed.ok && parsed.reason,
      `payload is "${'x'.repeat(40)}…", neither on (ON) nor off (OFF)`,
    );
  });
});

test('binaryPreset refuses an input that does not fit the family', () => {
  assert.throws(() => binaryPreset('tasmota', 'sonoff', 0), /whole number >= 1/);
  assert.throws(() => binaryPreset('shelly', 'shelly1', 'window'), /whole number >= 0/);
});
