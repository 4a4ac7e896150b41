/**
 * DesiredStore.events filters kind and end time in SQL (the HTTP API's /api/events?kind=&until=):
 * an old match is found however many newer events there are; and gives them in time order, as
 * the API does (`homeostat events --db` read them in the order they were written).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStandIn } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { silentLogger } from '../support/logger.js';

const T0 = Date.UTC(2026, 0, 1);

/** A store whose log holds one 'fault-raised' of `loop` at T0, then `newer` 'actuator' events, 1 s apart. */
function storeWithOldFault(t: { after(fn: () => void): void }, newer: number): DesiredStore {
  const db = openStandIn(silentLogger);
  t.after(() => db.close());
  const insert = db.prepare('INSERT INTO events (at_ms, loop, kind, source, message) VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    insert.run(T0, 'room', 'fault-raised', 'daemon', 'sensor stale');
    for (let i = 1; i <= newer; i++)
      insert.run(T0 + i * 1000, i % 2 ? 'room' : 'cellar', 'actuator', 'daemon', `switch ${i}`);
  })();
  return new DesiredStore(db, () => T0);
}

describe('DesiredStore.events: kind and untilMs', () => {
  test('given a kind older than the newest 5000 events, then it is found', (t) => {
    const store = storeWithOldFault(t, 6_000);
    const found = store.events({ kind: 'fault-raised', limit: 10 });
    assert.deepEqual(
      found.map((e) => [e.atMs, e.kind, e.loop]),
      [[T0, 'fault-raised', 'room']],
    );
    assert.equal(store.events({ kind: 'fault-raised', loop: 'cellar', limit: 10 }).length, 0);
  });

  test('given untilMs, then the newest `limit` at or before it, oldest first', (t) => {
    const store = storeWithOldFault(t, 6_000);
    assert.deepEqual(
      store.events({ untilMs: T0 + 3_000, limit: 2 }).map((e) => e.atMs),
      [T0 + 2_000, T0 + 3_000],
    );
    assert.deepEqual(
      store
        .events({ sinceMs: T0, untilMs: T0 + 5_000, kind: 'actuator', loop: 'room', limit: 10 })
        .map((e) => e.message),
      ['switch 1', 'switch 3', 'switch 5'],
    );
  });
});

describe('DesiredStore.events: time order, as the API gives them', () => {
  test('given a batch of routine events flushed after a command written at once, then oldest first in time', (t) => {
    const db = openStandIn(silentLogger);
    t.after(() => db.close());
    const insert = db.prepare(
      'INSERT INTO events (at_ms, loop, kind, source, message) VALUES (?, ?, ?, ?, ?)',
    );
    // The command at T0+5 s is written at once; the switches at T0+1 s and T0+9 s wait for the flush.
    insert.run(T0 + 5_000, 'room', 'setpoint-changed', 'http', 'setpoint 20 → 21');
    insert.run(T0 + 1_000, 'room', 'actuator', 'daemon', 'heater on');
    insert.run(T0 + 9_000, 'room', 'actuator', 'daemon', 'heater off');
    const store = new DesiredStore(db, () => T0);
    assert.deepEqual(
      store.events().map((e) => e.message),
      ['heater on', 'setpoint 20 → 21', 'heater off'],
    );
    assert.deepEqual(
      store.events({ limit: 2 }).map((e) => e.message),
      ['heater on', 'heater off'],
      'the limit keeps the newest written (the flush), shown in time order',
    );
  });
});
