import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  levelCommandPayload,
  MAX_PAYLOAD_BYTES,
  type Parsed,
  parseNumberPayload,
  parseSwitchState,
  plainTopicProblem,
} from '../../../src/drivers/mqtt/payload.js';
import {
  DEAD_MAN_MAX_S,
  deadManFor,
  switchPreset,
  tasmotaPulseTimeValue,
  tasmotaRelayIndex,
} from '../../../src/drivers/mqtt/switch-presets.js';

/** What a table row expects: a value, "missing" (ignored), or a rejection whose reason matches. */
type Expect<T> = T | 'missing' | RegExp;

function check<T>(parsed: Parsed<T>, expected: Expect<T>): void {
  if (expected === 'missing') {
    assert.deepEqual(parsed.ok ? parsed : { ok: false, missing: parsed.missing }, {
      ok: false,
      missing: true,
    });
  } else if (expected instanceof RegExp) {
    assert.equal(parsed.ok, false, `expected a rejection, got ${JSON.stringify(parsed)}`);
    if (!parsed.ok) {
      assert.equal(parsed.missing, false);
      assert.match(parsed.reason, expected);
    }
  } else {
    assert.deepEqual(parsed, { ok: true, value: expected });
  }
}

const TASMOTA_SENSOR = JSON.stringify({
  Time: '2026-01-01T12:00:00',
  AM2301: { Temperature: 21.4, Humidity: 48.2, DewPoint: 10 },
  TempUnit: 'C',
});
const Z2M_SENSOR = JSON.stringify({ battery: 97, humidity: 51.3, linkquality: 120, temperature: 19.87 });
const SHELLY_PLUS = JSON.stringify({ id: 0, tC: 22.5, tF: 72.5 });

describe('parseNumberPayload', () => {
  // [payload, field, expected]
  const cases: [string | Buffer, string | undefined, Expect<number>][] = [
    // plain numbers
    ['21.5', undefined, 21.5],
    [' 21.5\n', undefined, 21.5],
    ['-3', undefined, -3],
    ['+0.5', undefined, 0.5],
    ['.5', undefined, 0.5],
    ['2.15e1', undefined, 21.5],
    ['0', undefined, 0],
    // JSON with a field: Tasmota (nested), Zigbee2MQTT, Shelly Plus, arrays
    [TASMOTA_SENSOR, 'AM2301.Temperature', 21.4],
    [TASMOTA_SENSOR, 'AM2301.Humidity', 48.2],
    [Z2M_SENSOR, 'temperature', 19.87],
    [SHELLY_PLUS, 'tC', 22.5],
    ['{"sensors":[{"v":1},{"v":2.5}]}', 'sensors.1.v', 2.5],
    ['{"t":"21.5"}', 't', 21.5],
    // the field is not there: not about this value, ignored
    [TASMOTA_SENSOR, 'DS18B20.Temperature', 'missing'],
    [TASMOTA_SENSOR, 'AM2301.Temperature.x', 'missing'],
    ['{"sensors":[{"v":1}]}', 'sensors.3.v', 'missing'],
    ['{"a":1}', 'constructor', 'missing'],
    ['{"a":1}', '__proto__', 'missing'],
    ['21.5', 'temperature', 'missing'],
    // garbage
    ['', undefined, /not a finite number/],
    ['abc', undefined, /"abc" is not a finite number/],
    ['21,5', undefined, /not a finite number/],
    ['0x10', undefined, /not a finite number/],
    ['true', undefined, /not a finite number/],
    ['{"temperature":21}', undefined, /not a finite number/],
    ['not json', 'temperature', /not JSON/],
    ['{"temperature":"warm"}', 'temperature', /field temperature is "warm", not a finite number/],
    ['{"temperature":null}', 'temperature', /is null, not a finite number/],
    ['{"temperature":true}', 'temperature', /not a finite number/],
    ['{"temperature":{"v":1}}', 'temperature', /not a finite number/],
    ['{"temperature":""}', 'temperature', /not a finite number/],
    // NaN and huge
    ['NaN', undefined, /not a finite number/],
    ['nan', undefined, /not a finite number/],
    ['Infinity', undefined, /not a finite number/],
    ['-Infinity', undefined, /not a finite number/],
    ['1e999', undefined, /not a finite number/],
    ['-1e400', undefined, /not a finite number/],
    ['{"temperature":1e999}', 'temperature', /field temperature is Infinity, not a finite number/],
    ['{"temperature":"NaN"}', 'temperature', /not a finite number/],
    [Buffer.alloc(MAX_PAYLOAD_BYTES + 1, '1'), undefined, /too large/],
    [`{"t":1,"pad":"${'x'.repeat(MAX_PAYLOAD_BYTES)}"}`, 't', /too large/],
  ];
  for (const [payload, field, expected] of cases) {
    const label = typeof payload === 'string' ? payload.slice(0, 50) : `<${payload.length} bytes>`;
    test(`${JSON.stringify(label)}${field ? ` field ${field}` : ''} → ${String(expected)}`, () => {
      const buffer = typeof payload === 'string' ? Buffer.from(payload) : payload;
      check(parseNumberPayload(buffer, field), expected);
    });
  }

  test('a long garbage payload is cut short in the reason', () => {
    const parsed = parseNumberPayload(Buffer.from('x'.repeat(500)));
    assert.ok(!parsed.ok && parsed.reason.length < 100, JSON.stringify(parsed));
  });
});

