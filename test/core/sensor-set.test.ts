import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initialLoopMemory, reconcile } from '../../src/core/reconcile.js';
import { judgeReading } from '../../src/core/sensor-health.js';
import {
  type CombineMethod,
  combineReadings,
  type DropReason,
  type SensorSetResult,
  type SensorSetSpec,
} from '../../src/core/sensor-set.js';
import { describeSensorSet, validateSensorSet } from '../../src/core/sensor-set-report.js';
import type { Reading } from '../../src/core/types.js';
import { at, condition, desired, heaterRelayLoop, min, observed, reading, s } from './fixtures.js';

const limits = { staleAfterMs: min(5), plausibleMin: -40, plausibleMax: 85 };
const now = at(min(60));

function set(sensors: string[], combine: CombineMethod, more: Partial<SensorSetSpec> = {}): SensorSetSpec {
  return { sensors, combine, minHealthy: 1, ...more };
}

/** Fresh readings (taken now) by sensor id. */
function fresh(values: Record<string, number>): Record<string, Reading> {
  return Object.fromEntries(Object.entries(values).map(([id, value]) => [id, reading(value, now)]));
}

function reasons(result: SensorSetResult): Array<[string, DropReason]> {
  return result.dropped.map((d) => [d.sensor, d.reason]);
}

describe('combineReadings: how healthy readings combine', () => {
  const abc = fresh({ a: 20, b: 21, c: 23.5 });
  const table: Array<[CombineMethod, value: number, used: string[]]> = [
    ['mean', (20 + 21 + 23.5) / 3, ['a', 'b', 'c']],
    ['median', 21, ['a', 'b', 'c']],
    ['min', 20, ['a', 'b', 'c']],
    ['max', 23.5, ['a', 'b', 'c']],
    ['first', 20, ['a']],
  ];
  for (const [combine, value, used] of table) {
    test(`given a 20, b 21, c 23.5 all fresh, when combined by ${combine}, then ${value}`, () => {
      const result = combineReadings(set(['a', 'b', 'c'], combine), abc, now, limits);
      assert.deepEqual(result, {
        verdict: { ok: true, value },
        reading: { value, atMs: now },
        staleAtMs: now + limits.staleAfterMs + 1,
        used,
        dropped: [],
      });
    });

    test(`${combine}: the combined reading passes judgeReading with the same limits (what reconcile does)`, () => {
      const result = combineReadings(set(['a', 'b', 'c'], combine), abc, now, limits);
      assert.deepEqual(judgeReading(result.reading, now, limits), { ok: true, value });
    });
  }

  test('median of an even count is the mean of the two middle readings', () => {
    const result = combineReadings(
      set(['a', 'b', 'c', 'd'], 'median'),
      fresh({ a: 24, b: 20, c: 21, d: 23 }),
      now,
      limits,
    );
    assert.deepEqual(result.verdict, { ok: true, value: 22 });
  });

  test('min and max ignore the order of the sensors', () => {
    const readings = fresh({ a: 23, b: 19, c: 21 });
    assert.deepEqual(combineReadings(set(['a', 'b', 'c'], 'min'), readings, now, limits).verdict, {
      ok: true,
      value: 19,
    });
    assert.deepEqual(combineReadings(set(['a', 'b', 'c'], 'max'), readings, now, limits).verdict, {
      ok: true,
      value: 23,
    });
  });
});

describe('combineReadings: first is a fallback order', () => {
  const spec = set(['a', 'b'], 'first');
  test('given A fresh, then A is used and B (healthy) is a standby: neither used nor dropped', () => {
    const result = combineReadings(spec, fresh({ a: 20, b: 25 }), now, limits);
    assert.deepEqual(result.verdict, { ok: true, value: 20 });
    assert.deepEqual(result.used, ['a']);
    assert.deepEqual(result.dropped, []);
  });

  test('given A goes stale, then B is used; when A is fresh again, then A is used again', () => {
    const bReading = (t: number) => reading(25, t);
    const staleA = { a: reading(20, now - min(6)), b: bReading(now) };
    const fellBack = combineReadings(spec, staleA, now, limits);
    assert.deepEqual(fellBack.verdict, { ok: true, value: 25 });
    assert.deepEqual(fellBack.used, ['b']);
    assert.deepEqual(reasons(fellBack), [['a', 'Stale']]);

    const later = now + s(30);
    const back = combineReadings(spec, { a: reading(20.5, later), b: bReading(later) }, later, limits);
    assert.deepEqual(back.verdict, { ok: true, value: 20.5 });
    assert.deepEqual(back.used, ['a']);
    assert.deepEqual(back.dropped, []);
  });

  test('given neither is healthy, then the verdict is not ok (safe state)', () => {
    const result = combineReadings(spec, { a: undefined, b: reading(25, now - min(6)) }, now, limits);
    assert.equal(result.verdict.ok, false);
    assert.equal(result.reading, undefined);
    assert.deepEqual(reasons(result), [
      ['a', 'Missing'],
      ['b', 'Stale'],
    ]);
  });
});

