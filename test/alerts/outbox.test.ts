/**
 * The alert outbox on a real SQLite file: what is added survives a reopen (a kill, a restart)
 * until it is delivered, in order per channel; it is bounded, dropping the oldest with a count;
 * and a database that refuses writes never holds an alert back.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import type { AlertNotice } from '../../src/alerts/notice.js';
import { AlertOutbox } from '../../src/alerts/outbox.js';
import { AlertOutboxTable } from '../../src/store/alert-outbox.js';
import { closeStore, openStore } from '../../src/store/database.js';
import { recordingLogger, silentLogger } from '../support/logger.js';
import { tempDir } from '../support/tmp.js';

function notice(n: number): AlertNotice {
  return {
    id: `n/room/faulted/${n}/raised`,
    node: 'n',
    loop: 'room',
    kind: 'faulted',
    phase: 'raised',
    severity: 'critical',
    title: `Room: sensor fault ${n}`,
    message: 'stale',
    atMs: n,
  };
}

function open(dbPath: string) {
  return openStore({ path: dbPath, logger: silentLogger, nowMs: () => 0 }).db;
}

test('given alerts added and one delivered, when the file is opened again, then the others load in order per channel', (t) => {
  const dbPath = path.join(tempDir(t), 'h.db');
  const db = open(dbPath);
  const outbox = new AlertOutbox(new AlertOutboxTable(() => db), 100, silentLogger);
  for (const n of [1, 2, 3]) outbox.add('phone', notice(n), 1_000 + n);
  outbox.add('hook', notice(4), 2_000);
  outbox.delivered(outbox.head('phone')!, 5_000);
  closeStore(db);

  const reopened = open(dbPath);
  t.after(() => closeStore(reopened));
  const after = new AlertOutbox(new AlertOutboxTable(() => reopened), 100, silentLogger);
  assert.equal(after.load(['phone', 'hook']), 3);
  assert.deepEqual(after.backlog(), { phone: 2, hook: 1 });
  assert.equal(after.head('phone')?.notice.title, 'Room: sensor fault 2');
  assert.equal(after.head('phone')?.createdAtMs, 1_002);
  const delivered = new AlertOutboxTable(() => reopened)
    .recent(10)
    .filter((row) => row.deliveredAtMs !== null);
  assert.deepEqual(
    delivered.map((row) => [row.channel, row.deliveredAtMs, row.attempts]),
    [['phone', 5_000, 1]],
  );
});

test('a failed attempt is counted and its error kept across a reopen', (t) => {
  const dbPath = path.join(tempDir(t), 'h.db');
  const db = open(dbPath);
  const outbox = new AlertOutbox(new AlertOutboxTable(() => db), 100, silentLogger);
  outbox.add('phone', notice(1), 1_000);
  outbox.failed(outbox.head('phone')!, 'ntfy answered HTTP 503');
  outbox.failed(outbox.head('phone')!, 'ntfy: no answer in time');
  closeStore(db);
  const reopened = open(dbPath);
  t.after(() => closeStore(reopened));
  const after = new AlertOutbox(new AlertOutboxTable(() => reopened), 100, silentLogger);
  after.load(['phone']);
  assert.equal(after.head('phone')?.attempts, 2);
  assert.equal(after.head('phone')?.lastError, 'ntfy: no answer in time');
});

test('given a limit of 10, when 13 are added, then the oldest 3 are dropped, counted in the database, and logged', (t) => {
  const db = open(path.join(tempDir(t), 'h.db'));
  t.after(() => closeStore(db));
  const log = recordingLogger();
  const table = new AlertOutboxTable(() => db);
  const outbox = new AlertOutbox(table, 10, log.logger);
  for (let n = 1; n <= 13; n++) outbox.add('phone', notice(n), n);
  assert.deepEqual(outbox.backlog(), { phone: 10 });
  assert.equal(outbox.head('phone')?.notice.title, 'Room: sensor fault 4');
  assert.deepEqual(table.dropped(), { phone: 3 });
  assert.deepEqual(outbox.droppedSinceStart(), { phone: 3 });
  assert.equal(table.undelivered().length, 10, 'the dropped rows are gone from the file too');
  assert.ok(log.messages().some((m) => /outbox full \(10\), the oldest 1 dropped/.test(m)));
});

test('rows of a channel no longer configured, or not an alert, are dropped at load and counted', (t) => {
  const db = open(path.join(tempDir(t), 'h.db'));
  t.after(() => closeStore(db));
  const table = new AlertOutboxTable(() => db);
  table.insert('phone', JSON.stringify(notice(1)), 1);
  table.insert('gone', JSON.stringify(notice(2)), 2);
  table.insert('phone', '{"not":"an alert"}', 3);
  const outbox = new AlertOutbox(table, 100, silentLogger);
  assert.equal(outbox.load(['phone']), 1);
  assert.deepEqual(table.dropped(), { gone: 1, phone: 1 });
  assert.equal(table.undelivered().length, 1);
});

test('given a database that refuses writes, alerts are kept in memory, delivered from there, and written once it takes them', (t) => {
  const db = open(path.join(tempDir(t), 'h.db'));
  t.after(() => closeStore(db));
  const table = new AlertOutboxTable(() => db);
  let refusing = true;
  const flaky = new Proxy(table, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (refusing) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
        return value.apply(target, args);
      };
    },
  });
  const log = recordingLogger();
  const outbox = new AlertOutbox(flaky, 100, log.logger);
  outbox.add('phone', notice(1), 1);
  outbox.add('phone', notice(2), 2);
  assert.equal(outbox.head('phone')?.rowId, undefined, 'not written');
  assert.equal(outbox.head('phone')?.notice.title, 'Room: sensor fault 1', 'but there to deliver');
  assert.equal(log.messages().filter((m) => /refused a write/.test(m)).length, 1, 'logged once per streak');

  refusing = false;
  outbox.persistPending();
  assert.deepEqual(
    table.undelivered().map((row) => JSON.parse(row.notice).title),
    ['Room: sensor fault 1', 'Room: sensor fault 2'],
  );
  assert.ok(log.messages().some((m) => /takes alerts again/.test(m)));
});

test('the recent deliveries are newest first, delivered or not, each with its attempts, error and delivery time', (t) => {
  const db = open(path.join(tempDir(t), 'h.db'));
  t.after(() => closeStore(db));
  const outbox = new AlertOutbox(new AlertOutboxTable(() => db), 100, silentLogger);
  outbox.add('phone', notice(1), 1_000);
  outbox.add('hook', notice(1), 1_000);
  outbox.add('phone', notice(2), 2_000);
  outbox.delivered(outbox.head('hook')!, 1_500);
  outbox.failed(outbox.head('phone')!, 'ntfy answered HTTP 503');
  const { deliveries, unreadable } = outbox.recent(10);
  assert.equal(unreadable, undefined);
  assert.deepEqual(
    deliveries.map((d) => [d.channel, d.notice.atMs, d.attempts, d.lastError, d.deliveredAtMs]),
    [
      ['phone', 2, 0, undefined, undefined],
      ['hook', 1, 1, undefined, 1_500],
      ['phone', 1, 1, 'ntfy answered HTTP 503', undefined],
    ],
  );
  assert.deepEqual(
    outbox.recent(2).deliveries.map((d) => d.channel),
    ['phone', 'hook'],
    'the newest `limit` only',
  );
});

test('given a database that refuses writes and reads, the recent deliveries still list what waits in memory, and say why the rest is missing', (t) => {
  const db = open(path.join(tempDir(t), 'h.db'));
  t.after(() => closeStore(db));
  const table = new AlertOutboxTable(() => db);
  const outbox = new AlertOutbox(table, 100, silentLogger);
  outbox.add('phone', notice(1), 1_000);
  outbox.delivered(outbox.head('phone')!, 1_100);
  db.close(); // every call on it throws from now on: "The database connection is not open"
  outbox.add('phone', notice(2), 2_000);
  outbox.failed(outbox.head('phone')!, 'ntfy: no answer in 15 s');
  const { deliveries, unreadable } = outbox.recent(10);
  assert.deepEqual(
    deliveries.map((d) => [d.notice.atMs, d.attempts, d.lastError, d.deliveredAtMs]),
    [[2, 1, 'ntfy: no answer in 15 s', undefined]],
    'the undelivered one from memory; the delivered one was only in the database',
  );
  assert.match(unreadable ?? '', /not open/);
});
