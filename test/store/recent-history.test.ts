/**
 * History for the HTTP API's chart: what the flushes stored plus the readings still waiting for
 * a flush (storage.memoryFlushS, 10 min by default), so a chart of the last hour does not miss
 * the last ten minutes. `history()` (the CLI's) stays what is stored only.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import type Database from 'better-sqlite3';
import { PendingWrites } from '../../src/store/state-batch.js';
import { insertSamples, type Sample, StateStore } from '../../src/store/state-store.js';
import { tempStoreFile } from '../support/store.js';

const T0 = Date.UTC(2026, 0, 1);
const S = 10_000;

function reading(atMs: number, measured = 20): Sample {
  return { atMs, setpoint: 21, measured, output: 0.5, action: 'heating' };
}

/** [offset in steps of 10 s from T0, resolutionS] of each sample: what a test compares. */
const shape = (samples: Array<Sample & { resolutionS: number }>) =>
  samples.map((s) => [(s.atMs - T0) / S, s.resolutionS]);

let db: Database.Database;
let state: StateStore;
beforeEach((t) => {
  ({ db } = tempStoreFile(t, () => T0));
  state = new StateStore(db);
});

/** Readings at these steps of 10 s from T0, added to `loop`; `flush` writes them. */
function add(loop: string, steps: number[]): void {
  for (const step of steps) state.addSample(loop, reading(T0 + step * S));
}

describe('StateStore.recentHistory', () => {
  test('given readings flushed and readings pending, then both come, in time order, pending ones at resolution 0', () => {
    add('room', [0, 1, 2, 3]);
    state.flush();
    add('room', [4, 5, 6]);

    assert.deepEqual(shape(state.recentHistory('room', T0)), [
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 0],
      [5, 0],
      [6, 0],
    ]);
    assert.deepEqual(
      shape(state.history('room', T0)),
      [
        [0, 0],
        [1, 0],
        [2, 0],
        [3, 0],
      ],
      'history(): stored only',
    );
  });

  test('given since and until, then only the samples between them (both included) come, stored or pending', () => {
    add('room', [0, 1, 2, 3]);
    state.flush();
    add('room', [4, 5, 6]);
    const cases: Array<{ since: number; until?: number; steps: number[] }> = [
      { since: 2, until: 5, steps: [2, 3, 4, 5] },
      { since: 4, steps: [4, 5, 6] },
      { since: 0, until: 1, steps: [0, 1] },
      { since: 7, steps: [] },
    ];
    for (const { since, until, steps } of cases) {
      const got = state.recentHistory(
        'room',
        T0 + since * S,
        until === undefined ? undefined : T0 + until * S,
      );
      assert.deepEqual(
        got.map((s) => (s.atMs - T0) / S),
        steps,
        `since ${since} until ${until}`,
      );
    }
  });

  test('given a pending reading at the time of a stored one (a flush retried after it wrote), then it comes once, as stored', () => {
    add('room', [0, 1]);
    state.flush();
    state.addSample('room', reading(T0 + S, 99));
    add('room', [2]);
    const got = state.recentHistory('room', T0);
    assert.deepEqual(shape(got), [
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
    assert.equal(got[1]?.measured, 20, 'the stored one');
  });

  test('given downsampled buckets stored, then they keep their resolution next to the pending readings', () => {
    const insert = db.prepare<[string, number, number, number, Buffer]>(
      'INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?)',
    );
    insertSamples(insert, 'room', [reading(T0), reading(T0 + 30 * S)], 300);
    add('room', [31]);
    assert.deepEqual(shape(state.recentHistory('room', T0)), [
      [0, 300],
      [30, 300],
      [31, 0],
    ]);
  });

  test('given a clock set back, then a pending reading older than stored ones comes in its time order', () => {
    add('room', [5, 6]);
    state.flush();
    add('room', [7, 3]);
    assert.deepEqual(
      state.recentHistory('room', T0).map((s) => (s.atMs - T0) / S),
      [3, 5, 6, 7],
    );
  });

  test("given another loop's readings pending, then they do not come", () => {
    add('room', [0]);
    add('cellar', [1]);
    assert.deepEqual(shape(state.recentHistory('room', T0)), [[0, 0]]);
  });

  test('given a failed flush (its readings back to pending), then they still come once', () => {
    add('room', [0, 1]);
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON samples BEGIN SELECT RAISE(ABORT, 'full'); END");
    assert.throws(() => state.flush());
    add('room', [2]);
    assert.deepEqual(shape(state.recentHistory('room', T0)), [
      [0, 0],
      [1, 0],
      [2, 0],
    ]);
  });
});

describe('PendingWrites.pendingSamples', () => {
  test('given readings pending, then it returns a copy that later adds and flushes do not change', () => {
    const pending = new PendingWrites();
    pending.addSample('room', reading(T0));
    const seen = pending.pendingSamples('room');
    pending.addSample('room', reading(T0 + S));
    assert.equal(seen.length, 1);
    assert.equal(pending.pendingSamples('room').length, 2);
    pending.take();
    assert.deepEqual(pending.pendingSamples('room'), [], 'none once taken for a flush');
    assert.deepEqual(pending.pendingSamples('nowhere'), []);
  });
});
