import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  addDays,
  epochOfLocal,
  isValidTimeZone,
  localDateTime,
  weekdayOf,
} from '../../../src/core/schedule/local-time.js';

/** An instant given in UTC (month 1..12). */
const utc = (y: number, m: number, d: number, h: number, mi = 0, sec = 0) =>
  Date.UTC(y, m - 1, d, h, mi, sec);
const wall = (y: number, m: number, d: number, hour: number, minute = 0) => ({
  year: y,
  month: m,
  day: d,
  hour,
  minute,
});

describe('local time of an instant (Intl, IANA zone)', () => {
  const cases = [
    // zone, instant, expected local wall time, weekday
    ['Europe/Berlin', utc(2026, 3, 29, 0, 59, 59), [2026, 3, 29, 1, 59, 59], 'sun', 'last second of CET'],
    [
      'Europe/Berlin',
      utc(2026, 3, 29, 1, 0, 0),
      [2026, 3, 29, 3, 0, 0],
      'sun',
      'spring-forward: 02:00 never shows',
    ],
    ['Europe/Berlin', utc(2026, 10, 25, 0, 30), [2026, 10, 25, 2, 30, 0], 'sun', '02:30 CEST (first)'],
    ['Europe/Berlin', utc(2026, 10, 25, 1, 30), [2026, 10, 25, 2, 30, 0], 'sun', '02:30 CET (repeated)'],
    [
      'America/New_York',
      utc(2026, 3, 8, 7, 0),
      [2026, 3, 8, 3, 0, 0],
      'sun',
      'spring-forward: 02:00 EST is 03:00 EDT',
    ],
    ['America/New_York', utc(2026, 11, 1, 5, 30), [2026, 11, 1, 1, 30, 0], 'sun', '01:30 EDT (first)'],
    ['America/New_York', utc(2026, 11, 1, 6, 30), [2026, 11, 1, 1, 30, 0], 'sun', '01:30 EST (repeated)'],
    [
      'America/New_York',
      utc(2026, 1, 1, 4, 59),
      [2025, 12, 31, 23, 59, 0],
      'wed',
      'year rolls back across UTC',
    ],
    ['UTC', utc(2026, 6, 1, 0, 0), [2026, 6, 1, 0, 0, 0], 'mon', 'midnight is 00, not 24'],
  ] as const;
  for (const [zone, instant, [year, month, day, hour, minute, second], weekday, why] of cases) {
    test(`${zone} ${new Date(instant).toISOString()}: ${why}`, () => {
      assert.deepEqual(localDateTime(instant, zone), { year, month, day, hour, minute, second, weekday });
    });
  }
});

describe('the instant of a local wall time, across DST', () => {
  const cases = [
    ['Europe/Berlin', wall(2026, 3, 29, 1, 30), utc(2026, 3, 29, 0, 30), 'before the gap: CET'],
    [
      'Europe/Berlin',
      wall(2026, 3, 29, 2, 0),
      utc(2026, 3, 29, 1, 0),
      'skipped 02:00: the transition instant',
    ],
    [
      'Europe/Berlin',
      wall(2026, 3, 29, 2, 30),
      utc(2026, 3, 29, 1, 0),
      'skipped 02:30: the transition instant',
    ],
    ['Europe/Berlin', wall(2026, 3, 29, 3, 0), utc(2026, 3, 29, 1, 0), '03:00 CEST is the same instant'],
    ['Europe/Berlin', wall(2026, 3, 29, 3, 30), utc(2026, 3, 29, 1, 30), 'after the gap: CEST'],
    [
      'Europe/Berlin',
      wall(2026, 10, 25, 2, 30),
      utc(2026, 10, 25, 0, 30),
      'repeated 02:30: the first occurrence',
    ],
    ['Europe/Berlin', wall(2026, 10, 25, 3, 0), utc(2026, 10, 25, 2, 0), 'after the repeat: CET'],
    [
      'America/New_York',
      wall(2026, 3, 8, 2, 30),
      utc(2026, 3, 8, 7, 0),
      'skipped 02:30: the transition instant',
    ],
    ['America/New_York', wall(2026, 3, 8, 1, 59), utc(2026, 3, 8, 6, 59), 'before the gap: EST'],
    [
      'America/New_York',
      wall(2026, 11, 1, 1, 30),
      utc(2026, 11, 1, 5, 30),
      'repeated 01:30: the first occurrence',
    ],
    ['America/New_York', wall(2026, 11, 1, 2, 0), utc(2026, 11, 1, 7, 0), 'after the repeat: EST'],
    ['UTC', wall(2026, 7, 1, 12, 0), utc(2026, 7, 1, 12, 0), 'no offset'],
  ] as const;
  for (const [zone, local, expected, why] of cases) {
    test(`${zone} ${local.year}-${local.month}-${local.day} ${local.hour}:${local.minute}: ${why}`, () => {
      assert.equal(new Date(epochOfLocal(local, zone)!).toISOString(), new Date(expected).toISOString());
    });
  }

  test('round trip: every whole hour of the Berlin transition days maps back to itself (except the gap)', () => {
    for (const day of [29, 30]) {
      for (let hour = 0; hour < 24; hour++) {
        const t = epochOfLocal(wall(2026, 3, day, hour), 'Europe/Berlin')!;
        const back = localDateTime(t, 'Europe/Berlin')!;
        const expectedHour = day === 29 && hour === 2 ? 3 : hour;
        assert.equal(back.hour, expectedHour, `${day}.03. ${hour}:00`);
      }
    }
  });
});

describe('zones and calendar arithmetic', () => {
  test('an unknown or empty zone is invalid and gives no local time, never a throw', () => {
    assert.equal(isValidTimeZone('Europe/Berlin'), true);
    assert.equal(isValidTimeZone('UTC'), true);
    assert.equal(isValidTimeZone('Mars/Olympus_Mons'), false);
    assert.equal(isValidTimeZone(''), false);
    assert.equal(localDateTime(utc(2026, 1, 1, 0), 'Mars/Olympus_Mons'), undefined);
    assert.equal(epochOfLocal(wall(2026, 1, 1, 0), 'Mars/Olympus_Mons'), undefined);
  });

  test('instants that are not usable (NaN, ±Infinity, beyond Date, before 1970) give no local time', () => {
    for (const t of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 9e15, -1]) {
      assert.equal(localDateTime(t, 'UTC'), undefined, String(t));
    }
  });

  test('weekdays and day arithmetic roll over months, years and leap days', () => {
    assert.equal(weekdayOf({ year: 2026, month: 3, day: 29 }), 'sun');
    assert.equal(weekdayOf({ year: 2026, month: 3, day: 30 }), 'mon');
    assert.deepEqual(addDays({ year: 2026, month: 3, day: 1 }, -1), { year: 2026, month: 2, day: 28 });
    assert.deepEqual(addDays({ year: 2028, month: 2, day: 28 }, 1), { year: 2028, month: 2, day: 29 });
    assert.deepEqual(addDays({ year: 2026, month: 12, day: 31 }, 1), { year: 2027, month: 1, day: 1 });
  });
});