describe('parseSwitchState', () => {
  const tasmota = { stateOn: 'ON', stateOff: 'OFF' };
  const z2m = { stateOn: 'ON', stateOff: 'OFF', stateField: 'state' };
  const shelly = { stateOn: 'true', stateOff: 'false', stateField: 'output' };
  // [format, payload, expected]
  const cases: [string, typeof z2m | typeof tasmota, string, Expect<0 | 1>][] = [
    ['tasmota', tasmota, 'ON', 1],
    ['tasmota', tasmota, 'OFF', 0],
    ['tasmota', tasmota, ' on\n', 1],
    ['tasmota', tasmota, 'off', 0],
    ['tasmota', tasmota, 'TOGGLE', /"TOGGLE" is neither "ON" nor "OFF"/],
    ['tasmota', tasmota, '', /neither/],
    ['tasmota', tasmota, '{"POWER":"ON"}', /neither/],
    ['zigbee2mqtt', z2m, '{"state":"ON","linkquality":87,"power":1200}', 1],
    ['zigbee2mqtt', z2m, '{"state":"OFF"}', 0],
    ['zigbee2mqtt', z2m, '{"linkquality":87}', 'missing'],
    ['zigbee2mqtt', z2m, '{"state":null}', /not a state/],
    ['zigbee2mqtt', z2m, '{"state":{"x":1}}', /not a state/],
    ['zigbee2mqtt', z2m, '{"state":"BLINK"}', /neither/],
    ['zigbee2mqtt', z2m, 'ON', /not JSON/],
    ['shelly', shelly, '{"id":0,"output":true,"apower":0}', 1],
    ['shelly', shelly, '{"id":0,"output":false}', 0],
  ];
  for (const [name, format, payload, expected] of cases) {
    test(`${name}: ${JSON.stringify(payload)} → ${String(expected)}`, () => {
      check(parseSwitchState(Buffer.from(payload), format), expected);
    });
  }

  test('an oversized state payload is rejected', () => {
    check(parseSwitchState(Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 'O'), tasmota), /too large/);
  });
});

describe('switchPreset', () => {
  test('tasmota: cmnd/<device>/POWER ON/OFF, state on stat/<device>/POWER', () => {
    assert.deepEqual(switchPreset('tasmota', 'plug'), {
      commandTopic: 'cmnd/plug/POWER',
      stateTopic: 'stat/plug/POWER',
      payloadOn: 'ON',
      payloadOff: 'OFF',
      stateOn: 'ON',
      stateOff: 'OFF',
    });
  });

  test('zigbee2mqtt: <device>/set {"state":"ON"}, state field state of <device>', () => {
    assert.deepEqual(switchPreset('zigbee2mqtt', 'zigbee2mqtt/heater_plug'), {
      commandTopic: 'zigbee2mqtt/heater_plug/set',
      stateTopic: 'zigbee2mqtt/heater_plug',
      payloadOn: '{"state":"ON"}',
      payloadOff: '{"state":"OFF"}',
      stateOn: 'ON',
      stateOff: 'OFF',
      stateField: 'state',
    });
  });

  test('no preset ever commands a toggle', () => {
    for (const preset of ['tasmota', 'zigbee2mqtt'] as const) {
      const { payloadOn, payloadOff } = switchPreset(preset, 'x');
      assert.doesNotMatch(`${payloadOn} ${payloadOff}`, /toggle/i);
    }
  });
});

describe('levelCommandPayload', () => {
  const cases: [number, string | undefined, string][] = [
    [42, undefined, '42'],
    [0, undefined, '0'],
    [127, 'brightness', '{"brightness":127}'],
  ];
  for (const [value, field, expected] of cases) {
    test(`${value}${field ? ` as ${field}` : ''} → ${expected}`, () => {
      assert.equal(levelCommandPayload(value, field), expected);
    });
  }
});

