import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { loadConfigFile } from '../../src/config/load.js';
import {
  allowedModes,
  type Config,
  configSchema,
  defaultMode,
  type LoopConfig,
  mqttOf,
  STORAGE_DEFAULTS,
} from '../../src/config/schema.js';
import { judgeReading } from '../../src/core/sensor-health.js';
import type { Mode, Quantity } from '../../src/core/types.js';
import { minimalSimConfigText } from '../support/config.js';

/** Parses a YAML config that must be valid. */
function valid(yaml: string): Config {
  const result = configSchema.safeParse(parse(yaml));
  assert.ok(result.success, result.success ? '' : JSON.stringify(result.error.issues));
  return result.data;
}

/** Minimal valid YAML (support's one simulated loop); `extra` is appended verbatim (more loops, sensors…). */
const minimal = (loopExtra = '', extra = '') => minimalSimConfigText({ loopExtra, extra });

describe('config/demo.yaml', () => {
  test('validates', () => {
    const result = loadConfigFile('config/demo.yaml');
    assert.deepEqual(result.ok ? [] : result.errors, []);
  });

  test('starts with the yaml-language-server modeline, so editors find the schema', () => {
    const firstLine = readFileSync('config/demo.yaml', 'utf8').split('\n')[0];
    assert.equal(firstLine, '# yaml-language-server: $schema=./homeostat.schema.json');
  });

  test('has the two demo loops: a heated room and a heated-and-cooled fermenter', () => {
    const result = loadConfigFile('config/demo.yaml');
    assert.ok(result.ok);
    const { room, fermenter } = result.config.loops;
    assert.equal(room?.mode, 'heat');
    assert.equal(fermenter?.mode, 'heat_cool');
    assert.equal(fermenter?.raise, 'chamber_heater');
    assert.equal(fermenter?.lower, 'chamber_cooler');
  });
});