describe('combineReadings: each sensor is judged by judgeReading, its reason reported in dropped', () => {
  const table: Array<[given: string, bad: Reading | undefined, reason: DropReason]> = [
    ['no reading yet', undefined, 'Missing'],
    ['NaN', reading(Number.NaN, now), 'NotFinite'],
    ['+Infinity', reading(Number.POSITIVE_INFINITY, now), 'NotFinite'],
    ['−Infinity', reading(Number.NEGATIVE_INFINITY, now), 'NotFinite'],
    ['6 min old', reading(21, now - min(6)), 'Stale'],
    ['stamped 60 s in the future (clock went back)', reading(21, now + s(60)), 'Stale'],
    ['127 (outside plausible)', reading(127, now), 'Implausible'],
  ];
  for (const [given, bad, reason] of table) {
    test(`given c ${given}, then c is dropped as ${reason} and the median of a and b is used`, () => {
      const readings = { ...fresh({ a: 20, b: 21 }), c: bad };
      const result = combineReadings(
        set(['a', 'b', 'c'], 'median', { minHealthy: 2 }),
        readings,
        now,
        limits,
      );
      assert.deepEqual(result.verdict, { ok: true, value: 20.5 });
      assert.deepEqual(result.used, ['a', 'b']);
      const judged = judgeReading(bad, now, limits);
      assert.deepEqual(result.dropped, [{ sensor: 'c', reason, message: !judged.ok ? judged.message : '' }]);
    });
  }

  test('a reading stamped within the future tolerance (sub-second scheduling) is used', () => {
    const readings = { a: reading(20, now + 500), b: reading(22, now) };
    const result = combineReadings(set(['a', 'b'], 'mean'), readings, now, limits);
    assert.deepEqual(result.verdict, { ok: true, value: 21 });
  });
});

