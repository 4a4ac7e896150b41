/**
 * Several sensors per loop in the config: `sensors` instead of `sensor`, `combine`,
 * `minHealthy`, `outlierLimit`; their defaults, refusals with paths, the loop's staleness, the
 * loop spec the daemon builds, and the plan hash (an unchanged one-sensor loop keeps its own).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loopSectionHash } from '../../src/config/plan.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';
import { combineReadings } from '../../src/core/sensor-set.js';
import { configErrors, minimalSimConfigText, validConfig } from '../support/config.js';

/** Three simulated probes on plant p (`t` stale after 30 s, `u` after 90 s, `v` after 600 s). */
const PROBES = `
sensors:
  t: { kind: simulated, plant: p, periodS: 10 }
  u: { kind: simulated, plant: p, periodS: 30 }
  v: { kind: simulated, plant: p, periodS: 60, staleAfterS: 600 }`;

/** The minimal config with the probes, and the loop's `sensor: t` replaced by `keys`. */
function withSensors(keys: string, loopExtra = ''): string {
  return minimalSimConfigText({ loopExtra })
    .replace(/sensors:\n {2}t: \{ kind: simulated, plant: p \}/, PROBES.trim())
    .replace('    sensor: t\n', `${keys}\n`);
}

describe('loops.<id>.sensors: accepted, with its defaults', () => {
  test('given sensors only, then combine is median, minHealthy 1, no outlier limit', () => {
    const config = validConfig(withSensors('    sensors: [t, u, v]'));
    assert.deepEqual(toLoopSpec(config, 'room').sensorSet, {
      sensors: ['t', 'u', 'v'],
      combine: 'median',
      minHealthy: 1,
      staleAfterMs: { t: 30_000, u: 90_000, v: 600_000 },
      unit: '°C',
    });
  });

  test('given every key, then the spec carries them', () => {
    const config = validConfig(
      withSensors('    sensors: [v, t]\n    combine: first\n    minHealthy: 2\n    outlierLimit: 1.5'),
    );
    assert.deepEqual(toLoopSpec(config, 'room').sensorSet, {
      sensors: ['v', 't'],
      combine: 'first',
      minHealthy: 2,
      outlierLimit: 1.5,
      staleAfterMs: { v: 600_000, t: 30_000 },
      unit: '°C',
    });
  });

  test("staleAfterS defaults to the largest of the sensors' (600 s), a loop's own wins", () => {
    assert.equal(validConfig(withSensors('    sensors: [t, u, v]')).loops.room!.staleAfterS, 600);
    assert.equal(validConfig(withSensors('    sensors: [t, u]')).loops.room!.staleAfterS, 90);
    const own = validConfig(withSensors('    sensors: [t, v]', '    staleAfterS: 45'));
    assert.equal(own.loops.room!.staleAfterS, 45);
    assert.equal(toLoopSpec(own, 'room').staleAfterMs, 45_000);
  });

  test("each sensor keeps its own staleness: a frozen t is dropped after 30 s, not the loop's 600 s", () => {
    const spec = toLoopSpec(validConfig(withSensors('    sensors: [t, v]\n    minHealthy: 2')), 'room');
    assert.equal(spec.staleAfterMs, 600_000, "the loop's: the largest");
    const nowMs = 1_000_000;
    const readings = { t: { value: 20, atMs: nowMs - 31_000 }, v: { value: 20, atMs: nowMs - 300_000 } };
    const result = combineReadings(spec.sensorSet!, readings, nowMs, spec);
    assert.equal(result.verdict.ok, false, 'minHealthy 2: the loop goes safe');
    assert.deepEqual(
      result.dropped.map((d) => [d.sensor, d.reason]),
      [['t', 'Stale']],
    );
  });

  test("a staleAfterS the file sets on the loop caps each sensor's (v's 600 s becomes 45 s)", () => {
    const spec = toLoopSpec(validConfig(withSensors('    sensors: [t, v]', '    staleAfterS: 45')), 'room');
    const nowMs = 1_000_000;
    const readings = { t: { value: 20, atMs: nowMs }, v: { value: 20, atMs: nowMs - 46_000 } };
    const result = combineReadings(spec.sensorSet!, readings, nowMs, spec);
    assert.deepEqual(
      result.dropped.map((d) => [d.sensor, d.message]),
      [['v', 'last reading is 46 s old (limit 45 s)']],
    );
  });

  test("the plausible default is the quantity's, as for one sensor", () => {
    const loop = validConfig(withSensors('    sensors: [t, u]')).loops.room!;
    assert.deepEqual(loop.plausible, { min: -55, max: 125 });
  });

  test('a loop with one sensor has no sensor set: its path through the core is unchanged', () => {
    assert.equal(toLoopSpec(validConfig(minimalSimConfigText()), 'room').sensorSet, undefined);
  });

  test('sensors: [a] is a set of one (allowed)', () => {
    assert.deepEqual(toLoopSpec(validConfig(withSensors('    sensors: [u]')), 'room').sensorSet?.sensors, [
      'u',
    ]);
  });
});