describe('defaults', () => {
  const config = valid(minimal());
  const room = config.loops.room!;

  // [what, actual, expected]
  const cases: [string, unknown, unknown][] = [
    ['node.name is the node id', config.node.name, 'pi'],
    ['mqtt stays absent when not configured', config.mqtt, undefined],
    ['storage.memoryFlushS', config.storage.memoryFlushS, 600],
    ['simulation.seed', config.simulation.seed, 1],
    ['plant kind', config.simulation.plants.p?.kind, 'thermal'],
    ['plant initial is its ambient', config.simulation.plants.p?.initial, 10],
    [
      'plant deadTimeS, noise, quantization',
      [0, 0, 0],
      ['deadTimeS', 'noise', 'quantization'].map((k) => config.simulation.plants.p?.[k as 'deadTimeS']),
    ],
    ['plant disturbances', config.simulation.plants.p?.disturbances, []],
    ['sensor periodS', config.sensors.t?.periodS, 10],
    ['sensor staleAfterS is 3 × periodS', config.sensors.t?.staleAfterS, 30],
    [
      'relay windowS, modulation, band, minOnS, minOffS, safeState',
      config.actuators.heater,
      {
        kind: 'simulated_relay',
        plant: 'p',
        gain: 20,
        windowS: 600,
        modulation: 'band',
        // Neither modulation nor windowS written: a tuning's suggested modulation may replace it.
        modulationDefaulted: true,
        band: 0.25,
        minOnS: 0,
        minOffS: 0,
        safeState: 'off',
      },
    ],
    ['loop name is the loop id', room.name, 'room'],
    ['loop quantity', room.quantity, 'temperature'],
    ['loop unit', room.unit, '°C'],
    ['loop mode with only raise', room.mode, 'heat'],
    ['loop step', room.step, 0.5],
    ["loop staleAfterS is the sensor's", room.staleAfterS, 30],
    ['loop plausible range', room.plausible, { min: -55, max: 125 }],
    ['loop deadband', room.deadband, 0],
    ['loop changeoverS', room.changeoverS, 300],
    [
      'pid tiS, tdS, derivativeFilterS, setpointWeight',
      room.controller,
      {
        type: 'pid',
        kp: 0.2,
        tiS: 0,
        tdS: 0,
        derivativeFilterS: 0,
        setpointWeight: 1,
      },
    ],
  ];
  for (const [what, actual, expected] of cases) {
    test(what, () => assert.deepEqual(actual, expected));
  }

  test('an empty mqtt block gets the local broker, base topic and discovery defaults', () => {
    const c = valid(minimal('', 'mqtt: {}'));
    assert.deepEqual(c.mqtt, {
      url: 'mqtt://127.0.0.1:1883',
      baseTopic: 'homeostat',
      clientId: 'homeostat-pi',
      protocolVersion: 5,
      heartbeatS: 60,
      discovery: { enabled: true, prefix: 'homeassistant' },
    });
  });

  test('no mqtt block: no MQTT (config.mqtt stays absent); mqttOf gives the block defaults for --mqtt-url', () => {
    const c = valid(minimal());
    assert.equal(c.mqtt, undefined);
    assert.deepEqual(mqttOf(c), valid(minimal('', 'mqtt: {}')).mqtt);
    const written = valid(minimal('', 'mqtt: { baseTopic: home, clientId: pi-1 }'));
    assert.equal(mqttOf(written), written.mqtt);
    assert.deepEqual([written.mqtt?.baseTopic, written.mqtt?.clientId], ['home', 'pi-1']);
  });

  test('gpio and storage blocks are always resolved, written or not', () => {
    const c = valid(minimal());
    assert.deepEqual(c.gpio, { sysfsRoot: '/sys' });
    assert.deepEqual(c.storage, STORAGE_DEFAULTS);
    assert.deepEqual(c.storage, {
      memoryFlushS: 600,
      rawRetentionS: 604_800,
      downsampleS: 300,
      downsampledRetentionS: 31_536_000,
      eventRetentionS: 7_776_000,
    });
  });

  test('a sensor staleAfterS is inherited by its loops', () => {
    const c = valid(
      minimal().replace('{ kind: simulated, plant: p }', '{ kind: simulated, plant: p, staleAfterS: 45 }'),
    );
    assert.equal(c.loops.room?.staleAfterS, 45);
  });

  test('derivativeFilterS defaults to tdS (the core default)', () => {
    const c = valid(minimal().replace('{ type: pid, kp: 0.2 }', '{ type: pid, kp: 0.2, tdS: 40 }'));
    assert.equal(c.loops.room?.controller.type === 'pid' && c.loops.room.controller.derivativeFilterS, 40);
  });

  test('hysteresis tolerances default to 0.3', () => {
    const c = valid(minimal().replace('{ type: pid, kp: 0.2 }', '{ type: hysteresis }'));
    assert.deepEqual(c.loops.room?.controller, { type: 'hysteresis', coldTolerance: 0.3, hotTolerance: 0.3 });
  });

  test('a humidity loop gets %, step 1, plausible 0..100 and humidify', () => {
    const c = valid(minimal('    quantity: humidity'));
    const loop = c.loops.room!;
    assert.deepEqual(
      [loop.unit, loop.step, loop.plausible, loop.mode],
      ['%', 1, { min: 0, max: 100 }, 'humidify'],
    );
  });

  test('explicit values win over defaults', () => {
    const c = valid(
      minimal('    name: Living room\n    unit: °F\n    step: 0.1\n    mode: "off"\n    staleAfterS: 99'),
    );
    const loop = c.loops.room!;
    assert.deepEqual(
      [loop.name, loop.unit, loop.step, loop.mode, loop.staleAfterS],
      ['Living room', '°F', 0.1, 'off', 99],
    );
  });
});