describe('combineReadings: outliers and disagreement', () => {
  const probes = ['probe-1', 'probe-2', 'probe-3'];

  test('given 3 healthy and probe-2 stuck 5 °C off, then probe-2 is dropped with its distance', () => {
    const readings = fresh({ 'probe-1': 21, 'probe-2': 26, 'probe-3': 21.2 });
    const result = combineReadings(
      set(probes, 'median', { minHealthy: 2, outlierLimit: 1.5 }),
      readings,
      now,
      limits,
    );
    assert.deepEqual(result.verdict, { ok: true, value: 21.1 });
    assert.deepEqual(result.used, ['probe-1', 'probe-3']);
    assert.equal(result.dropped.length, 1);
    const [dropped] = result.dropped;
    assert.equal(dropped?.sensor, 'probe-2');
    assert.equal(dropped?.reason, 'Outlier');
    assert.ok(Math.abs((dropped?.distance ?? 0) - 4.8) < 1e-9, `distance ${dropped?.distance}`);
    assert.equal(
      dropped?.message,
      'reading 26 is 4.8 from the median 21.2 of the healthy sensors (limit 1.5)',
    );
  });

  test('given no outlierLimit, then nothing is rejected (the stuck probe pulls the mean)', () => {
    const readings = fresh({ 'probe-1': 21, 'probe-2': 26, 'probe-3': 22 });
    const result = combineReadings(set(probes, 'mean'), readings, now, limits);
    assert.deepEqual(result.verdict, { ok: true, value: 23 });
    assert.deepEqual(result.dropped, []);
  });

  test('a reading exactly outlierLimit from the median is kept ("farther than" is strict)', () => {
    const readings = fresh({ 'probe-1': 20, 'probe-2': 21, 'probe-3': 22 });
    const result = combineReadings(set(probes, 'mean', { outlierLimit: 1 }), readings, now, limits);
    assert.deepEqual(result.used, probes);
  });

  test('given 2 healthy within outlierLimit, then both are used', () => {
    const result = combineReadings(
      set(['a', 'b'], 'mean', { outlierLimit: 1.5 }),
      fresh({ a: 20, b: 21.5 }),
      now,
      limits,
    );
    assert.deepEqual(result.verdict, { ok: true, value: 20.75 });
  });

  test('given 2 healthy farther apart than outlierLimit, then both are dropped as Disagree (safe, even with minHealthy 1)', () => {
    const result = combineReadings(
      set(['a', 'b'], 'mean', { outlierLimit: 1.5 }),
      fresh({ a: 20, b: 23.2 }),
      now,
      limits,
    );
    assert.equal(result.verdict.ok, false);
    assert.equal(!result.verdict.ok && result.verdict.reason, 'Implausible');
    assert.deepEqual(reasons(result), [
      ['a', 'Disagree'],
      ['b', 'Disagree'],
    ]);
    assert.equal(
      result.dropped[0]?.message,
      "reading 20 and b's 23.2 are 3.2 apart (limit 1.5): neither can be trusted over the other",
    );
    assert.ok(Math.abs((result.dropped[1]?.distance ?? 0) - 3.2) < 1e-9);
  });

  test('given 3 sensors of which one is stale, when the other 2 disagree, then both are dropped', () => {
    const readings = { ...fresh({ a: 20, b: 23 }), c: reading(21, now - min(6)) };
    const result = combineReadings(
      set(['a', 'b', 'c'], 'median', { outlierLimit: 1.5 }),
      readings,
      now,
      limits,
    );
    assert.equal(result.verdict.ok, false);
    assert.deepEqual(reasons(result), [
      ['a', 'Disagree'],
      ['b', 'Disagree'],
      ['c', 'Stale'],
    ]);
  });

  test('given an even split with no majority, then all are dropped as Disagree', () => {
    const readings = fresh({ a: 20, b: 20, c: 23, d: 23 });
    const result = combineReadings(
      set(['a', 'b', 'c', 'd'], 'median', { outlierLimit: 1 }),
      readings,
      now,
      limits,
    );
    assert.equal(result.verdict.ok, false);
    assert.deepEqual(
      reasons(result).map(([, reason]) => reason),
      ['Disagree', 'Disagree', 'Disagree', 'Disagree'],
    );
  });

  test('given 2 left after outliers are dropped, when those 2 disagree, then they are dropped too', () => {
    // Median 22: a and d are outliers, b (21.2) and c (22.8) are within 1.5 of it but 1.6 apart.
    const readings = fresh({ a: 10, b: 21.2, c: 22.8, d: 34 });
    const result = combineReadings(
      set(['a', 'b', 'c', 'd'], 'mean', { outlierLimit: 1.5 }),
      readings,
      now,
      limits,
    );
    assert.equal(result.verdict.ok, false);
    assert.deepEqual(reasons(result), [
      ['a', 'Outlier'],
      ['b', 'Disagree'],
      ['c', 'Disagree'],
      ['d', 'Outlier'],
    ]);
  });

  test('first: an outlier first in line is skipped for the next healthy one', () => {
    const readings = fresh({ a: 35, b: 21, c: 21.3 });
    const result = combineReadings(
      set(['a', 'b', 'c'], 'first', { outlierLimit: 1.5 }),
      readings,
      now,
      limits,
    );
    assert.deepEqual(result.verdict, { ok: true, value: 21 });
    assert.deepEqual(result.used, ['b']);
    assert.deepEqual(reasons(result), [['a', 'Outlier']]);
  });
});

