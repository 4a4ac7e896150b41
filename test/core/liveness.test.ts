import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { freshnessChangeAtMs, freshnessOf } from '../../src/core/liveness.js';
import { judgeReading } from '../../src/core/sensor-health.js';
import type { DeviceLiveness, Reading } from '../../src/core/types.js';
import { at, min, s } from './fixtures.js';

const STALE_MS = min(3);
const QUIET_MS = min(60);
const now = at(min(600));
const VIA = 'availability zigbee2mqtt/probe/availability';

/** A reading taken `ageMs` ago whose device was seen `seenAgoMs` ago (absent: no liveness). */
function quietReading(ageMs: number, live?: { seenAgoMs?: number; offlineAgoMs?: number }): Reading {
  const reading: Reading = { value: 19.5, atMs: now - ageMs };
  if (!live) return reading;
  const liveness: DeviceLiveness = { via: VIA, maxQuietMs: QUIET_MS };
  if (live.seenAgoMs !== undefined) liveness.seenAtMs = now - live.seenAgoMs;
  if (live.offlineAgoMs !== undefined) liveness.offlineSinceMs = now - live.offlineAgoMs;
  return { ...reading, liveness };
}

describe('freshnessOf: a quiet value stays in force while its device is seen alive, up to maxQuietMs', () => {
  const table: [given: string, reading: Reading, expected: 'fresh' | 'quiet' | 'Stale' | 'Offline'][] = [
    ['no liveness, younger than the stale limit', quietReading(s(30)), 'fresh'],
    ['no liveness, older than the stale limit', quietReading(min(4)), 'Stale'],
    ['liveness, young value', quietReading(s(30), { seenAgoMs: 0 }), 'fresh'],
    ['device seen now, value 22 min old', quietReading(min(22), { seenAgoMs: 0 }), 'quiet'],
    ['device seen 2 min ago, value 59 min old', quietReading(min(59), { seenAgoMs: min(2) }), 'quiet'],
    ['device seen now, value exactly maxQuiet old', quietReading(QUIET_MS, { seenAgoMs: 0 }), 'quiet'],
    ['device seen now, value 1 ms past maxQuiet', quietReading(QUIET_MS + 1, { seenAgoMs: 0 }), 'Stale'],
    ['device seen longer ago than the stale limit', quietReading(min(22), { seenAgoMs: min(4) }), 'Stale'],
    ['device never seen', quietReading(min(22), {}), 'Stale'],
    [
      'device seen ahead of now (clock went back) counts as now',
      quietReading(min(22), { seenAgoMs: -min(5) }),
      'quiet',
    ],
    [
      'offline, even with a value just taken',
      quietReading(0, { seenAgoMs: 0, offlineAgoMs: s(5) }),
      'Offline',
    ],
  ];
  for (const [given, reading, expected] of table) {
    test(`${given} → ${expected}`, () => {
      const result = freshnessOf(reading, now, STALE_MS);
      const outcome = result.fresh ? (result.quiet ? 'quiet' : 'fresh') : result.reason;
      assert.equal(outcome, expected);
    });
  }

  test('the quiet message says for how long, when the device was seen and the limit', () => {
    const result = freshnessOf(quietReading(min(22), { seenAgoMs: s(40) }), now, STALE_MS);
    assert.deepEqual(result, {
      fresh: true,
      quiet: 'quiet: unchanged for 22 min, device seen 40 s ago (limit 60 min)',
    });
  });

  test('past maxQuiet, the message says the device is alive but no new value came', () => {
    const result = freshnessOf(quietReading(min(61), { seenAgoMs: 0 }), now, STALE_MS);
    assert.deepEqual(result, {
      fresh: false,
      reason: 'Stale',
      message: 'quiet for 61 min though the device is alive (limit 60 min): no new value',
    });
  });

  test('offline says since when and how it is known', () => {
    const result = freshnessOf(quietReading(0, { offlineAgoMs: s(5) }), now, STALE_MS);
    assert.deepEqual(result, { fresh: false, reason: 'Offline', message: `device offline for 5 s (${VIA})` });
  });
});

describe('judgeReading with liveness', () => {
  const limits = { staleAfterMs: STALE_MS, plausibleMin: -10, plausibleMax: 50 };

  test('given a quiet value of a live device, the verdict is ok and carries the quiet note', () => {
    const verdict = judgeReading(quietReading(min(22), { seenAgoMs: 0 }), now, limits);
    assert.equal(verdict.ok, true);
    assert.match((verdict as { quiet?: string }).quiet ?? '', /^quiet: unchanged for 22 min/);
  });

  test('given an offline device, the verdict is Offline (the loop goes safe)', () => {
    const verdict = judgeReading(quietReading(0, { offlineAgoMs: 0 }), now, limits);
    assert.equal(verdict.ok, false);
    assert.equal((verdict as { reason: string }).reason, 'Offline');
  });

  test('given a quiet implausible value, the verdict is still Implausible', () => {
    const reading = { ...quietReading(min(22), { seenAgoMs: 0 }), value: 99 };
    assert.equal((judgeReading(reading, now, limits) as { reason: string }).reason, 'Implausible');
  });
});

describe('freshnessChangeAtMs: when the loop must wake because the verdict may change by time alone', () => {
  const table: [given: string, reading: Reading, expectedMs: number | undefined][] = [
    ['no liveness: when it goes stale', quietReading(s(30)), now - s(30) + STALE_MS + 1],
    [
      'liveness, young value: when it passes the stale limit',
      quietReading(s(30), { seenAgoMs: 0 }),
      now - s(30) + STALE_MS + 1,
    ],
    [
      'quiet, device seen now: when its last sighting goes stale',
      quietReading(min(22), { seenAgoMs: 0 }),
      now + STALE_MS + 1,
    ],
    [
      'quiet, maxQuiet nearer than the sighting limit',
      quietReading(min(59), { seenAgoMs: 0 }),
      now + min(1) + 1,
    ],
    ['not fresh: none', quietReading(0, { offlineAgoMs: 0 }), undefined],
  ];
  for (const [given, reading, expectedMs] of table) {
    test(given, () => assert.equal(freshnessChangeAtMs(reading, now, STALE_MS), expectedMs));
  }
});