describe("a loop's unit: what Home Assistant can show", () => {
  const errorsOf = (loopExtra: string) => {
    const result = configSchema.safeParse(parse(minimal(loopExtra)));
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };
  /** The minimal loop in °F: setpoint and limits.max replaced (limits.min 40). */
  const fahrenheit = (setpoint: number, max: number, loopExtra = '') =>
    minimal(`    unit: °F\n${loopExtra}`)
      .replace('setpoint: 20', `setpoint: ${setpoint}`)
      .replace('limits: { min: 5, max: 30 }', `limits: { min: 40, max: ${max} }`);
  const cases: Array<[loopExtra: string, error: string | undefined]> = [
    ['    unit: °C', undefined],
    ['    unit: °F', undefined],
    [
      '    unit: K',
      `loops.room.unit: "K" is not a temperature unit homeostat can show in Home Assistant's climate entity (°C or °F); for kelvin or another scale use quantity: generic with unit: K`,
    ],
    [
      '    unit: C',
      `loops.room.unit: "C" is not a temperature unit homeostat can show in Home Assistant's climate entity (°C or °F); for kelvin or another scale use quantity: generic with unit: C`,
    ],
    ['    quantity: generic\n    unit: K', undefined],
    ['    quantity: humidity\n    unit: "%"', undefined],
    [
      '    quantity: humidity\n    unit: "%RH"',
      "loops.room.unit: a humidity loop's unit is % (relative humidity); for another measure use quantity: generic",
    ],
    [
      '    quantity: humidity\n    unit: g/m³',
      "loops.room.unit: a humidity loop's unit is % (relative humidity); for another measure use quantity: generic",
    ],
  ];
  for (const [loopExtra, error] of cases) {
    test(`${loopExtra.trim().replace('\n   ', ',')} → ${error ?? 'accepted'}`, () => {
      assert.deepEqual(errorsOf(loopExtra), error === undefined ? [] : [error]);
    });
  }

  test('a °F loop gets a plausible range in °F (-67..257): 150 °F is plausible, 300 °F is not', () => {
    const loop = valid(fahrenheit(150, 212)).loops.room!;
    assert.deepEqual(loop.plausible, { min: -67, max: 257 });
    const limits = {
      staleAfterMs: 60_000,
      plausibleMin: loop.plausible.min,
      plausibleMax: loop.plausible.max,
    };
    assert.equal(judgeReading({ value: 150, atMs: 0 }, 0, limits).ok, true);
    assert.deepEqual(judgeReading({ value: 300, atMs: 0 }, 0, limits), {
      ok: false,
      reason: 'Implausible',
      message: 'reading 300 outside plausible range -67..257',
    });
  });

  test('a °C loop keeps -55..125, and a °F cut-off is checked against the °F range', () => {
    assert.deepEqual(valid(minimal()).loops.room!.plausible, { min: -55, max: 125 });
    // 200 °F is above the °C default's 125 but inside °F's 257: accepted.
    valid(fahrenheit(150, 180, '    cutoff: { max: 200 }'));
  });
});

describe('relay modulation', () => {
  const relayWith = (extra: string, controller = '{ type: pid, kp: 0.2 }') =>
    minimal()
      .replace(
        '{ kind: simulated_relay, plant: p, gain: 20 }',
        `{ kind: simulated_relay, plant: p, gain: 20, ${extra} }`,
      )
      .replace('{ type: pid, kp: 0.2 }', controller);
  // [relay keys, controller] that are valid (the errors are in load.test.ts, as printed)
  const cases: [string, string][] = [
    ['modulation: band', '{ type: pid, kp: 0.2 }'],
    ['modulation: band, bandC: 0.5', '{ type: pid, kp: 0.99 }'],
    ['modulation: window, bandC: 5', '{ type: hysteresis }'],
    ['modulation: band, band: 0.5', '{ type: pid, kp: 0.99 }'],
    ['modulation: window, band: 5', '{ type: hysteresis }'],
    ['modulation: window', '{ type: pid, kp: 4 }'],
  ];
  for (const [extra, controller] of cases) {
    test(`${extra} with controller ${controller} is valid`, () => {
      valid(relayWith(extra, controller));
    });
  }

  test('band keeps the configured bandC; band is the default', () => {
    assert.deepEqual(
      [
        valid(relayWith('modulation: band, bandC: 0.4')).actuators.heater,
        valid(relayWith('modulation: band, band: 0.4')).actuators.heater,
        valid(minimal()).actuators.heater,
      ].map((a) => a?.kind === 'simulated_relay' && [a.modulation, a.band, 'bandC' in a]),
      [
        ['band', 0.4, false],
        ['band', 0.4, false],
        ['band', 0.25, false],
      ],
    );
  });
});

describe('allowedModes and defaultMode', () => {
  // quantity, raise?, lower? → allowed modes (the last one is the default).
  const cases: [Quantity, boolean, boolean, Mode[]][] = [
    ['temperature', true, false, ['off', 'heat']],
    ['temperature', false, true, ['off', 'cool']],
    ['temperature', true, true, ['off', 'heat', 'cool', 'heat_cool']],
    ['humidity', true, false, ['off', 'humidify']],
    ['humidity', false, true, ['off', 'dehumidify']],
    ['humidity', true, true, ['off', 'humidify', 'dehumidify', 'auto']],
    ['generic', true, false, ['off', 'heat']],
    ['generic', false, true, ['off', 'cool']],
    ['generic', true, true, ['off', 'heat', 'cool', 'heat_cool']],
  ];
  for (const [quantity, raise, lower, expected] of cases) {
    const loop: Pick<LoopConfig, 'quantity' | 'raise' | 'lower'> = {
      quantity,
      raise: raise ? 'up' : undefined,
      lower: lower ? 'down' : undefined,
    };
    test(`${quantity}${raise ? ' +raise' : ''}${lower ? ' +lower' : ''} → ${expected.join(', ')}`, () => {
      assert.deepEqual(allowedModes(loop), expected);
      assert.equal(defaultMode(loop), expected.at(-1));
    });
  }
});