describe('combineReadings: too few healthy sensors → not ok, the loop goes safe', () => {
  const spec = set(['a', 'b', 'c'], 'median', { minHealthy: 2 });

  test('given 1 of 3 healthy with minHealthy 2, then not ok and the message names every dropped sensor and its reason', () => {
    const readings = { a: reading(20, now), b: reading(20, now - s(400)) };
    const result = combineReadings(spec, readings, now, limits);
    assert.deepEqual(result, {
      verdict: {
        ok: false,
        reason: 'Missing',
        message:
          '1 of 3 sensors healthy, 2 needed (b Stale: last reading is 400 s old (limit 300 s); c Missing: no reading yet)',
      },
      used: [],
      dropped: [
        { sensor: 'b', reason: 'Stale', message: 'last reading is 400 s old (limit 300 s)' },
        { sensor: 'c', reason: 'Missing', message: 'no reading yet' },
      ],
    });
  });

  test('given every sensor missing, then the verdict is what judgeReading gives a missing reading', () => {
    const result = combineReadings(spec, {}, now, limits);
    const single = judgeReading(undefined, now, limits);
    assert.equal(result.verdict.ok, single.ok);
    assert.equal(!result.verdict.ok && result.verdict.reason, !single.ok && single.reason);
    assert.equal(result.reading, undefined);
  });

  const reasonTable: Array<[given: string, readings: Record<string, Reading>, reason: string]> = [
    [
      'all stale',
      { a: reading(20, now - min(6)), b: reading(20, now - min(7)), c: reading(20, now - min(8)) },
      'Stale',
    ],
    [
      'one healthy, the others stale',
      { a: reading(20, now), b: reading(20, now - min(7)), c: reading(20, now - min(8)) },
      'Stale',
    ],
    ['stale and missing', { a: reading(20, now - min(6)) }, 'Missing'],
    [
      'NaN and implausible',
      { a: reading(Number.NaN, now), b: reading(200, now), c: reading(20, now) },
      'Missing',
    ],
  ];
  for (const [given, readings, reason] of reasonTable) {
    test(`given ${given}, then the verdict's reason is ${reason} (the Faulted condition's Sensor${reason})`, () => {
      const verdict = combineReadings(spec, readings, now, limits).verdict;
      assert.equal(!verdict.ok && verdict.reason, reason);
    });
  }

  test('given the set fails, when reconcile gets no reading, then the heater goes to its safe level', () => {
    const result = combineReadings(spec, { a: reading(20, now) }, now, limits);
    const loop = heaterRelayLoop();
    const outcome = reconcile(
      loop,
      desired('heat', 21),
      observed(result.reading, { heater: 1 }),
      initialLoopMemory(),
      now,
    );
    assert.equal(outcome.wanted.heater, 0);
    assert.equal(condition(outcome, 'Faulted').status, 'True');
  });

  test('minHealthy 0 still needs one reading: nothing healthy is never ok', () => {
    const result = combineReadings(set(['a'], 'mean', { minHealthy: 0 }), {}, now, limits);
    assert.equal(result.verdict.ok, false);
  });

  test('minHealthy larger than the sensor count: never ok, even with every sensor healthy', () => {
    const result = combineReadings(
      set(['a', 'b'], 'mean', { minHealthy: 3 }),
      fresh({ a: 20, b: 21 }),
      now,
      limits,
    );
    assert.equal(result.verdict.ok, false);
    assert.deepEqual(result.dropped, []);
  });

  test('an empty sensor list is never ok', () => {
    const result = combineReadings(set([], 'median'), fresh({ a: 20 }), now, limits);
    assert.deepEqual(result, {
      verdict: { ok: false, reason: 'Missing', message: 'no sensors configured' },
      used: [],
      dropped: [],
    });
  });
});

describe('combineReadings: a one-sensor set gives exactly judgeReading’s verdict', () => {
  const table: Array<[given: string, r: Reading | undefined]> = [
    ['missing', undefined],
    ['fresh', reading(21, now)],
    ['stale', reading(21, now - s(400))],
    ['stale with a failed read', { ...reading(21, now - s(400)), lastError: 'CRC mismatch' }],
    ['NaN', reading(Number.NaN, now)],
    ['implausible', reading(-41, now)],
    ['in the future', reading(21, now + s(60))],
  ];
  for (const combine of ['first', 'median'] as const) {
    for (const [given, r] of table) {
      test(`${combine}, ${given}`, () => {
        const result = combineReadings(set(['a'], combine), { a: r }, now, limits);
        assert.deepEqual(result.verdict, judgeReading(r, now, limits));
      });
    }
  }
});

