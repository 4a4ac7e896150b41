import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { WeeklySchedule } from '../../../src/core/schedule/types.js';
import { nextSchedulePoints, parseAt, scheduleInForce } from '../../../src/core/schedule/weekly.js';
import { BERLIN, home, june, presets, utc } from './fixtures.js';

const NEW_YORK = 'America/New_York';

describe('the entry in force (Europe/Berlin, week of Monday 2026-06-01)', () => {
  const cases = [
    // when (local), entry, setpoint, preset, why
    [june(1, 6, 0), 3, 17, 'eco', 'Monday 06:00 still uses Sunday 22:00 (across the week boundary)'],
    [june(1, 7, 0), 0, 21.5, 'comfort', 'a point is in force from its own instant'],
    [june(1, 22, 29), 0, 21.5, 'comfort', 'until the next point'],
    [june(1, 22, 30), 1, 18, null, 'a plain setpoint: no preset'],
    [june(6, 8, 59), 1, 18, null, 'Saturday morning: still Friday 22:30'],
    [june(6, 9, 0), 2, 21, null, 'weekend entry'],
    [june(7, 21, 59), 2, 21, null, 'Sunday evening'],
    [june(7, 22, 0), 3, 17, 'eco', 'Sunday 22:00 names a preset'],
  ] as const;
  for (const [nowMs, entryIndex, setpoint, preset, why] of cases) {
    test(why, () => {
      const point = scheduleInForce(home, presets, BERLIN, nowMs)!;
      assert.equal(point.entryIndex, entryIndex);
      assert.equal(point.setpoint, setpoint);
      assert.equal(point.preset, preset);
    });
  }

  test('an entry naming a preset takes its setpoint and mode', () => {
    assert.equal(scheduleInForce(home, presets, BERLIN, june(7, 23))!.mode, 'heat');
    assert.equal(scheduleInForce(home, presets, BERLIN, june(1, 8))!.mode, undefined);
  });

  test('one entry a week: a week before it, its previous occurrence is in force', () => {
    const once: WeeklySchedule = [{ days: ['wed'], at: '12:00', setpoint: 20 }];
    assert.equal(scheduleInForce(once, presets, BERLIN, june(3, 11, 59))!.atMs, june(3, 12) - 7 * 86_400_000);
  });

  test('an entry that does not resolve (unknown preset) is ignored: the one before stays in force', () => {
    const broken: WeeklySchedule = [...home, { days: ['mon'], at: '12:00', preset: 'nope' }];
    assert.equal(scheduleInForce(broken, presets, BERLIN, june(1, 13))!.entryIndex, 0);
  });

  test('no entries, or an unknown zone: nothing in force', () => {
    assert.equal(scheduleInForce([], presets, BERLIN, june(1, 12)), undefined);
    assert.equal(scheduleInForce(home, presets, 'Nowhere/Atlantis', june(1, 12)), undefined);
  });

  test('the next points, soonest first', () => {
    const next = nextSchedulePoints(home, presets, BERLIN, june(1, 6), 3);
    assert.deepEqual(
      next.map((p) => [p.atMs, p.entryIndex]),
      [
        [june(1, 7), 0],
        [june(1, 22, 30), 1],
        [june(2, 7), 0],
      ],
    );
  });

  test('a point exactly at now is in force, not next', () => {
    assert.equal(nextSchedulePoints(home, presets, BERLIN, june(1, 7), 1)[0]!.atMs, june(1, 22, 30));
  });
});

describe('schedule points across daylight-saving changes', () => {
  const night: WeeklySchedule = [
    { days: ['sun'], at: '01:00', setpoint: 15 }, // 0
    { days: ['sun'], at: '02:30', setpoint: 19 }, // 1
    { days: ['sun'], at: '12:00', setpoint: 21 }, // 2
  ];
  const pointsOfEntry = (zone: string, fromMs: number, entryIndex: number) =>
    nextSchedulePoints(night, presets, zone, fromMs, 10)
      .filter((p) => p.entryIndex === entryIndex && p.atMs < fromMs + 86_400_000)
      .map((p) => new Date(p.atMs).toISOString());

  test('Berlin spring-forward (2026-03-29): 02:30 fires at the transition instant 03:00 CEST', () => {
    assert.deepEqual(pointsOfEntry(BERLIN, utc(2026, 3, 28, 23), 1), ['2026-03-29T01:00:00.000Z']);
    assert.equal(scheduleInForce(night, presets, BERLIN, utc(2026, 3, 29, 0, 59, 59))!.entryIndex, 0);
    assert.equal(scheduleInForce(night, presets, BERLIN, utc(2026, 3, 29, 1, 0))!.entryIndex, 1);
  });

  test('Berlin fall-back (2026-10-25): 02:30 fires once, at its first occurrence (CEST)', () => {
    assert.deepEqual(pointsOfEntry(BERLIN, utc(2026, 10, 24, 22), 1), ['2026-10-25T00:30:00.000Z']);
    // During the second 02:30–03:00 the same point (the first occurrence) is still the latest one.
    assert.equal(
      scheduleInForce(night, presets, BERLIN, utc(2026, 10, 25, 1, 45))!.atMs,
      utc(2026, 10, 25, 0, 30),
    );
  });

  test('New York spring-forward (2026-03-08): 02:30 fires at 03:00 EDT', () => {
    assert.deepEqual(pointsOfEntry(NEW_YORK, utc(2026, 3, 8, 4), 1), ['2026-03-08T07:00:00.000Z']);
    assert.equal(scheduleInForce(night, presets, NEW_YORK, utc(2026, 3, 8, 6, 59))!.entryIndex, 0);
    assert.equal(scheduleInForce(night, presets, NEW_YORK, utc(2026, 3, 8, 7, 0))!.entryIndex, 1);
  });

  test('New York fall-back (2026-11-01): 01:00 fires once (EDT), not again at 01:00 EST', () => {
    assert.deepEqual(pointsOfEntry(NEW_YORK, utc(2026, 11, 1, 3), 0), ['2026-11-01T05:00:00.000Z']);
    assert.equal(
      scheduleInForce(night, presets, NEW_YORK, utc(2026, 11, 1, 6, 30))!.atMs,
      utc(2026, 11, 1, 5),
    );
  });

  test('a skipped 02:30 landing on an 03:00 entry: one change, the later wall time wins', () => {
    const clash: WeeklySchedule = [
      { days: ['sun'], at: '03:00', setpoint: 16 },
      { days: ['sun'], at: '02:30', setpoint: 19 },
    ];
    const next = nextSchedulePoints(clash, presets, BERLIN, utc(2026, 3, 28, 23), 2);
    assert.equal(next[0]!.atMs, utc(2026, 3, 29, 1));
    assert.equal(next[0]!.setpoint, 16);
    assert.notEqual(next[1]!.atMs, next[0]!.atMs);
  });
});

describe('times of day', () => {
  const cases = [
    ['00:00', 0],
    ['06:30', 390],
    ['23:59', 1439],
    ['24:00', undefined],
    ['6:30', undefined],
    ['12:60', undefined],
    ['noon', undefined],
  ] as const;
  for (const [at, minutes] of cases) {
    test(`"${at}" → ${minutes}`, () => assert.equal(parseAt(at), minutes));
  }
});
