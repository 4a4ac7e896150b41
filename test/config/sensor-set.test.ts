/**
 * Several sensors per loop in the config (issue 13): `sensors` instead of `sensor`, `combine`,
 * `minHealthy`, `outlierLimit`; their defaults, refusals with paths, the loop's staleness, the
 * loop spec the daemon builds, and the plan hash (an unchanged one-sensor loop keeps its own).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loopSectionHash } from '../../src/config/plan.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';
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
