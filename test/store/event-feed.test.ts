/**
 * The live event feed (the HTTP API's Server-Sent Events stream): every event the stores record
 * is told once, when it counts — DesiredStore's after their transaction committed (never a
 * rolled-back one), StateStore's when added (they wait for a flush but happened now) — and a
 * listener that throws never breaks a store operation.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type Database from 'better-sqlite3';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { DesiredStore, type StoredEvent } from '../../src/store/desired-store.js';
import { EventFeed } from '../../src/store/event-feed.js';
import { StateStore } from '../../src/store/state-store.js';
import { StoreSupervisor } from '../../src/store/supervisor.js';
import { recordingLogger, silentLogger } from '../support/logger.js';
import { tempStoreFile } from '../support/store.js';
import { type HasAfter, tempDir } from '../support/tmp.js';

const T0 = 1_000_000;
const ROOM = { room: { setpoint: 20, mode: 'heat' as const, sectionHash: 'room-1' } };

/** A feed with a listener that keeps what it is told. */
function listened(feed = new EventFeed()): { feed: EventFeed; told: StoredEvent[] } {
  const told: StoredEvent[] = [];
  feed.subscribe((event) => told.push(event));
  return { feed, told };
}

/** A DesiredStore on a fresh file with the room loop applied, announcing on a listened feed. */
function desiredOnFile(t: HasAfter) {
  const { db } = tempStoreFile(t, () => T0);
  const { feed, told } = listened();
  const store = new DesiredStore(db, () => T0, { feed });
  store.applyConfig({ text: '# room\n', loops: ROOM });
  told.length = 0;
  return { db, feed, told, store };
}