describe("combineReadings: each member is judged by its own staleness, the loop's caps it", () => {
  // A DS18B20 read every 5 s (stale after 15 s) beside an MQTT probe reporting every 5 min
  // (stale after 900 s); the loop's limit is the largest, 900 s, as its default is.
  const loopLimits = { ...limits, staleAfterMs: s(900) };
  const pair = (more: Partial<SensorSetSpec> = {}) =>
    set(['fast', 'slow'], 'mean', { minHealthy: 2, staleAfterMs: { fast: s(15), slow: s(900) }, ...more });

  test("given the fast probe frozen 16 s ago, then it is dropped as Stale at ITS limit (15 s), not the loop's 900 s", () => {
    const readings = { fast: reading(20, now - s(16)), slow: reading(20, now - s(200)) };
    const result = combineReadings(pair(), readings, now, loopLimits);
    assert.equal(result.verdict.ok, false, 'minHealthy 2: the heater goes safe');
    assert.deepEqual(result.dropped, [
      { sensor: 'fast', reason: 'Stale', message: 'last reading is 16 s old (limit 15 s)' },
    ]);
  });

  test('at 15 s it still counts; the slow probe 200 s old counts too (its own limit is 900 s)', () => {
    const readings = { fast: reading(20, now - s(15)), slow: reading(22, now - s(200)) };
    assert.deepEqual(combineReadings(pair(), readings, now, loopLimits).verdict, { ok: true, value: 21 });
  });

  test("the loop's limit caps a member's own (a staleAfterS the file sets on the loop)", () => {
    const readings = { fast: reading(20, now), slow: reading(22, now - s(61)) };
    const result = combineReadings(pair(), readings, now, { ...limits, staleAfterMs: s(60) });
    assert.deepEqual(reasons(result), [['slow', 'Stale']]);
  });

  test("a member without its own limit is judged by the loop's (also one named like an Object member)", () => {
    const spec = set(['constructor', 'a'], 'mean', { minHealthy: 2, staleAfterMs: { a: s(15) } });
    const readings = { constructor: reading(20, now - s(200)), a: reading(20, now) };
    assert.equal(combineReadings(spec, readings, now, loopLimits).verdict.ok, true, '200 s < 900 s');
    const old = { constructor: reading(20, now - s(901)), a: reading(20, now) };
    assert.deepEqual(reasons(combineReadings(spec, old, now, loopLimits)), [['constructor', 'Stale']]);
  });

  test('staleAtMs: the first moment a fresh member goes stale by its own limit (the loop wakes then)', () => {
    const readings = { fast: reading(20, now - s(10)), slow: reading(22, now - s(200)) };
    const result = combineReadings(pair(), readings, now, loopLimits);
    assert.equal(result.staleAtMs, now - s(10) + s(15) + 1);
    const then = combineReadings(pair(), readings, result.staleAtMs!, loopLimits);
    assert.equal(then.verdict.ok, false, 'at that moment the fast probe is stale');
  });

  test('staleAtMs counts the standbys of first (they count towards minHealthy) and outliers', () => {
    const standby = combineReadings(
      set(['slow', 'fast'], 'first', { minHealthy: 2, staleAfterMs: { fast: s(15), slow: s(900) } }),
      { slow: reading(20, now), fast: reading(20, now - s(5)) },
      now,
      loopLimits,
    );
    assert.deepEqual(standby.used, ['slow']);
    assert.equal(standby.staleAtMs, now - s(5) + s(15) + 1);
    const outlier = combineReadings(
      set(['a', 'b', 'c'], 'median', { outlierLimit: 1, staleAfterMs: { a: s(900), b: s(900), c: s(15) } }),
      { a: reading(20, now), b: reading(20.5, now), c: reading(30, now - s(5)) },
      now,
      loopLimits,
    );
    assert.deepEqual(reasons(outlier), [['c', 'Outlier']]);
    assert.equal(outlier.staleAtMs, now - s(5) + s(15) + 1);
  });

  test('no staleAtMs when the set fails (nothing to wait for: the loop is already safe)', () => {
    assert.equal(combineReadings(pair(), {}, now, loopLimits).staleAtMs, undefined);
  });
});

