/**
 * Recorded sensors' values in the store (loops.<id>.record): the packed format, the
 * flush with the loop's state, the migration that adds the table to an existing database, and
 * retention with the loop's history's limits.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openStore } from '../../src/store/database.js';
import { LATEST_VERSION, migrate, schemaVersion } from '../../src/store/migrations.js';
import { decodeRecorded, encodeRecorded, type RecordedPoint } from '../../src/store/recorded-codec.js';
import { readRecorded } from '../../src/store/recorded-store.js';
import { pruneHistory } from '../../src/store/retention.js';
import { StateStore } from '../../src/store/state-store.js';
import { silentLogger } from '../support/logger.js';
import { tempStoreFile } from '../support/store.js';
import { tempDir } from '../support/tmp.js';

const DAY_MS = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
const ALL = { fromMs: 0, untilMs: Number.MAX_SAFE_INTEGER };

describe('recorded points: the packed format', () => {
  const cases: { name: string; points: RecordedPoint[]; decoded?: RecordedPoint[] }[] = [
    {
      name: 'a steady minute',
      points: [0, 1, 2, 3].map((i) => ({ atMs: T0 + i * 60_000, value: 1.05 - i / 1e4 })),
    },
    {
      name: 'gaps between values',
      points: [
        { atMs: T0, value: 4.12 },
        { atMs: T0 + 60_000, value: null },
        { atMs: T0 + 120_000, value: -3.5 },
      ],
    },
    {
      name: 'NaN, ±Infinity and a value too large for the varints become gaps',
      points: [
        { atMs: T0, value: Number.NaN },
        { atMs: T0 + 1, value: Number.POSITIVE_INFINITY },
        { atMs: T0 + 2, value: 1e300 },
        { atMs: T0 + 3, value: 7 },
      ],
      decoded: [
        { atMs: T0, value: null },
        { atMs: T0 + 1, value: null },
        { atMs: T0 + 2, value: null },
        { atMs: T0 + 3, value: 7 },
      ],
    },
  ];
  for (const { name, points, decoded } of cases) {
    test(`given ${name}, then decoding gives them back`, () => {
      const got = decodeRecorded(encodeRecorded(points));
      const want = decoded ?? points;
      assert.equal(got.length, want.length);
      got.forEach((point, i) => {
        assert.equal(point.atMs, want[i]!.atMs);
        if (want[i]!.value === null) assert.equal(point.value, null);
        else
          assert.ok(Math.abs(point.value! - want[i]!.value!) < 1e-9, `${point.value} vs ${want[i]!.value}`);
      });
    });
  }

  test('a steady series costs about 4 bytes a point', () => {
    const points = Array.from({ length: 48 }, (_, i) => ({ atMs: T0 + i * 60_000, value: 1.05 - i / 1e4 }));
    assert.ok(encodeRecorded(points).length <= 48 * 4 + 8);
  });
});

describe('recorded points: written with the flush', () => {
  test('given points added, then they are pending until the flush writes them, once', (t) => {
    const { db } = tempStoreFile(t, () => T0);
    const state = new StateStore(db);
    state.addRecorded('room', 'outdoor', { atMs: T0, value: 3 });
    state.addRecorded('room', 'outdoor', { atMs: T0 + 60_000, value: null });
    state.addRecorded('room', 'gravity', { atMs: T0 + 30_000, value: 1.05 });
    assert.ok(state.dirty);
    assert.deepEqual(readRecorded(db, 'room', ALL), []);
    assert.deepEqual(readRecorded(db, 'room', ALL, state.pendingRecorded('room')), [
      {
        sensor: 'outdoor',
        points: [
          { atMs: T0, value: 3 },
          { atMs: T0 + 60_000, value: null },
        ],
      },
      { sensor: 'gravity', points: [{ atMs: T0 + 30_000, value: 1.05 }] },
    ]);
    assert.equal(state.flush(), 2);
    assert.deepEqual(state.pendingRecorded('room'), []);
    assert.deepEqual(readRecorded(db, 'room', { fromMs: T0 + 1, untilMs: T0 + 60_000 }), [
      { sensor: 'outdoor', points: [{ atMs: T0 + 60_000, value: null }] },
      { sensor: 'gravity', points: [{ atMs: T0 + 30_000, value: 1.05 }] },
    ]);
    assert.deepEqual(readRecorded(db, 'other', ALL), []);
  });

  test('given a flush that fails, then the points stay pending and the next flush writes them', (t) => {
    const { db } = tempStoreFile(t, () => T0);
    const state = new StateStore(db);
    state.addRecorded('room', 'outdoor', { atMs: T0, value: 3 });
    db.exec(
      'CREATE TRIGGER refuse BEFORE INSERT ON recorded_samples BEGIN SELECT RAISE(ABORT, "disk full"); END',
    );
    assert.throws(() => state.flush(), /disk full/);
    state.addRecorded('room', 'outdoor', { atMs: T0 + 60_000, value: 4 });
    db.exec('DROP TRIGGER refuse');
    state.flush();
    assert.deepEqual(
      readRecorded(db, 'room', ALL)[0]?.points.map((p) => p.value),
      [3, 4],
    );
  });
});

describe('migration 8: recorded_samples in an existing database', () => {
  test('given a file made by the schema before (version 7) with history, when the daemon opens it, then it has the table and keeps its rows', (t) => {
    const dir = tempDir(t, 'homeostat-recorded-');
    const file = path.join(dir, 'homeostat.db');
    const old = new Database(file);
    migrate(old, 7);
    old
      .prepare('INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, 0, ?)')
      .run('room', T0, T0, Buffer.from([1]));
    old.close();

    const { db } = openStore({ path: file, logger: silentLogger, nowMs: () => T0 });
    t.after(() => db.close());
    assert.equal(schemaVersion(db), LATEST_VERSION, 'migrated from 7 through 8 to the latest');
    const columns = db
      .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('recorded_samples')")
      .all()
      .map((c) => c.name);
    assert.deepEqual(columns, ['id', 'loop', 'sensor', 'at_ms', 'until_ms', 'resolution_s', 'data']);
    assert.equal((db.prepare('SELECT count(*) AS n FROM samples').get() as { n: number }).n, 1);
    const state = new StateStore(db);
    state.addRecorded('room', 'outdoor', { atMs: T0, value: 2 });
    state.flush();
    assert.deepEqual(readRecorded(db, 'room', ALL), [
      { sensor: 'outdoor', points: [{ atMs: T0, value: 2 }] },
    ]);
  });
});

describe('recorded points: retention like the loop history', () => {
  test('given 10 days of a point a minute with a gap hour, when pruned, then 7 days stay points, older ones 5-minute means, the gap a gap', (t) => {
    const { db } = tempStoreFile(t, () => T0);
    const state = new StateStore(db);
    const gapFromMs = T0 + DAY_MS + 3_600_000;
    for (let atMs = T0; atMs < T0 + 10 * DAY_MS; atMs += 60_000) {
      const inGap = atMs >= gapFromMs && atMs < gapFromMs + 3_600_000;
      state.addRecorded('room', 'outdoor', { atMs, value: inGap ? null : (atMs % 300_000) / 60_000 });
      if (atMs % (10 * 60_000) === 0) state.flush();
    }
    state.flush();
    pruneHistory(db, T0 + 10 * DAY_MS + 3_600_000);
    const [series] = readRecorded(db, 'room', ALL);
    const points = series!.points;
    const raw = points.filter((p) => p.atMs >= T0 + 3 * DAY_MS);
    const old = points.filter((p) => p.atMs < T0 + 3 * DAY_MS);
    assert.equal(raw.length, 7 * 1440);
    assert.equal(old.length, 3 * 288, 'one mean per 5 minutes');
    // Minutes 0..4 of each bucket read 0,1,2,3,4: their mean is 2.
    assert.ok(old.filter((p) => p.value !== null).every((p) => p.value === 2));
    const gap = old.filter((p) => p.value === null).map((p) => p.atMs);
    assert.equal(gap.length, 12, 'the gap hour: 12 buckets without a value');
    assert.equal(gap[0], gapFromMs);

    pruneHistory(db, T0 + 400 * DAY_MS, { downsampledRetentionS: 365 * 86_400 });
    assert.deepEqual(readRecorded(db, 'room', ALL), [], 'buckets past their retention deleted');
  });
});
