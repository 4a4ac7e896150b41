import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { backoffDelayMs } from '../../src/time/backoff.js';

describe('backoffDelayMs', () => {
  test('capped exponential: 1 s, 2 s, 4 s … up to 30 s', () => {
    const opts = { initialMs: 1_000, maxMs: 30_000 };
    const table: Array<[failures: number, delayMs: number]> = [
      [0, 0],
      [1, 1_000],
      [2, 2_000],
      [3, 4_000],
      [4, 8_000],
      [5, 16_000],
      [6, 30_000],
      [7, 30_000],
      [5_000, 30_000], // factor ** n overflows to Infinity; the cap still holds
    ];
    for (const [failures, delayMs] of table) {
      assert.equal(backoffDelayMs(failures, opts), delayMs, `failures=${failures}`);
    }
  });

  test('factor 3', () => {
    const delays = [1, 2, 3, 4].map((n) => backoffDelayMs(n, { initialMs: 100, maxMs: 2_000, factor: 3 }));
    assert.deepEqual(delays, [100, 300, 900, 2_000]);
  });

  test('jitter removes up to that fraction of the delay, never exceeding maxMs', () => {
    const table: Array<[random: number, delayMs: number]> = [
      [0, 8_000],
      [0.5, 6_000],
      [0.999_999, 4_000.004],
    ];
    for (const [random, delayMs] of table) {
      const got = backoffDelayMs(5, { initialMs: 1_000, maxMs: 8_000, jitter: 0.5, random: () => random });
      assert.ok(Math.abs(got - delayMs) < 1e-6, `random=${random}: got ${got}, want ${delayMs}`);
    }
  });

  test('initialMs 0 gives 0 even for long streaks', () => {
    assert.equal(backoffDelayMs(10_000, { initialMs: 0, maxMs: 1_000 }), 0);
  });

  test('rejects nonsense options', () => {
    const bad = [
      { initialMs: -1, maxMs: 1 },
      { initialMs: 1, maxMs: Number.NaN },
      { initialMs: 1, maxMs: 10, factor: 0.5 },
      { initialMs: 1, maxMs: 10, jitter: 2 },
    ];
    for (const opts of bad) assert.throws(() => backoffDelayMs(1, opts), RangeError, JSON.stringify(opts));
  });
});
