import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { judgeReading } from '../../src/core/sensor-health.js';
import type { Reading } from '../../src/core/types.js';
import { at, min, reading, s } from './fixtures.js';

const limits = { staleAfterMs: min(5), plausibleMin: -40, plausibleMax: 85 };
const now = at(min(60));

describe('judgeReading', () => {
  const table: Array<[given: string, reading: Reading | undefined, verdict: 'ok' | string]> = [
    ['no reading yet', undefined, 'Missing'],
    ['NaN', reading(Number.NaN, now), 'NotFinite'],
    ['+Infinity', reading(Number.POSITIVE_INFINITY, now), 'NotFinite'],
    ['−Infinity', reading(Number.NEGATIVE_INFINITY, now), 'NotFinite'],
    ['taken just now', reading(21.5, now), 'ok'],
    ['exactly staleAfterMs old', reading(21.5, now - min(5)), 'ok'],
    ['1 ms older than staleAfterMs', reading(21.5, now - min(5) - 1), 'Stale'],
    ['an hour old', reading(21.5, now - min(60)), 'Stale'],
    ['below plausibleMin', reading(-40.1, now), 'Implausible'],
    ['above plausibleMax (a DS18B20 power-on 85.0 passes, 127 does not)', reading(127, now), 'Implausible'],
    ['at plausibleMin', reading(-40, now), 'ok'],
    ['at plausibleMax', reading(85, now), 'ok'],
    ['stale and implausible: stale is reported', reading(500, now - min(10)), 'Stale'],
  ];
  for (const [given, value, verdict] of table) {
    test(`${given} → ${verdict}`, () => {
      const result = judgeReading(value, now, limits);
      if (verdict === 'ok') {
        assert.deepEqual(result, { ok: true, value: value?.value });
      } else {
        assert.equal(result.ok, false);
        assert.equal(!result.ok && result.reason, verdict);
        assert.ok(!result.ok && result.message.length > 0, 'a message a person can read');
      }
    });
  }

  test('the stale message names the age and the limit in seconds', () => {
    const result = judgeReading(reading(20, now - s(400)), now, limits);
    assert.deepEqual(result, {
      ok: false,
      reason: 'Stale',
      message: 'last reading is 400 s old (limit 300 s)',
    });
  });
});

describe('judgeReading with a failed read after the last good reading', () => {
  test('given reads failing since, when the reading goes stale, then the message says what failed', () => {
    const failing = { ...reading(20, now - s(400)), lastError: 'w1_slave: CRC mismatch' };
    assert.deepEqual(judgeReading(failing, now, limits), {
      ok: false,
      reason: 'Stale',
      message: 'last reading is 400 s old (limit 300 s); last read failed: w1_slave: CRC mismatch',
    });
  });

  test('given reads failing since, while the reading is still fresh, then it is used', () => {
    const failing = { ...reading(20, now - s(10)), lastError: 'w1_slave: CRC mismatch' };
    assert.deepEqual(judgeReading(failing, now, limits), { ok: true, value: 20 });
  });
});
