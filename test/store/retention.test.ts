import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import type Database from 'better-sqlite3';
import { capEvents, MAX_EVENT_ROWS, pruneHistory } from '../../src/store/retention.js';
import { type Sample, StateStore } from '../../src/store/state-store.js';
import { tempStoreFile } from '../support/store.js';

const DAY_MS = 86_400_000;
/** Midnight UTC: retention limits move at whole UTC days. */
const T0 = Date.UTC(2026, 0, 1);

let db: Database.Database;
let state: StateStore;
beforeEach((t) => {
  db = tempStoreFile(t, () => T0).db;
  state = new StateStore(db);
});

/** A reading whose values tell its time: measured 20 + (minute of the day)/1000, output 0.5. */
function reading(atMs: number): Sample {
  const minute = Math.floor((atMs % DAY_MS) / 60_000);
  return { atMs, setpoint: 20, measured: 20 + minute / 1000, output: 0.5, action: 'heating' };
}

/** Readings every 10 s from `fromMs` to `untilMs`, flushed every 300 s as the daemon does. */
function record(loop: string, fromMs: number, untilMs: number, make = reading): void {
  for (let t = fromMs; t < untilMs; t += 10_000) {
    state.addSample(loop, make(t));
    if ((t - fromMs) % 300_000 === 290_000) state.flush();
  }
  state.flush();
}

function event(atMs: number): void {
  db.prepare("INSERT INTO events (at_ms, loop, kind, message) VALUES (?, 'room', 'actuator', 'm')").run(atMs);
}