describe('loops.<id>.sensors: refused, with the path and why', () => {
  const cases: Array<[when: string, keys: string, error: string]> = [
    [
      'both sensor and sensors',
      '    sensor: t\n    sensors: [u, v]',
      'loops.room.sensors: give sensor (one id) or sensors (a list), not both',
    ],
    ['neither', '', 'loops.room.sensor: required: give sensor (one id) or sensors (a list)'],
    ['an unknown sensor', '    sensors: [t, nope]', 'loops.room.sensors[1]: unknown sensor "nope"'],
    ['an empty list', '    sensors: []', 'loops.room.sensors: at least one sensor is required'],
    [
      '17 sensors (at most 16)',
      `    sensors: [${Array.from({ length: 17 }, () => 't').join(', ')}]`,
      'loops.room.sensors: at most 16 sensors in one loop (17 listed)',
    ],
    [
      'a sensor listed twice',
      '    sensors: [t, u, t]',
      'loops.room.sensors[2]: sensor "t" is already listed at sensors.0 (a sensor counts once)',
    ],
    [
      'minHealthy above the number of sensors',
      '    sensors: [t, u]\n    minHealthy: 3',
      'loops.room.minHealthy: 3 is more than the 2 sensor(s) listed: the loop could never regulate',
    ],
    [
      'minHealthy 0',
      '    sensors: [t, u]\n    minHealthy: 0',
      'loops.room.minHealthy: must be a whole number, at least 1',
    ],
    [
      'minHealthy 1.5',
      '    sensors: [t, u]\n    minHealthy: 1.5',
      'loops.room.minHealthy: must be a whole number, at least 1',
    ],
    [
      'outlierLimit 0',
      '    sensors: [t, u, v]\n    outlierLimit: 0',
      'loops.room.outlierLimit: must be a number above 0 (loop unit)',
    ],
    [
      'an unknown combine',
      '    sensors: [t, u]\n    combine: average',
      'loops.room.combine: must be one of mean, median, min, max, first',
    ],
    [
      'combine with one sensor',
      '    sensor: t\n    combine: max',
      'loops.room.combine: only with sensors (a list): one sensor has nothing to combine',
    ],
    [
      'outlierLimit with one sensor',
      '    sensor: t\n    outlierLimit: 2',
      'loops.room.outlierLimit: only with sensors (a list): one sensor has nothing to combine',
    ],
  ];
  for (const [when, keys, error] of cases) {
    test(`given ${when}, then: ${error}`, () => {
      assert.ok(configErrors(withSensors(keys)).includes(error), configErrors(withSensors(keys)).join('\n'));
    });
  }

  test("a feedforward sensor that is one of the loop's sensors is refused", () => {
    const text = withSensors('    sensors: [t, u]').replace(
      '{ type: pid, kp: 0.2 }',
      '{ type: pid, kp: 0.2, model: { gain: 20, ambient: 10 }, feedforward: { sensor: u } }',
    );
    assert.ok(
      configErrors(text).includes(
        `loops.room.controller.feedforward.sensor: "u" is the loop's own sensor: the disturbance needs a sensor of its own`,
      ),
      configErrors(text).join('\n'),
    );
  });

  test("a sensor of the set reading another plant than the loop's actuator drives is refused", () => {
    const text = withSensors('    sensors: [t, w]')
      .replace(
        '    p: { ambient: 10, timeConstantS: 600 }',
        '    p: { ambient: 10, timeConstantS: 600 }\n    q: { ambient: 5, timeConstantS: 600 }',
      )
      .replace('  v: {', '  w: { kind: simulated, plant: q }\n  v: {');
    assert.ok(
      configErrors(text).includes(
        'loops.room.raise: actuator "heater" drives plant "p" but sensor "w" reads plant "q"',
      ),
      configErrors(text).join('\n'),
    );
  });
});

