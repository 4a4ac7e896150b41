import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_RECONNECT_BACKOFF, reconnectDelayMs } from '../../src/mqtt/reconnect.js';

describe('reconnectDelayMs', () => {
  const noJitter = { ...DEFAULT_RECONNECT_BACKOFF, jitter: 0 };

  test('doubles from 1 s per failed attempt and stays at 60 s', () => {
    const table: Array<[attempt: number, delayMs: number]> = [
      [0, 0], // no failure yet: no wait
      [1, 1_000],
      [2, 2_000],
      [3, 4_000],
      [4, 8_000],
      [5, 16_000],
      [6, 32_000],
      [7, 60_000],
      [8, 60_000],
      [100_000, 60_000], // a broker down for weeks: still capped, never Infinity or NaN
    ];
    for (const [attempt, delayMs] of table) {
      assert.equal(reconnectDelayMs(attempt, noJitter), delayMs, `attempt ${attempt}`);
    }
  });

  test('jitter 0.2 shortens the wait by up to a fifth, never lengthens it', () => {
    const table: Array<[attempt: number, random: number, delayMs: number]> = [
      [1, 0, 1_000],
      [1, 0.5, 900],
      [1, 0.999_999, 800.0002],
      [7, 0, 60_000],
      [7, 0.5, 54_000],
      [7, 0.999_999, 48_000.012],
    ];
    for (const [attempt, random, delayMs] of table) {
      const got = reconnectDelayMs(attempt, DEFAULT_RECONNECT_BACKOFF, () => random);
      assert.ok(
        Math.abs(got - delayMs) < 1e-6,
        `attempt ${attempt}, random ${random}: got ${got}, want ${delayMs}`,
      );
    }
  });

  test('defaults: 1 s initial, 60 s cap, jitter 0.2 with Math.random', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const ceilingMs = Math.min(60_000, 1_000 * 2 ** (attempt - 1));
      const got = reconnectDelayMs(attempt);
      assert.ok(got > ceilingMs * 0.8 - 1e-9 && got <= ceilingMs, `attempt ${attempt}: ${got}`);
    }
  });

  test('small settings for tests: 20 ms doubling to 100 ms', () => {
    const delays = [1, 2, 3, 4, 5].map((n) => reconnectDelayMs(n, { initialMs: 20, maxMs: 100, jitter: 0 }));
    assert.deepEqual(delays, [20, 40, 80, 100, 100]);
  });

  test('rejects nonsense settings', () => {
    const bad = [
      { initialMs: -1, maxMs: 1_000, jitter: 0 },
      { initialMs: 1_000, maxMs: Number.NaN, jitter: 0 },
      { initialMs: 1_000, maxMs: 60_000, jitter: 1.5 },
    ];
    for (const backoff of bad)
      assert.throws(() => reconnectDelayMs(1, backoff), RangeError, JSON.stringify(backoff));
  });
});