describe('pruneHistory', () => {
  test('given 10 days of readings every 10 s, when pruned, then the last 7 days stay readings and the older ones become 5-minute averages', () => {
    record('room', T0, T0 + 10 * DAY_MS);
    const nowMs = T0 + 10 * DAY_MS + 3_600_000;
    const result = pruneHistory(db, nowMs);

    const history = state.history('room', 0);
    const readings = history.filter((s) => s.resolutionS === 0);
    const buckets = history.filter((s) => s.resolutionS === 300);
    // The limit, now − 7 days, rounded down to midnight: day 3 00:00.
    assert.equal(readings[0]?.atMs, T0 + 3 * DAY_MS);
    assert.equal(readings.length, 7 * 8640);
    assert.equal(buckets.length, 3 * 288);
    assert.equal(result.readingsDownsampled, 3 * 8640);
    assert.equal(result.bucketsWritten, 3 * 288);
    // Bucket of 00:05–00:10 on day 1: readings of minutes 5..9 → measured 20.005..20.009.
    assert.deepEqual(
      buckets.find((b) => b.atMs === T0 + DAY_MS + 300_000),
      {
        atMs: T0 + DAY_MS + 300_000,
        setpoint: 20,
        measured: 20.007,
        output: 0.5,
        action: 'heating',
        resolutionS: 300,
      },
    );
  });

  test('given one bucket of readings, when pruned, then its average ignores missing readings and takes the most frequent action', () => {
    const samples: Sample[] = [
      { atMs: T0, setpoint: 20, measured: 19, output: 1, action: 'heating' },
      { atMs: T0 + 10_000, setpoint: 20, measured: undefined, output: 0, action: 'idle' },
      { atMs: T0 + 20_000, setpoint: 22, measured: 20, output: 0.5, action: 'heating' },
      { atMs: T0 + 30_000, setpoint: 22, measured: 21, output: 0.5, action: 'idle' },
      { atMs: T0 + 40_000, setpoint: 22, measured: 22, output: 0.5, action: 'heating' },
    ];
    for (const s of samples) state.addSample('room', s);
    state.flush();
    pruneHistory(db, T0 + 8 * DAY_MS);
    assert.deepEqual(state.history('room', 0), [
      { atMs: T0, setpoint: 21.2, measured: 20.5, output: 0.5, action: 'heating', resolutionS: 300 },
    ]);
  });

  test('given equally frequent actions in a bucket, then the first seen wins', () => {
    state.addSample('room', { atMs: T0, setpoint: 20, measured: 20, output: 0, action: 'idle' });
    state.addSample('room', { atMs: T0 + 10_000, setpoint: 20, measured: 20, output: 1, action: 'heating' });
    state.flush();
    pruneHistory(db, T0 + 8 * DAY_MS);
    assert.equal(state.history('room', 0)[0]?.action, 'idle');
  });

  test('given a samples row straddling the limit, when pruned, then its older readings are averaged and its newer ones kept', () => {
    // One row from day 0 23:58 to day 1 00:02 (the limit on day 8 is day 1 00:00).
    record('room', T0 + DAY_MS - 120_000, T0 + DAY_MS + 120_000);
    pruneHistory(db, T0 + 8 * DAY_MS + 60_000);
    const history = state.history('room', 0);
    assert.deepEqual(
      history.filter((s) => s.resolutionS === 300).map((s) => s.atMs),
      [T0 + DAY_MS - 300_000],
    );
    assert.deepEqual(
      history.filter((s) => s.resolutionS === 0).map((s) => s.atMs),
      Array.from({ length: 12 }, (_, i) => T0 + DAY_MS + i * 10_000),
    );
  });

  test('given averages older than 365 days and events older than 90 days, when pruned, then they are deleted and newer ones kept', () => {
    record('room', T0, T0 + 2 * DAY_MS);
    pruneHistory(db, T0 + 10 * DAY_MS); // both days become averages
    event(T0);
    event(T0 + 2 * DAY_MS);
    const nowMs = T0 + 366 * DAY_MS + 3_600_000;
    const result = pruneHistory(db, nowMs);
    const days = new Set(state.history('room', 0).map((s) => Math.floor((s.atMs - T0) / DAY_MS)));
    assert.deepEqual([...days], [1], 'day 0 is more than 365 days old (limit: day 1 00:00), day 1 is not');
    assert.equal(result.bucketsDeleted, 288);
    assert.deepEqual(
      db.prepare<[], { at_ms: number }>('SELECT at_ms FROM events').all(),
      [],
      'both events are older than 90 days',
    );
    assert.equal(result.eventsDeleted, 2);
  });

  test('given events over 100 days, when pruned, then those of the last 90 days (from midnight) stay', () => {
    for (let day = 0; day < 100; day++) event(T0 + day * DAY_MS + 3_600_000);
    pruneHistory(db, T0 + 100 * DAY_MS);
    const left = db.prepare<[], { at_ms: number }>('SELECT at_ms FROM events ORDER BY at_ms').all();
    assert.equal(left.length, 90);
    assert.equal(left[0]?.at_ms, T0 + 10 * DAY_MS + 3_600_000);
  });

  test('given downsampleS 0, when pruned, then readings older than rawRetentionS are deleted, not averaged', () => {
    record('room', T0, T0 + 2 * DAY_MS);
    const result = pruneHistory(db, T0 + 2 * DAY_MS, { rawRetentionS: DAY_MS / 1000, downsampleS: 0 });
    const history = state.history('room', 0);
    assert.equal(history.length, 8640);
    assert.ok(history.every((s) => s.resolutionS === 0 && s.atMs >= T0 + DAY_MS));
    assert.equal(result.bucketsWritten, 0);
  });

  test('given two loops, when pruned, then each loop gets its own averages', () => {
    record('room', T0, T0 + DAY_MS);
    record('cellar', T0, T0 + DAY_MS, (atMs) => ({ ...reading(atMs), setpoint: 12 }));
    pruneHistory(db, T0 + 8 * DAY_MS);
    const room = state.history('room', 0);
    const cellar = state.history('cellar', 0);
    assert.equal(room.length, 288);
    assert.equal(cellar.length, 288);
    assert.ok(room.every((s) => s.setpoint === 20) && cellar.every((s) => s.setpoint === 12));
  });

  test('given a pruned store, when pruned again later the same day, then nothing changes and nothing is written', () => {
    record('room', T0, T0 + 9 * DAY_MS);
    event(T0);
    pruneHistory(db, T0 + 9 * DAY_MS + 3_600_000);
    const before = state.history('room', 0);
    const changesBefore = db.prepare<[], { n: number }>('SELECT total_changes() AS n').get()?.n;
    const again = pruneHistory(db, T0 + 9 * DAY_MS + 23 * 3_600_000);
    assert.deepEqual(again, {
      readingsDownsampled: 0,
      bucketsWritten: 0,
      bucketsDeleted: 0,
      eventsDeleted: 0,
    });
    assert.deepEqual(state.history('room', 0), before);
    assert.equal(db.prepare<[], { n: number }>('SELECT total_changes() AS n').get()?.n, changesBefore);
  });
});

describe('events cap', () => {
  test('given more events than the cap, all recent, when pruned, then the oldest go first and the cap stays', () => {
    const now = T0 + 10 * DAY_MS;
    for (let i = 0; i < 130; i++) {
      state.addEvent({ atMs: now - 1_000 + i, kind: 'command-rejected', message: `flood ${i}` });
    }
    state.flush();
    const result = pruneHistory(db, now, {}, 100);
    assert.equal(result.eventsDeleted, 30);
    const rows = db.prepare('SELECT message FROM events ORDER BY id').all() as Array<{ message: string }>;
    assert.equal(rows.length, 100);
    assert.equal(rows[0]?.message, 'flood 30', 'the oldest went first');
    assert.equal(rows.at(-1)?.message, 'flood 129');
  });

  test('the default cap is MAX_EVENT_ROWS (100,000), and a table under it is left alone', () => {
    assert.equal(MAX_EVENT_ROWS, 100_000);
    state.addEvent({ atMs: T0, kind: 'x', message: 'one' });
    state.flush();
    assert.equal(capEvents(db), 0);
    assert.equal(capEvents(db, 1), 0);
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM events').get(), { n: 1 });
  });
});