describe('combineReadings: the combined reading is stamped with the NEWEST used reading, never going back', () => {
  test('given used readings 10 s, 200 s and 5 s old, then atMs is 5 s ago (a new reading is news)', () => {
    const readings = {
      a: reading(20, now - s(10)),
      b: reading(21, now - s(200)),
      c: reading(22, now - s(5)),
    };
    const result = combineReadings(set(['a', 'b', 'c'], 'mean'), readings, now, limits);
    assert.deepEqual(result.reading, { value: 21, atMs: now - s(5) });
  });

  test('a dropped stale reading does not count; the newest USED one does', () => {
    const readings = {
      a: reading(20, now - s(100)),
      b: reading(21, now - s(400)),
      c: reading(22, now - s(50)),
    };
    const result = combineReadings(set(['a', 'b', 'c'], 'max'), readings, now, limits);
    assert.deepEqual(result.reading, { value: 22, atMs: now - s(50) });
  });

  test('first: the used reading’s own time, not a standby’s', () => {
    const readings = { a: reading(20, now - s(250)), b: reading(21, now) };
    const result = combineReadings(set(['a', 'b'], 'first'), readings, now, limits);
    assert.deepEqual(result.reading, { value: 20, atMs: now - s(250) });
  });

  test('given the previous combined time, when the newest member is dropped (an outlier), then time does not go back', () => {
    const spec = set(['a', 'b', 'c'], 'median', { outlierLimit: 1 });
    const before = combineReadings(
      spec,
      { a: reading(20, now - s(30)), b: reading(20.2, now - s(20)), c: reading(20.1, now - s(5)) },
      now,
      limits,
    );
    assert.equal(before.reading?.atMs, now - s(5));
    const later = now + s(1);
    const readings = { a: reading(20, now - s(30)), b: reading(20.2, now - s(20)), c: reading(35, later) };
    const after = combineReadings(spec, readings, later, limits, before.reading?.atMs);
    assert.deepEqual(reasons(after), [['c', 'Outlier']]);
    assert.deepEqual(
      after.reading,
      { value: 20.1, atMs: now - s(5) },
      'held at the previous time, not 20 s ago',
    );
    // Without the previous time it would have gone back: the test can fail.
    assert.equal(combineReadings(spec, readings, later, limits).reading?.atMs, now - s(20));
  });

  test('a newer reading moves it on; a previous time ahead of now (the clock went back) is ignored', () => {
    const readings = { a: reading(20, now - s(10)) };
    assert.equal(
      combineReadings(set(['a'], 'mean'), readings, now, limits, now - s(20))?.reading?.atMs,
      now - s(10),
    );
    assert.equal(
      combineReadings(set(['a'], 'mean'), readings, now, limits, now + s(60))?.reading?.atMs,
      now - s(10),
    );
  });
});

describe('combineReadings: a sensor listed twice counts once', () => {
  test('given [a, a] with minHealthy 2 and a healthy, then not ok', () => {
    const result = combineReadings(set(['a', 'a'], 'mean', { minHealthy: 2 }), fresh({ a: 20 }), now, limits);
    assert.equal(result.verdict.ok, false);
  });

  test('given [a, a, b], then the mean weighs a once', () => {
    const result = combineReadings(set(['a', 'a', 'b'], 'mean'), fresh({ a: 20, b: 23 }), now, limits);
    assert.deepEqual(result.verdict, { ok: true, value: 21.5 });
    assert.deepEqual(result.used, ['a', 'b']);
  });
});

