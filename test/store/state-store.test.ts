import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { loadConfigFile } from '../../src/config/load.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';
import { initialLoopMemory, reconcile } from '../../src/core/reconcile.js';
import { migrate } from '../../src/store/migrations.js';
import {
  decodeSamples,
  encodeLoopState,
  encodeSamples,
  type Sample,
  STATE_DICTIONARY_1,
  StateStore,
} from '../../src/store/state-store.js';
import { tempStoreFile } from '../support/store.js';

const T0 = Date.UTC(2026, 0, 1);

let dir: string;
let db: Database.Database;
beforeEach((t) => {
  ({ db, dir } = tempStoreFile(t, () => T0));
});

/** The room loop of the demo config after one real reconcile: memory and status as the daemon saves them. */
function roomState(measured = 19.5) {
  const loaded = loadConfigFile('config/demo.yaml');
  assert.ok(loaded.ok);
  const spec = toLoopSpec(loaded.config, 'room');
  const result = reconcile(
    spec,
    { generation: 1, setpoint: 20, mode: 'heat' },
    { reading: { value: measured, atMs: T0 }, actuators: { room_heater: 0 } },
    initialLoopMemory(),
    T0,
  );
  return { memory: result.memory, status: result.status };
}

function reading(atMs: number, overrides: Partial<Sample> = {}): Sample {
  return { atMs, setpoint: 20, measured: 19.875, output: 0.42, action: 'heating', ...overrides };
}

describe('encodeSamples / decodeSamples', () => {
  const cases: { name: string; samples: Sample[] }[] = [
    {
      name: 'readings every 10 s',
      samples: [0, 1, 2, 3].map((i) => reading(T0 + i * 10_000, { measured: 19.875 + i * 0.0625 })),
    },
    {
      name: 'no reading (sensor stale), a setpoint change, negative output',
      samples: [
        reading(T0, { measured: undefined, action: 'off', output: 0 }),
        reading(T0 + 10_000, { setpoint: 21.5, output: -0.25, action: 'cooling' }),
      ],
    },
    { name: 'an action this code does not know', samples: [reading(T0, { action: 'defrosting' })] },
    {
      name: 'a clock set back, irregular steps',
      samples: [reading(T0), reading(T0 - 60_000), reading(T0 - 59_997), reading(T0 + 3_600_000)],
    },
    {
      name: 'humidity with noise',
      samples: [
        reading(T0, { setpoint: 65, measured: 64.7 }),
        reading(T0 + 15_000, { setpoint: 65, measured: 65.3 }),
      ],
    },
  ];
  for (const { name, samples } of cases) {
    test(`given ${name}, when encoded and decoded, then the same samples come back`, () => {
      assert.deepEqual(decodeSamples(encodeSamples(samples)), samples);
    });
  }

  test('given values finer than the format keeps, then measured/setpoint keep 4 decimals and output 3', () => {
    const [back] = decodeSamples(
      encodeSamples([reading(T0, { setpoint: 20.123456, measured: 19.99999, output: 0.12345 })]),
    );
    assert.deepEqual(back, reading(T0, { setpoint: 20.1235, measured: 20, output: 0.123 }));
  });

  test('given 30 readings every 10 s of a regulating loop, then the row holds them in under 6 bytes each', () => {
    const samples = Array.from({ length: 30 }, (_, i) =>
      reading(T0 + i * 10_000 + (i % 3), {
        measured: 19.75 + (i % 4) * 0.0625,
        output: 0.4 + ((i * 7) % 11) / 100,
        action: i % 10 < 4 ? 'heating' : 'idle',
      }),
    );
    const bytes = encodeSamples(samples).length;
    assert.ok(bytes < 30 * 6, `${bytes} bytes`);
  });
});

