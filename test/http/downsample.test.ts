import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HistoryBuckets } from '../../src/http/downsample.js';
import type { StoredSample } from '../../src/store/state-store.js';

const T0 = Date.parse('2026-11-30T12:00:00.000Z');

function sample(atS: number, fields: Partial<StoredSample> = {}): StoredSample {
  return {
    atMs: T0 + atS * 1000,
    setpoint: 20,
    measured: 19,
    output: 0.5,
    action: 'heating',
    resolutionS: 1,
    ...fields,
  };
}

const iso = (atS: number) => new Date(T0 + atS * 1000).toISOString();
const range = (fromS: number, toS: number) => ({ fromMs: T0 + fromS * 1000, toMs: T0 + toS * 1000 });

/** `samples` pushed one by one into a HistoryBuckets, in the order given: its points. */
function pushed(samples: readonly StoredSample[], over: { fromMs: number; toMs: number }, maxPoints: number) {
  const buckets = new HistoryBuckets(over, maxPoints);
  for (const s of samples) buckets.push(s);
  return buckets.points();
}

describe('HistoryBuckets: push(sample) then points()', () => {
  test('given as many samples as maxPoints, then every sample is a point, unchanged, not downsampled', () => {
    const samples = [
      sample(0, { measured: undefined }),
      sample(1, { measured: 19.25, action: 'idle', output: 0 }),
    ];
    assert.deepEqual(pushed(samples, range(0, 10), 2), {
      downsampled: false,
      points: [
        { at: iso(0), measured: null, setpoint: 20, output: 0.5, action: 'heating' },
        { at: iso(1), measured: 19.25, setpoint: 20, output: 0, action: 'idle' },
      ],
    });
  });

  test('given no samples, then no points', () => {
    assert.deepEqual(pushed([], range(0, 10), 5), { points: [], downsampled: false });
  });

  test('given more samples than maxPoints, then one point per slice: measured and output averaged, setpoint and action the last, at the mean time', () => {
    // 10 s in 2 slices of 5 s: samples at 0..4 and 5..9.
    const samples = Array.from({ length: 10 }, (_, i) =>
      sample(i, {
        measured: 10 + i,
        output: i < 5 ? 0 : 1,
        setpoint: i < 3 ? 20 : i < 8 ? 21 : 22,
        action: i === 4 ? 'idle' : 'heating',
      }),
    );
    assert.deepEqual(pushed(samples, range(0, 10), 2), {
      downsampled: true,
      points: [
        { at: iso(2), measured: 12, setpoint: 21, output: 0, action: 'idle' },
        { at: iso(7), measured: 17, setpoint: 22, output: 1, action: 'heating' },
      ],
    });
  });

  test('given a slice where some readings are missing, then measured averages the present ones only', () => {
    const samples = [
      sample(0, { measured: 18 }),
      sample(1, { measured: undefined }),
      sample(2, { measured: 21 }),
      sample(6, { measured: 20 }),
    ];
    const { points } = pushed(samples, range(0, 10), 2);
    assert.deepEqual(
      points.map((p) => p.measured),
      [19.5, 20],
    );
  });

  test('given a slice where every reading is missing, then its measured is null (a gap, not a zero)', () => {
    const samples = [
      sample(0, { measured: undefined }),
      sample(1, { measured: undefined }),
      sample(6, { measured: 20 }),
    ];
    const { points } = pushed(samples, range(0, 10), 2);
    assert.deepEqual(
      points.map((p) => p.measured),
      [null, 20],
    );
  });

  test('given averages with long fractions, then they are rounded to 4 decimals', () => {
    const samples = [
      sample(0, { measured: 1, output: 0 }),
      sample(1, { measured: 2, output: 0 }),
      sample(2, { measured: 2, output: 1 }),
    ];
    const { points } = pushed(samples, range(0, 10), 1);
    assert.deepEqual(points, [
      { at: iso(1), measured: 1.6667, setpoint: 20, output: 0.3333, action: 'heating' },
    ]);
  });

  const sizes: Array<{ samples: number; maxPoints: number }> = [
    { samples: 1_000, maxPoints: 10 },
    { samples: 5_000, maxPoints: 500 },
    { samples: 86_400, maxPoints: 5_000 },
  ];
  for (const { samples: count, maxPoints } of sizes) {
    test(`given ${count} samples spread over [from, to), then at most ${maxPoints} points`, () => {
      const samples = Array.from({ length: count }, (_, i) => ({
        ...sample(0),
        atMs: T0 + (i * 86_400_000) / count,
      }));
      const { points, downsampled } = pushed(samples, { fromMs: T0, toMs: T0 + 86_400_000 }, maxPoints);
      assert.equal(downsampled, true);
      assert.ok(points.length <= maxPoints, `${points.length} points`);
      assert.ok(points.length >= maxPoints * 0.9, `${points.length} points`);
    });
  }

  test('given samples up to and including `to` (the API keeps s.atMs <= toMs), then still at most maxPoints points', {}, () => {
    // 11 samples at 0..10 s over [0, 10] in 5 slices of 2 s: the one at 10 s opens a 6th slice.
    const samples = Array.from({ length: 11 }, (_, i) => sample(i));
    const { points } = pushed(samples, range(0, 10), 5);
    assert.ok(points.length <= 5, `${points.length} points for maxPoints 5`);
  });

  test('given the same samples pushed in any order (rows come in insertion order), then the same points', () => {
    const samples = Array.from({ length: 10 }, (_, i) =>
      sample(i, { measured: 10 + i, output: i / 10, setpoint: 20 + i, action: i % 2 ? 'idle' : 'heating' }),
    );
    const shuffled = [
      samples[7]!,
      samples[2]!,
      samples[9]!,
      samples[0]!,
      samples[5]!,
      samples[1]!,
      samples[8]!,
      samples[3]!,
      samples[6]!,
      samples[4]!,
    ];
    for (const maxPoints of [2, 3, 10, 20]) {
      assert.deepEqual(
        pushed(shuffled, range(0, 10), maxPoints),
        pushed(samples, range(0, 10), maxPoints),
        `maxPoints ${maxPoints}`,
      );
    }
  });

  test('given two samples at the same time in one slice, then its last is the one pushed last', () => {
    const samples = [
      sample(1, { setpoint: 20 }),
      sample(3, { setpoint: 21, action: 'idle' }),
      sample(3, { setpoint: 22, action: 'off' }),
    ];
    assert.deepEqual(
      pushed(samples, range(0, 10), 1).points.map((p) => [p.setpoint, p.action]),
      [[22, 'off']],
    );
  });

  test('given samples before from and after to, then they are not counted', () => {
    const buckets = new HistoryBuckets(range(0, 10), 5);
    for (const atS of [-1, 0, 5, 10, 11]) buckets.push(sample(atS));
    assert.equal(buckets.samples, 3);
    assert.deepEqual(
      buckets.points().points.map((p) => p.at),
      [iso(0), iso(5), iso(10)],
    );
  });

  test('given one sample more than maxPoints, then the points are slice averages', () => {
    const buckets = new HistoryBuckets(range(0, 10), 3);
    for (const atS of [0, 1, 2]) buckets.push(sample(atS));
    assert.equal(buckets.points().downsampled, false);
    buckets.push(sample(9));
    assert.deepEqual(buckets.points(), {
      downsampled: true,
      points: [
        { at: iso(1), measured: 19, setpoint: 20, output: 0.5, action: 'heating' },
        { at: iso(9), measured: 19, setpoint: 20, output: 0.5, action: 'heating' },
      ],
    });
  });

  test('given a maxPoints that is not a whole number from 1, then RangeError', () => {
    for (const maxPoints of [0, -1, 1.5])
      assert.throws(() => new HistoryBuckets(range(0, 10), maxPoints), RangeError);
  });
});