describe('plan: the loop section hash with several sensors', () => {
  test('a loop with one sensor keeps the hash the previous version stored (no generation bump)', () => {
    // loopSectionHash of minimalSimConfigText()'s room, computed by the code before sensor sets.
    assert.equal(
      loopSectionHash(validConfig(minimalSimConfigText()), 'room'),
      '2631918f0f559eeae24305ae2b4cada4b1d3f8ea56bf603889b341ad4c9f15c5',
    );
  });

  const hash = (text: string) => loopSectionHash(validConfig(text), 'room');
  const base = withSensors('    sensors: [t, u]');

  test("a change to the second sensor's section changes the loop's hash", () => {
    assert.notEqual(hash(base), hash(base.replace('periodS: 30 }', 'periodS: 20 }')));
  });

  test('the order of the sensors (the fallback order of first) changes it', () => {
    assert.notEqual(hash(base), hash(withSensors('    sensors: [u, t]')));
  });

  test('a sensor the loop does not use leaves it unchanged', () => {
    assert.equal(hash(base), hash(base.replace('staleAfterS: 600', 'staleAfterS: 700')));
  });

  test('sensors: [t] is another section than sensor: t (its defaults are a set’s)', () => {
    assert.notEqual(hash(withSensors('    sensors: [t]')), hash(withSensors('    sensor: t')));
  });
});

describe('a DS18B20 reports °C: a loop in another unit is refused (the unit is a label, nothing converts)', () => {
  /** The minimal config with a DS18B20 `probe` beside t; `keys` replace the loop's `sensor: t`. */
  function withProbe(keys: string, loopExtra = ''): string {
    return minimalSimConfigText({ loopExtra })
      .replace(
        '  t: { kind: simulated, plant: p }',
        '  t: { kind: simulated, plant: p }\n  probe: { kind: ds18b20 }',
      )
      .replace('    sensor: t\n', `${keys}\n`);
  }
  const fahrenheit = '    unit: °F\n    setpoint: 68\n    limits: { min: 40, max: 86 }';
  const inF = (keys: string) =>
    withProbe(keys, fahrenheit).replace('    setpoint: 20\n    limits: { min: 5, max: 30 }\n', '');

  const refused: Array<[when: string, text: string, error: string]> = [
    [
      'sensor: probe in a °F loop',
      inF('    sensor: probe'),
      'loops.room.sensor: sensor "probe" is a ds18b20, which reports °C, but the loop\'s unit is °F ' +
        '(a label: nothing converts): use unit: °C for this loop (setpoint and limits in °C)',
    ],
    [
      'a member of sensors in a °F loop',
      inF('    sensors: [t, probe]'),
      'loops.room.sensors[1]: sensor "probe" is a ds18b20, which reports °C, but the loop\'s unit is °F ' +
        '(a label: nothing converts): use unit: °C for this loop (setpoint and limits in °C)',
    ],
    [
      "the feedforward's disturbance sensor of a °F loop (the model's ambient is in the loop's unit)",
      inF('    sensor: t').replace(
        '{ type: pid, kp: 0.2 }',
        '{ type: pid, kp: 0.2, model: { gain: 20, ambient: 50 }, feedforward: { sensor: probe } }',
      ),
      'loops.room.controller.feedforward.sensor: disturbance sensor "probe" is a ds18b20, which reports °C, ' +
        "but the loop's unit is °F (a label: nothing converts): use unit: °C for this loop (setpoint and limits in °C)",
    ],
    [
      'a humidity loop',
      withProbe('    sensor: probe\n    quantity: humidity'),
      'loops.room.sensor: sensor "probe" is a ds18b20, which reports °C, but the loop\'s unit is % ' +
        '(a label: nothing converts): a ds18b20 measures temperature: use it in a temperature loop in °C',
    ],
  ];
  for (const [when, text, error] of refused) {
    test(`given ${when}, then refused: ${error}`, () => {
      assert.ok(configErrors(text).includes(error), configErrors(text).join('\n'));
    });
  }

  test('accepted in a °C loop (the default unit), alone or in a set', () => {
    validConfig(withProbe('    sensor: probe'));
    validConfig(withProbe('    sensors: [t, probe]', '    unit: °C'));
  });

  test('a °F loop on simulated sensors (no fixed unit) is accepted', () => {
    validConfig(inF('    sensors: [t]'));
  });
});