/** Makes every insert into `table` fail inside its transaction (SQLITE_CONSTRAINT_TRIGGER). */
function refuseInserts(db: Database.Database, table: string): void {
  db.exec(
    `CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
  );
}

const kinds = (events: StoredEvent[]) => events.map((e) => e.kind);

describe('EventFeed', () => {
  test('given two listeners, when an event is announced, then each is told it once', () => {
    const a = listened();
    const b = listened(a.feed);
    a.feed.announce({ atMs: T0, kind: 'k', message: 'm' });
    assert.deepEqual(a.told, [{ atMs: T0, kind: 'k', message: 'm' }]);
    assert.deepEqual(b.told, a.told);
  });

  test('given an unsubscribed listener, then it is told nothing more (unsubscribing twice is harmless)', () => {
    const feed = new EventFeed();
    const told: StoredEvent[] = [];
    const unsubscribe = feed.subscribe((event) => told.push(event));
    feed.announce({ atMs: 1, kind: 'before', message: '' });
    unsubscribe();
    unsubscribe();
    feed.announce({ atMs: 2, kind: 'after', message: '' });
    assert.deepEqual(kinds(told), ['before']);
    assert.equal(feed.listenerCount, 0);
  });

  test('given a listener that throws, then the others are still told and onError gets the error', () => {
    const errors: unknown[] = [];
    const feed = new EventFeed((error) => errors.push(error));
    feed.subscribe(() => {
      throw new Error('broken listener');
    });
    const { told } = listened(feed);
    assert.doesNotThrow(() => feed.announce({ atMs: 1, kind: 'k', message: '' }));
    assert.equal(told.length, 1);
    assert.match(String(errors[0]), /broken listener/);
  });
});

describe('DesiredStore announcing on its feed', () => {
  test('given a loop, when setDesired changes its setpoint, then setpoint-changed is told once, after the commit, as stored', (t) => {
    const { db, feed, told, store } = desiredOnFile(t);
    const seenInListener: Array<{ inTransaction: boolean; setpoint?: number }> = [];
    feed.subscribe(() =>
      seenInListener.push({ inTransaction: db.inTransaction, setpoint: store.desired('room')?.setpoint }),
    );

    store.setDesired('room', { setpoint: 22 }, 'http', 'req-1');

    assert.deepEqual(told, [
      {
        atMs: T0,
        loop: 'room',
        kind: 'setpoint-changed',
        source: 'http',
        message: 'setpoint 20 → 22 (http)',
        data: { from: 20, to: 22, generation: 2, requestId: 'req-1' },
      },
    ]);
    assert.deepEqual(told[0], store.events().at(-1), 'told as the log holds it');
    assert.deepEqual(seenInListener, [{ inTransaction: false, setpoint: 22 }], 'committed, memory updated');
  });

  test('given the same setpoint again (a redelivery), then nothing is told', (t) => {
    const { told, store } = desiredOnFile(t);
    store.setDesired('room', { setpoint: 20 }, 'mqtt');
    assert.deepEqual(told, []);
  });

  test('given config, mode and fault-reset changes, then each event they write is told once, in order', (t) => {
    const { told, store } = desiredOnFile(t);
    store.applyConfig({
      text: '# room at 21\n',
      loops: { room: { ...ROOM.room, setpoint: 21, sectionHash: 'room-2' } },
    });
    store.setDesired('room', { mode: 'off' }, 'cli');
    store.resetFault('room', { requestedAtMs: T0, source: 'http' });
    store.recordEvent({ loop: 'room', kind: 'note', message: 'recorded' });
    assert.deepEqual(
      kinds(told),
      kinds(store.events().slice(-told.length)),
      'what the log got, in its order',
    );
    assert.deepEqual(
      kinds(told).filter((k) => k !== 'config-applied'),
      ['setpoint-changed', 'mode-changed', 'fault-reset', 'note'],
    );
  });

  test('given a write that fails inside its transaction (after its event was written), then nothing is told', (t) => {
    const { db, told, store } = desiredOnFile(t);
    refuseInserts(db, 'loop_desired');
    assert.throws(() => store.setDesired('room', { setpoint: 22 }, 'mqtt'), /not stored and changed nothing/);
    assert.deepEqual(told, [], 'the rolled-back setpoint-changed is not told');
    assert.equal(store.events().filter((e) => e.kind === 'setpoint-changed').length, 0);
  });

  test('given a closed database, when a change is asked, then it throws and nothing is told', (t) => {
    const { db, told, store } = desiredOnFile(t);
    db.close();
    assert.throws(() => store.setDesired('room', { setpoint: 22 }, 'mqtt'));
    assert.throws(() => store.recordEvent({ kind: 'note', message: 'lost' }), 'no deferEvent: it throws');
    assert.deepEqual(told, []);
  });

  test('given a listener that throws, then the change is still stored and the other listeners told', (t) => {
    const { feed, told, store } = desiredOnFile(t);
    feed.subscribe(() => {
      throw new Error('broken listener');
    });
    assert.deepEqual(store.setDesired('room', { setpoint: 23 }, 'mqtt'), { changed: true, generation: 2 });
    assert.equal(store.desired('room')?.setpoint, 23);
    assert.deepEqual(kinds(told), ['setpoint-changed']);
  });
});

describe('StateStore announcing on its feed', () => {
  test('given an event added, then it is told at once, as the log will hold it, and the flush tells nothing more', (t) => {
    const { db } = tempStoreFile(t, () => T0);
    const { feed, told } = listened();
    const state = new StateStore(db, undefined, { feed });
    const data = { relay: 'heater', on: true };

    state.addEvent({
      atMs: T0,
      loop: 'room',
      kind: 'actuator-switched',
      source: undefined,
      message: 'on',
      data,
    });
    data.on = false;

    assert.deepEqual(told, [
      {
        atMs: T0,
        loop: 'room',
        kind: 'actuator-switched',
        message: 'on',
        data: { relay: 'heater', on: true },
      },
    ]);
    state.flush();
    assert.equal(told.length, 1);
    assert.deepEqual(new DesiredStore(db, () => T0).events(), told, 'the log holds what was told, as it was');
  });
});

describe('StoreSupervisor.events', () => {
  test('given recordEvent refused by the database, then the event waits for a flush and is told once', (t) => {
    const store = new StoreSupervisor({
      path: path.join(tempDir(t), 'homeostat.db'),
      clock: new ManualClock(T0),
      logger: silentLogger,
    });
    t.after(() => store.close());
    const { told } = listened(store.events);
    refuseInserts(store.database, 'events');

    assert.doesNotThrow(() =>
      store.desired.recordEvent({ loop: 'room', kind: 'command-rejected', message: 'no' }),
    );
    assert.deepEqual(kinds(told), ['command-rejected'], 'told once, by the state store');
    assert.equal(store.failedOperations, 1);

    store.database.exec('DROP TRIGGER refuse_events');
    store.state.flush();
    assert.deepEqual(kinds(store.desired.events()), ['command-rejected'], 'written at the flush');
    assert.equal(told.length, 1, 'the flush tells nothing more');
  });

  test('given a listener that throws, then recording goes on and the supervisor logs it', (t) => {
    const { logger, lines } = recordingLogger();
    const store = new StoreSupervisor({
      path: path.join(tempDir(t), 'homeostat.db'),
      clock: new ManualClock(T0),
      logger,
    });
    t.after(() => store.close());
    store.events.subscribe(() => {
      throw new Error('broken listener');
    });
    store.desired.recordEvent({ kind: 'note', message: 'kept' });
    assert.deepEqual(kinds(store.desired.events()), ['note']);
    assert.ok(lines.some((l) => /event feed listener failed/.test(l.msg)));
  });

  test('given failures that are not the database (an unknown loop), then failedOperations does not count them', (t) => {
    const store = new StoreSupervisor({
      path: path.join(tempDir(t), 'homeostat.db'),
      clock: new ManualClock(T0),
      logger: silentLogger,
    });
    t.after(() => store.close());
    assert.throws(() => store.desired.setDesired('nowhere', { setpoint: 1 }, 'http'), /unknown loop/);
    assert.equal(store.failedOperations, 0);
  });

  test('given a file that cannot be opened, when it opens later, then the same feed tells what happens on the file', async (t) => {
    const dir = tempDir(t);
    const blocker = path.join(dir, 'state');
    fs.writeFileSync(blocker, 'a file where the directory should be');
    const clock = new ManualClock(T0);
    const store = new StoreSupervisor({
      path: path.join(blocker, 'homeostat.db'),
      clock,
      logger: silentLogger,
    });
    t.after(() => store.close());
    assert.equal(store.onStandIn, true);
    const feed = store.events;
    const { told } = listened(feed);

    fs.rmSync(blocker);
    fs.mkdirSync(blocker);
    await clock.advance(60_000);

    assert.equal(store.onStandIn, false, 'the file opened');
    assert.equal(store.events, feed, 'the same feed');
    store.desired.recordEvent({ kind: 'note', message: 'on the file' });
    assert.deepEqual(kinds(told), ['database-opened', 'note']);
    assert.deepEqual(kinds(store.desired.events()), ['database-opened', 'note'], 'both in the file');
  });
});
