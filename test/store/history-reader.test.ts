/**
 * HistoryReader: a loop's history for the HTTP API read off the daemon's event loop's back
 * (its own read-only connection, rowid slices, a turn given every ~2 ms), stored and pending
 * samples merged once each, one read at a time with a bounded queue.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { beforeEach, describe, test } from 'node:test';
import type Database from 'better-sqlite3';
import {
  HistoryBusyError,
  type HistoryRead,
  HistoryReader,
  type HistorySource,
  MAX_HISTORY_SPAN_MS,
} from '../../src/store/history-reader.js';
import { insertSamples, type Sample, StateStore } from '../../src/store/state-store.js';
import { tempStoreFile } from '../support/store.js';

const T0 = Date.UTC(2026, 0, 1);
const S = 10_000;
const DAY_MS = 86_400_000;

function reading(step: number): Sample {
  return { atMs: T0 + step * S, setpoint: 21, measured: 20, output: 0.5, action: 'heating' };
}

let db: Database.Database;
let path: string;
let state: StateStore;
let source: HistorySource;
beforeEach((t) => {
  ({ db, path } = tempStoreFile(t, () => T0));
  state = new StateStore(db);
  source = { file: () => ({ path }), pendingSamples: (loop) => state.pendingSamples(loop) };
});

function add(loop: string, steps: Iterable<number>): void {
  for (const step of steps) state.addSample(loop, reading(step));
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const all = (loop = 'room'): HistoryRead => ({ loop, fromMs: T0, untilMs: T0 + DAY_MS });

/** Reads `read` and the steps of 10 s from T0 given to the sink, sorted. */
async function steps(reader: HistoryReader, read: HistoryRead = all()) {
  const got: number[] = [];
  const result = await reader.read(read, (s) => got.push((s.atMs - T0) / S));
  return { steps: got.sort((a, b) => a - b), result };
}

describe('HistoryReader.read', () => {
  test('given readings flushed and readings pending, then each is given once, other loops and times left out', async () => {
    add('room', [0, 1, 2, 3]);
    add('cellar', [0, 1, 2]);
    state.flush();
    add('room', [4, 5, 6]);
    // A flush retried after it wrote: the reading at step 4 is stored and still pending.
    insertSamples(
      db.prepare('INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?)'),
      'room',
      [reading(4)],
      0,
    );
    const { steps: got, result } = await steps(new HistoryReader(source), {
      loop: 'room',
      fromMs: T0 + S,
      untilMs: T0 + 5 * S,
    });
    assert.deepEqual(got, [1, 2, 3, 4, 5]);
    assert.deepEqual(result, { storedSamples: 4, pendingSamples: 1 });
  });

  test('given a range longer than the maximum span, or ending before it starts, then RangeError and nothing read', async () => {
    const reader = new HistoryReader(source);
    const sink = () => assert.fail('nothing may be read');
    await assert.rejects(
      reader.read({ loop: 'room', fromMs: T0, untilMs: T0 + MAX_HISTORY_SPAN_MS + 1 }, sink),
      RangeError,
    );
    await assert.rejects(reader.read({ loop: 'room', fromMs: T0 + 1, untilMs: T0 }, sink), RangeError);
    await assert.rejects(reader.read({ loop: 'room', fromMs: Number.NaN, untilMs: T0 }, sink), RangeError);
    assert.equal(
      (await steps(reader, { loop: 'room', fromMs: T0, untilMs: T0 + MAX_HISTORY_SPAN_MS })).steps.length,
      0,
    );
  });

  test('given a large read, then the event loop gets turns during it (a callback scheduled at its start runs before it ends)', async () => {
    add('room', range(5_000));
    state.flush();
    const reader = new HistoryReader(source, { sliceWorkMs: 0 });
    let given = 0;
    let givenWhenCallbackRan: number | undefined;
    const read = reader.read(all(), () => given++);
    setImmediate(() => {
      givenWhenCallbackRan = given;
    });
    await read;
    assert.equal(given, 5_000);
    assert.ok(
      givenWhenCallbackRan !== undefined && givenWhenCallbackRan > 0 && givenWhenCallbackRan < 5_000,
      `the callback ran after ${givenWhenCallbackRan} of 5000 samples`,
    );
  });

  test('given a read running, when a second comes, then it waits in the queue and starts once the first ended', async () => {
    add('room', range(2_000));
    add('cellar', range(2_000));
    state.flush();
    const reader = new HistoryReader(source, { sliceWorkMs: 0 });
    const order: string[] = [];
    const first = reader.read(all('room'), () => order.push('room'));
    const second = reader.read(all('cellar'), () => order.push('cellar'));
    assert.equal(reader.queued, 1);
    await Promise.all([first, second]);
    assert.equal(order.length, 4_000);
    assert.equal(order.indexOf('cellar'), 2_000, 'every room sample before the first cellar one');
    assert.equal(reader.queued, 0);
  });

  test('given the queue full, when one more comes, then HistoryBusyError; the others are answered', async () => {
    add('room', range(1_000));
    state.flush();
    const reader = new HistoryReader(source, { maxWaiting: 2, sliceWorkMs: 0 });
    const accepted = [0, 1, 2].map(() => reader.read(all(), () => {}));
    await assert.rejects(
      reader.read(all(), () => {}),
      HistoryBusyError,
    );
    for (const result of await Promise.all(accepted)) assert.equal(result.storedSamples, 1_000);
  });

  test('given a sink that throws, then that read rejects and the next one runs', async () => {
    add('room', range(100));
    state.flush();
    const reader = new HistoryReader(source);
    await assert.rejects(
      reader.read(all(), () => {
        throw new Error('sink failed');
      }),
      /sink failed/,
    );
    assert.equal((await steps(reader)).steps.length, 100);
  });

  test('given no database file at the path, then only the pending samples, and why', async () => {
    add('room', [0, 1]);
    const reader = new HistoryReader({ ...source, file: () => ({ path: join(path, '..', 'gone.db') }) });
    const { steps: got, result } = await steps(reader);
    assert.deepEqual(got, [0, 1]);
    assert.equal(result.storedSamples, 0);
    assert.match(result.memoryOnly ?? '', /^no database at .*gone\.db/);
  });

  test('given the store on an in-memory stand-in, then only the pending samples, and the reason given', async () => {
    add('room', [0, 1]);
    state.flush();
    add('room', [2]);
    const reader = new HistoryReader({ ...source, file: () => ({ unavailable: 'on a stand-in' }) });
    const { steps: got, result } = await steps(reader);
    assert.deepEqual(got, [2]);
    assert.deepEqual(result, { storedSamples: 0, pendingSamples: 1, memoryOnly: 'on a stand-in' });
  });

  test('given a flush while a read runs, then the read still gives each sample once (its snapshot and pending taken together)', async () => {
    add('room', range(3_000));
    state.flush();
    add('room', [3_000, 3_001]);
    const reader = new HistoryReader(source, { sliceWorkMs: 0 });
    const got: number[] = [];
    const read = reader.read(all(), (s) => got.push((s.atMs - T0) / S));
    setImmediate(() => {
      add('room', [3_002]);
      state.flush();
    });
    await read;
    assert.deepEqual(
      got.sort((a, b) => a - b),
      range(3_002),
    );
  });
});