describe('plainTopicProblem', () => {
  const cases: [string, RegExp | undefined][] = [
    ['tele/th1/SENSOR', undefined],
    ['zigbee2mqtt/living room/lamp', undefined],
    ['tele/+/SENSOR', /wildcards/],
    ['tele/#', /wildcards/],
    ['', /empty/],
    ['$SYS/broker/uptime', /broker topics/],
    ['a\u0000b', /NUL/],
  ];
  for (const [topic, expected] of cases) {
    test(`${JSON.stringify(topic)} → ${expected ?? 'fine'}`, () => {
      const problem = plainTopicProblem(topic);
      if (expected) assert.match(problem ?? '', expected);
      else assert.equal(problem, undefined);
    });
  }
});

describe("tasmotaPulseTimeValue: Tasmota's PulseTime encoding", () => {
  // 1–111: tenths of a second; 112–64900: seconds + 100.
  const cases: [number, number][] = [
    [0.1, 1],
    [1, 10],
    [11.1, 111],
    [12, 112],
    [360, 460],
    [600, 700],
    [64_800, 64_900],
  ];
  for (const [seconds, value] of cases) {
    test(`${seconds} s → PulseTime ${value}`, () => assert.equal(tasmotaPulseTimeValue(seconds), value));
  }
  for (const seconds of [0, 11.5, 64_801]) {
    test(`${seconds} s cannot be held → RangeError`, () =>
      assert.throws(() => tasmotaPulseTimeValue(seconds), /PulseTime holds 0\.1–11\.1 s or 12–64800 s/));
  }
});

describe('tasmotaRelayIndex: which PulseTime<n> times the relay of a command topic', () => {
  const cases: [string, number | undefined][] = [
    ['cmnd/plug/POWER', 1],
    ['cmnd/plug/POWER1', 1],
    ['cmnd/strip/POWER3', 3],
    ['cmnd/strip/power2', 2],
    ['cmnd/strip/POWER32', 32],
    ['cmnd/strip/POWER0', undefined], // all relays at once
    ['cmnd/strip/POWER33', undefined],
    ['cmnd/dim/Dimmer', undefined],
  ];
  for (const [topic, index] of cases) {
    test(`${topic} → ${index ?? 'none'}`, () => assert.equal(tasmotaRelayIndex(topic), index));
  }
});

describe("deadManFor: a preset's dead man's switch", () => {
  test('tasmota: PulseTime<n> on the command topic prefix, seconds + 100', () => {
    assert.deepEqual(deadManFor('tasmota', switchPreset('tasmota', 'plug'), 600), {
      ok: true,
      deadMan: { kind: 'tasmota-pulsetime', seconds: 600, topic: 'cmnd/plug/PulseTime1', payload: '700' },
    });
    const second = { ...switchPreset('tasmota', 'strip'), commandTopic: 'home/strip/cmnd/POWER2' };
    assert.deepEqual(deadManFor('tasmota', second, 400), {
      ok: true,
      deadMan: {
        kind: 'tasmota-pulsetime',
        seconds: 400,
        topic: 'home/strip/cmnd/PulseTime2',
        payload: '500',
      },
    });
  });

  test('tasmota: a command topic that is not POWER<n> has no PulseTime to set', () => {
    const built = deadManFor('tasmota', { commandTopic: 'cmnd/plug/Backlog', payloadOn: 'ON' }, 600);
    assert.equal(built.ok, false);
    assert.match(built.ok ? '' : built.problem, /command topic ending in \/POWER or \/POWER<n>/);
  });

  test('zigbee2mqtt: on_time (seconds) added to the ON payload', () => {
    assert.deepEqual(deadManFor('zigbee2mqtt', switchPreset('zigbee2mqtt', 'zigbee2mqtt/plug'), 600), {
      ok: true,
      deadMan: { kind: 'zigbee2mqtt-on-time', seconds: 600, payloadOn: '{"state":"ON","on_time":600}' },
    });
  });

  test('zigbee2mqtt: an ON payload that is not a JSON object cannot carry on_time', () => {
    const built = deadManFor('zigbee2mqtt', { commandTopic: 'z/plug/set', payloadOn: 'ON' }, 600);
    assert.match(built.ok ? '' : built.problem, /payloadOn to be a JSON object/);
  });

  test('the longest times the devices can hold: PulseTime 64900, ZCL on time 0.1 s × 65535, Shelly a day by choice, ESPHome none', () => {
    assert.deepEqual(DEAD_MAN_MAX_S, { tasmota: 64_800, zigbee2mqtt: 6_553, shelly: 86_400, esphome: 0 });
  });
});
