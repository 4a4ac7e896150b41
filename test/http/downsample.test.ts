import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { downsampleHistory } from '../../src/http/downsample.js';
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

describe('downsampleHistory', () => {
  test('given as many samples as maxPoints, then every sample is a point, unchanged, not downsampled', () => {
    const samples = [
      sample(0, { measured: undefined }),
      sample(1, { measured: 19.25, action: 'idle', output: 0 }),
    ];
    assert.deepEqual(downsampleHistory(samples, range(0, 10), 2), {
      downsampled: false,
      points: [
        { at: iso(0), measured: null, setpoint: 20, output: 0.5, action: 'heating' },
        { at: iso(1), measured: 19.25, setpoint: 20, output: 0, action: 'idle' },
      ],
    });
  });

  test('given no samples, then no points', () => {
    assert.deepEqual(downsampleHistory([], range(0, 10), 5), { points: [], downsampled: false });
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
    assert.deepEqual(downsampleHistory(samples, range(0, 10), 2), {
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
    const { points } = downsampleHistory(samples, range(0, 10), 2);
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
    const { points } = downsampleHistory(samples, range(0, 10), 2);
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
    const { points } = downsampleHistory(samples, range(0, 10), 1);
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
      const { points, downsampled } = downsampleHistory(
        samples,
        { fromMs: T0, toMs: T0 + 86_400_000 },
        maxPoints,
      );
      assert.equal(downsampled, true);
      assert.ok(points.length <= maxPoints, `${points.length} points`);
      assert.ok(points.length >= maxPoints * 0.9, `${points.length} points`);
    });
  }

  test('given samples up to and including `to` (the API keeps s.atMs <= toMs), then still at most maxPoints points', {}, () => {
    // 11 samples at 0..10 s over [0, 10] in 5 slices of 2 s: the one at 10 s opens a 6th slice.
    const samples = Array.from({ length: 11 }, (_, i) => sample(i));
    const { points } = downsampleHistory(samples, range(0, 10), 5);
    assert.ok(points.length <= 5, `${points.length} points for maxPoints 5`);
  });
});