describe('StateStore history', () => {
  test('given readings of two loops flushed, when history is read, then each loop gets its own, oldest first, from sinceMs', () => {
    const state = new StateStore(db);
    for (let i = 0; i < 100; i++) {
      state.addSample('room', reading(T0 + i * 10_000));
      state.addSample('cellar', reading(T0 + i * 10_000, { setpoint: 12 }));
      if (i % 30 === 29) state.flush();
    }
    state.flush();
    const room = state.history('room', T0);
    assert.equal(room.length, 100);
    assert.deepEqual(
      room.map((s) => s.atMs),
      Array.from({ length: 100 }, (_, i) => T0 + i * 10_000),
    );
    assert.ok(room.every((s) => s.setpoint === 20 && s.resolutionS === 0));
    assert.deepEqual(state.history('cellar', T0 + 985_000), [
      { ...reading(T0 + 990_000, { setpoint: 12 }), resolutionS: 0 },
    ]);
  });

  test('given readings not flushed yet, when history is read, then they are not there', () => {
    const state = new StateStore(db);
    state.addSample('room', reading(T0));
    assert.deepEqual(state.history('room', 0), []);
    assert.equal(state.dirty, true);
  });

  test('given one flush of 60 readings, then it writes two rows (a row stays within a 512-byte page)', () => {
    const state = new StateStore(db);
    for (let i = 0; i < 60; i++) state.addSample('room', reading(T0 + i * 10_000));
    assert.equal(state.flush(), 2);
    const rows = db
      .prepare<[], { n: number; longest: number }>(
        'SELECT count(*) AS n, max(length(data)) AS longest FROM samples',
      )
      .get();
    assert.equal(rows?.n, 2);
    assert.ok((rows?.longest ?? Infinity) < 240, `longest row ${rows?.longest} bytes`);
  });

  test('given a flush that fails, when flushed again, then the readings and events it held are written', () => {
    const state = new StateStore(db);
    state.addSample('room', reading(T0));
    state.addEvent({ atMs: T0, loop: 'room', kind: 'actuator', message: 'room_heater → 1' });
    db.exec("CREATE TEMP TRIGGER full BEFORE INSERT ON samples BEGIN SELECT RAISE(FAIL, 'disk full'); END");
    assert.throws(() => state.flush(), /disk full/);
    db.exec('DROP TRIGGER full');
    state.addSample('room', reading(T0 + 10_000));
    state.flush();
    assert.deepEqual(
      state.history('room', 0).map((s) => s.atMs),
      [T0, T0 + 10_000],
    );
    assert.deepEqual(db.prepare("SELECT message FROM events WHERE kind = 'actuator'").all(), [
      { message: 'room_heater → 1' },
    ]);
  });
});

describe('StateStore memory and status', () => {
  test('given a real loop state, when flushed and loaded (also by a new StateStore), then memory and status come back equal', () => {
    const { memory, status } = roomState();
    const state = new StateStore(db);
    state.saveState('room', memory, status, T0);
    state.flush();
    assert.deepEqual(new StateStore(db).load('room'), { memory, status, savedAtMs: T0 });
  });

  test('given a real loop state, then its stored blob fits in one 512-byte page', () => {
    const { memory, status } = roomState();
    const bytes = encodeLoopState(memory, status).length;
    assert.ok(bytes < 400, `${bytes} bytes`);
  });

  test('given a row written by schema version 1 (JSON columns), when loaded, then it reads as before', () => {
    const file = path.join(dir, 'v1.db');
    const old = new Database(file);
    migrate(old, 1);
    const { memory, status } = roomState();
    old
      .prepare('INSERT INTO loop_state (loop, memory_json, status_json, saved_at_ms) VALUES (?, ?, ?, ?)')
      .run('room', JSON.stringify(memory), JSON.stringify(status), T0);
    migrate(old);
    assert.deepEqual(new StateStore(old).load('room'), { memory, status, savedAtMs: T0 });
    old.close();
  });

  test('given an unreadable stored state, when loaded, then memory and status are undefined (a fresh start)', () => {
    db.prepare('INSERT INTO loop_state (loop, state, saved_at_ms) VALUES (?, ?, ?)').run(
      'room',
      Buffer.from([1, 2, 3]),
      T0,
    );
    assert.deepEqual(new StateStore(db).load('room'), {
      memory: undefined,
      status: undefined,
      savedAtMs: T0,
    });
  });

  test('STATE_DICTIONARY_1 never changes (stored blobs need it to be read)', () => {
    assert.equal(
      createHash('sha256').update(STATE_DICTIONARY_1).digest('hex'),
      '464e95dbc222bc2894b3101a7c2d618aee61ce9625b8907837da6bef75807313',
      'add a state format 2 with a new dictionary instead of editing this one',
    );
  });

  test('given states saved between flushes, when flushed, then the latest of each loop is stored', () => {
    const { memory, status } = roomState();
    const state = new StateStore(db);
    state.saveState('room', memory, status, T0);
    state.saveState('room', memory, { ...status, measured: 19.4375 }, T0 + 10_000);
    state.saveState('cellar', memory, { ...status, loop: 'cellar' }, T0 + 5_000);
    assert.equal(state.flush(), 2);
    assert.equal(state.load('room')?.status?.measured, 19.4375);
    assert.equal(state.load('room')?.savedAtMs, T0 + 10_000);
    assert.equal(state.load('cellar')?.status?.loop, 'cellar');
    assert.equal(state.dirty, false);
    assert.equal(state.flush(), 0, 'nothing pending: nothing written');
  });

  test('given a failed flush and a newer state saved since, when flushed again, then the newer state is stored', () => {
    const { memory, status } = roomState();
    const state = new StateStore(db);
    state.saveState('room', memory, status, T0);
    db.exec(
      "CREATE TEMP TRIGGER full BEFORE INSERT ON loop_state BEGIN SELECT RAISE(FAIL, 'disk full'); END",
    );
    assert.throws(() => state.flush(), /disk full/);
    db.exec('DROP TRIGGER full');
    state.saveState('room', memory, { ...status, setpoint: 21 }, T0 + 10_000);
    state.flush();
    assert.equal(state.load('room')?.status?.setpoint, 21);
  });
});