describe('validateSensorSet', () => {
  const probes = (count: number): string[] => Array.from({ length: count }, (_, i) => `p${i + 1}`);
  const table: Array<[given: string, spec: SensorSetSpec, issues: Array<[path: string, message: string]>]> = [
    ['a valid set', set(['a', 'b', 'c'], 'median', { minHealthy: 2, outlierLimit: 1.5 }), []],
    [
      'an empty list',
      set([], 'mean'),
      [
        ['sensors', 'at least one sensor is required'],
        ['minHealthy', '1 is more than the 0 sensor(s) listed: the loop could never regulate'],
      ],
    ],
    ['16 sensors (the most)', set(probes(16), 'median'), []],
    ['17 sensors', set(probes(17), 'median'), [['sensors', 'at most 16 sensors in one loop (17 listed)']]],
    [
      'a duplicate id',
      set(['a', 'b', 'a'], 'mean'),
      [['sensors.2', 'sensor "a" is already listed at sensors.0 (a sensor counts once)']],
    ],
    [
      'minHealthy larger than the distinct sensors',
      set(['a', 'b', 'a'], 'mean', { minHealthy: 3 }),
      [
        ['sensors.2', 'sensor "a" is already listed at sensors.0 (a sensor counts once)'],
        ['minHealthy', '3 is more than the 2 sensor(s) listed: the loop could never regulate'],
      ],
    ],
    [
      'minHealthy 0',
      set(['a'], 'mean', { minHealthy: 0 }),
      [['minHealthy', 'must be a whole number, at least 1']],
    ],
    [
      'minHealthy 1.5',
      set(['a', 'b'], 'mean', { minHealthy: 1.5 }),
      [['minHealthy', 'must be a whole number, at least 1']],
    ],
    [
      'outlierLimit 0',
      set(['a', 'b'], 'mean', { outlierLimit: 0 }),
      [['outlierLimit', 'must be a number above 0 (loop unit)']],
    ],
    [
      'outlierLimit −1',
      set(['a', 'b'], 'mean', { outlierLimit: -1 }),
      [['outlierLimit', 'must be a number above 0 (loop unit)']],
    ],
    [
      'outlierLimit NaN',
      set(['a', 'b'], 'mean', { outlierLimit: Number.NaN }),
      [['outlierLimit', 'must be a number above 0 (loop unit)']],
    ],
    [
      'outlierLimit Infinity',
      set(['a', 'b'], 'mean', { outlierLimit: Number.POSITIVE_INFINITY }),
      [['outlierLimit', 'must be a number above 0 (loop unit)']],
    ],
    [
      'an unknown combine',
      set(['a'], 'average' as CombineMethod),
      [['combine', 'must be one of mean, median, min, max, first']],
    ],
  ];
  for (const [given, spec, issues] of table) {
    test(`${given} → ${issues.length === 0 ? 'no issue' : issues.map(([path]) => path).join(', ')}`, () => {
      const found = validateSensorSet(spec).map((i) => [i.path.join('.'), i.message]);
      assert.deepEqual(found, issues);
    });
  }
});

describe('describeSensorSet: one line for the status', () => {
  const table: Array<
    [
      given: string,
      spec: SensorSetSpec,
      readings: Record<string, Reading | undefined>,
      unit: string,
      line: string,
    ]
  > = [
    [
      'an outlier dropped',
      set(['probe-1', 'probe-2', 'probe-3'], 'median', { minHealthy: 2, outlierLimit: 1.5 }),
      fresh({ 'probe-1': 21, 'probe-2': 26, 'probe-3': 21.2 }),
      '°C',
      'median of 3 (dropped probe-2: 4.8 °C from the others)',
    ],
    ['all used', set(['a', 'b', 'c'], 'mean'), fresh({ a: 20, b: 21, c: 22 }), '°C', 'mean of 3'],
    [
      'first, falling back',
      set(['a', 'b'], 'first'),
      { a: reading(20, now - min(6)), b: reading(21, now) },
      '°C',
      'first of 2: b (dropped a: stale)',
    ],
    [
      'too few healthy',
      set(['a', 'b', 'c'], 'max', { minHealthy: 2 }),
      { a: reading(20, now), b: reading(20, now - min(6)), c: undefined },
      '%',
      'no reading: 1 of 3 healthy, 2 needed (dropped b: stale, c: missing)',
    ],
    [
      'two disagreeing, no unit',
      set(['a', 'b'], 'mean', { outlierLimit: 1 }),
      fresh({ a: 20, b: 23 }),
      '',
      'no reading: 0 of 2 healthy, 1 needed (dropped a: disagrees by 3, b: disagrees by 3)',
    ],
    [
      'not a number and implausible',
      set(['a', 'b', 'c'], 'min'),
      { a: reading(Number.NaN, now), b: reading(300, now), c: reading(20, now) },
      '°C',
      'min of 3 (dropped a: not a number, b: implausible)',
    ],
  ];
  for (const [given, spec, readings, unit, line] of table) {
    test(`${given} → "${line}"`, () => {
      assert.equal(describeSensorSet(spec, combineReadings(spec, readings, now, limits), unit), line);
    });
  }
});
