/**
 * Which commits are durable (durability.ts): every desired-state change commits under
 * synchronous FULL (the WAL fsynced before the answer), the batched history under NORMAL, and
 * the connection is back at NORMAL after each. The level is read at the moment each
 * transaction starts, through a database that records it (the real one underneath).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type Database from 'better-sqlite3';
import { DesiredStore, type NewTuning, sha256 } from '../../src/store/desired-store.js';
import { durably } from '../../src/store/durability.js';
import { StateStore } from '../../src/store/state-store.js';
import { tempStoreFile } from '../support/store.js';
import type { HasAfter } from '../support/tmp.js';

const NORMAL = 1;
const FULL = 2;

/** `db` with every transaction's synchronous level at its start pushed to `levels`. */
function recordingLevels(db: Database.Database): { db: Database.Database; levels: number[] } {
  const levels: number[] = [];
  const level = () => db.pragma('synchronous', { simple: true }) as number;
  const recorded =
    (run: (...args: unknown[]) => unknown) =>
    (...args: unknown[]) => {
      levels.push(level());
      return run(...args);
    };
  const proxy = new Proxy(db, {
    get(target, property) {
      if (property === 'transaction')
        return (work: (...args: unknown[]) => unknown) => {
          const transaction = target.transaction(work);
          return Object.assign(recorded(transaction), {
            deferred: recorded(transaction.deferred),
            immediate: recorded(transaction.immediate),
            exclusive: recorded(transaction.exclusive),
          });
        };
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: proxy, levels };
}

const TUNING: NewTuning = {
  gains: { kp: 0.2, tiS: 450, tdS: 0 },
  model: {
    gain: 22,
    timeConstantS: 610,
    deadTimeS: 58,
    ambient: 9.5,
    standardError: { gain: 0.8, timeConstantS: 25, deadTimeS: 3 },
    rmsResidual: 0.04,
  },
  details: { durationS: 3600, cycles: 4 },
};

/** A store on a file with loop `room` applied from a config, and what it records. */
function storeWithRoom(t: HasAfter) {
  let nowMs = 1_000_000;
  const file = tempStoreFile(t, () => nowMs);
  const { db, levels } = recordingLevels(file.db);
  const desired = new DesiredStore(db, () => nowMs);
  const state = new StateStore(db);
  desired.applyConfig({
    text: 'room: 20',
    loops: { room: { setpoint: 20, mode: 'heat', sectionHash: sha256('room: 20') } },
  });
  levels.length = 0;
  return {
    desired,
    state,
    levels,
    level: () => file.db.pragma('synchronous', { simple: true }),
    tick: () => nowMs++,
  };
}

type Store = ReturnType<typeof storeWithRoom>;

describe('durability of each kind of write', () => {
  const durable: Array<[string, (s: Store) => unknown]> = [
    [
      'a config applied',
      (s) =>
        s.desired.applyConfig({
          text: 'room: 21',
          loops: { room: { setpoint: 21, mode: 'heat', sectionHash: sha256('room: 21') } },
        }),
    ],
    ['a setpoint', (s) => s.desired.setDesired('room', { setpoint: 19.5 }, 'mqtt')],
    ['a mode', (s) => s.desired.setDesired('room', { mode: 'off' }, 'http')],
    ['a preset', (s) => s.desired.selectPreset('room', 'eco', { eco: { setpoint: 16 } }, 'mqtt')],
    [
      'a profile start',
      (s) => s.desired.profileCommand('room', { action: 'start', name: 'warm-up' }, 'mqtt'),
    ],
    ['a fault reset', (s) => s.desired.resetFault('room', { requestedAtMs: 1_000_000, source: 'mqtt' })],
    [
      'an autotune request',
      (s) => s.desired.requestAutotune('room', { action: 'start', requestedAtMs: 1_000_000, source: 'mqtt' }),
    ],
    [
      'a tuning recorded and applied',
      (s) => s.desired.recordTuning('room', TUNING, { apply: true, source: 'autotune' }),
    ],
    [
      'a tuning accepted',
      (s) => {
        const { version } = s.desired.recordTuning('room', TUNING, { apply: false, source: 'autotune' });
        s.levels.length = 0;
        return s.desired.applyTuning('room', version, 'http');
      },
    ],
    [
      'runtime changes restored into a file',
      (s) =>
        s.desired.restoreDesired([{ ...s.desired.desired('room')!, setpoint: 23, setpointSource: 'mqtt' }]),
    ],
    ['schedules rebased after a clock step', (s) => s.desired.rebaseSchedules(60_000)],
    ['the generation floor raised', (s) => s.desired.raiseGenerationFloor(500)],
  ];
  for (const [what, write] of durable) {
    test(`given ${what}, then its transaction commits under FULL and the connection is NORMAL after`, (t) => {
      const store = storeWithRoom(t);
      store.tick();
      write(store);
      assert.ok(store.levels.length > 0, 'a transaction ran');
      assert.deepEqual(
        store.levels,
        store.levels.map(() => FULL),
      );
      assert.equal(store.level(), NORMAL);
    });
  }

  test('given the batched history, then its flush commits under NORMAL', (t) => {
    const store = storeWithRoom(t);
    store.state.addSample('room', {
      atMs: 1_000_000,
      setpoint: 20,
      measured: 19.8,
      output: 40,
      action: 'heating',
    });
    store.state.addEvent({ atMs: 1_000_000, loop: 'room', kind: 'actuator', message: 'heater ON' });
    store.state.flush();
    assert.deepEqual(store.levels, [NORMAL]);
  });

  test('given a flush asked durable (a latched fault, an autotune ended), then it commits under FULL and the connection is NORMAL again', (t) => {
    const store = storeWithRoom(t);
    store.state.addEvent({ atMs: 1_000_000, loop: 'room', kind: 'fault-latched', message: 'latched' });
    store.state.flush({ durable: true });
    assert.deepEqual(store.levels, [FULL]);
    assert.equal(store.level(), NORMAL);
  });
});

describe('durably', () => {
  test('given a throwing work, then nothing is written, the error comes through and the level is NORMAL again', (t) => {
    const { db } = tempStoreFile(t, () => 0);
    assert.throws(
      () =>
        durably(db, () => {
          db.prepare("INSERT INTO meta (key, value) VALUES ('x', '1')").run();
          throw new Error('refused');
        }),
      /refused/,
    );
    assert.equal(db.prepare("SELECT count(*) AS n FROM meta WHERE key = 'x'").pluck().get(), 0);
    assert.equal(db.pragma('synchronous', { simple: true }), NORMAL);
  });

  test('given an open transaction, then the work joins it (SQLite cannot change the level inside one)', (t) => {
    const { db } = tempStoreFile(t, () => 0);
    const outer = db.transaction(() => durably(db, () => db.pragma('synchronous', { simple: true })));
    assert.equal(outer.immediate(), NORMAL);
    assert.equal(db.pragma('synchronous', { simple: true }), NORMAL);
  });
});
