/**
 * A fault reset as desired state (DesiredStore.resetFault): committed with a generation and its
 * event in one transaction, kept across restarts and carried into a fresh file.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import { openStandIn } from '../../src/store/database.js';
import { DesiredStore, sha256 } from '../../src/store/desired-store.js';
import { LATEST_VERSION, migrate } from '../../src/store/migrations.js';
import { desiredStoreFileEachTest } from '../support/store.js';

const silent = pino({ level: 'silent' });
const TEXT = 'loops: [greenhouse, cellar]';
const LOOPS = {
  greenhouse: { setpoint: 18, mode: 'heat' as const, sectionHash: sha256('greenhouse') },
  cellar: { setpoint: 70, mode: 'dehumidify' as const, sectionHash: sha256('cellar') },
};

/** The store under test on a file, reopened by `disk.reopen()` as after a restart; the config applied. */
const disk = desiredStoreFileEachTest('homeostat-reset-');
beforeEach(() => {
  disk.store.applyConfig({ text: TEXT, loops: LOOPS });
});

describe('DesiredStore.resetFault', () => {
  test('given a reset, then it gets the next generation, is committed with its event, and reads back after a restart', () => {
    disk.nowMs += 5_000;
    assert.deepEqual(
      disk.store.resetFault('greenhouse', {
        requestedAtMs: 1_004_000,
        source: 'mqtt',
        requestId: 'r1',
        fault: 'HeatingIneffective',
      }),
      { generation: 2 },
    );
    const expected = {
      loop: 'greenhouse',
      setpoint: 18,
      setpointSource: 'file',
      mode: 'heat',
      modeSource: 'file',
      generation: 2,
      updatedAtMs: 1_005_000,
      faultReset: { atMs: 1_004_000, generation: 2 },
    };
    assert.deepEqual(disk.store.desired('greenhouse'), expected);
    assert.equal(disk.store.desired('cellar')?.faultReset, undefined, 'other loops are not reset');
    const event = disk.store.events({ loop: 'greenhouse' }).at(-1);
    assert.deepEqual(event, {
      atMs: 1_005_000,
      loop: 'greenhouse',
      kind: 'fault-reset',
      source: 'mqtt',
      message: 'latched fault HeatingIneffective reset (mqtt)',
      data: { generation: 2, requestedAtMs: 1_004_000, fault: 'HeatingIneffective', requestId: 'r1' },
    });

    disk.reopen(); // a crash right after: committed, so the reset is there
    assert.deepEqual(disk.store.desired('greenhouse'), expected);
    assert.deepEqual(disk.store.readBack(), [], 'memory and file agree');
  });

  test('given another reset (a second press, a QoS 1 duplicate), then it is a new change with its own generation', () => {
    assert.deepEqual(disk.store.resetFault('greenhouse', { requestedAtMs: 1_000_500, source: 'mqtt' }), {
      generation: 2,
    });
    assert.deepEqual(disk.store.resetFault('greenhouse', { requestedAtMs: 1_000_500, source: 'mqtt' }), {
      generation: 3,
    });
    // Even received at an earlier clock time (the wall clock was set back): the latest wins.
    assert.deepEqual(disk.store.resetFault('greenhouse', { requestedAtMs: 900_000, source: 'cli' }), {
      generation: 4,
    });
    assert.deepEqual(disk.store.desired('greenhouse')?.faultReset, { atMs: 900_000, generation: 4 });
    assert.equal(disk.store.events().filter((e) => e.kind === 'fault-reset').length, 3);
  });

  test('given an unknown, removed or non-finite target, then a clear Error and nothing stored', () => {
    disk.store.applyConfig({ text: `${TEXT} # cellar gone`, loops: { greenhouse: LOOPS.greenhouse } });
    assert.throws(() => disk.store.resetFault('garage', { requestedAtMs: 1, source: 'mqtt' }), {
      message: 'unknown loop "garage"',
    });
    assert.throws(() => disk.store.resetFault('cellar', { requestedAtMs: 1, source: 'mqtt' }), {
      message: 'loop "cellar" was removed from the config',
    });
    assert.throws(
      () => disk.store.resetFault('greenhouse', { requestedAtMs: Number.NaN, source: 'mqtt' }),
      /finite number/,
    );
    assert.equal(disk.store.desired('greenhouse')?.faultReset, undefined);
    assert.equal(disk.store.events().filter((e) => e.kind === 'fault-reset').length, 0);
  });

  test('given a setpoint change or a re-applied file after a reset, then the reset stays in force', () => {
    disk.store.resetFault('greenhouse', { requestedAtMs: 1_000_500, source: 'mqtt' });
    disk.store.setDesired('greenhouse', { setpoint: 19 }, 'mqtt');
    disk.store.applyConfig({
      text: `${TEXT} # edited`,
      loops: { ...LOOPS, greenhouse: { ...LOOPS.greenhouse, setpoint: 17 } },
    });
    assert.equal(disk.store.desired('greenhouse')?.faultReset?.atMs, 1_000_500);
    assert.equal(disk.store.desired('greenhouse')?.setpoint, 17);
  });

  test('given a loop removed and added again, then it starts without a reset', () => {
    disk.store.resetFault('cellar', { requestedAtMs: 1_000_500, source: 'mqtt' });
    disk.store.applyConfig({ text: `${TEXT} # no cellar`, loops: { greenhouse: LOOPS.greenhouse } });
    disk.store.applyConfig({ text: `${TEXT} # cellar back`, loops: LOOPS });
    assert.equal(disk.store.desired('cellar')?.faultReset, undefined);
  });
});

describe('DesiredStore.restoreDesired: a reset carried into a fresh file', () => {
  test('given a reset in memory that the fresh file lacks, then it is restored with a new generation', () => {
    disk.store.resetFault('greenhouse', { requestedAtMs: 1_000_500, source: 'mqtt' });
    const remembered = disk.store.allDesired();
    const fresh = openStandIn(silent);
    try {
      const target = new DesiredStore(fresh, () => disk.nowMs);
      target.raiseGenerationFloor(disk.store.highestGeneration());
      target.applyConfig({ text: TEXT, loops: LOOPS });
      assert.deepEqual(target.restoreDesired(remembered), ['greenhouse']);
      const row = target.desired('greenhouse');
      assert.deepEqual(row?.faultReset, { atMs: 1_000_500, generation: 2 }, 'the reset keeps its generation');
      assert.ok((row?.generation ?? 0) > 2, 'the restored row gets a new generation, after the old file');
      assert.deepEqual(target.restoreDesired(target.allDesired()), [], 'restoring the same again: nothing');
    } finally {
      fresh.close();
    }
  });
});

describe('migration 4: loop_desired.fault_reset_at_ms', () => {
  test('given a version-3 file with a loop, when migrated, then the loop reads back with no reset, and a reset can be stored', () => {
    const file = path.join(disk.dir, 'v3.db');
    const old = new Database(file);
    migrate(old, 3);
    // Version 3's row has no fault_reset_at_ms: written here as version 3 wrote it.
    old
      .prepare(
        `INSERT INTO loop_desired (loop, setpoint, setpoint_source, file_setpoint, mode, mode_source,
           file_mode, section_hash, generation, updated_at_ms, removed_at_ms)
         VALUES ('greenhouse', 18, 'mqtt', 17, 'heat', 'file', 'heat', 'h', 4, 123, NULL)`,
      )
      .run();
    old.prepare("INSERT INTO meta (key, value) VALUES ('lastGeneration', '4')").run();
    old.close();

    const db4 = new Database(file);
    assert.deepEqual(migrate(db4), { from: 3, to: LATEST_VERSION });
    const columns = db4
      .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('loop_desired')")
      .all()
      .map((c) => c.name);
    assert.ok(columns.includes('fault_reset_at_ms') && columns.includes('fault_reset_generation'));
    const migrated = new DesiredStore(db4, () => disk.nowMs);
    assert.deepEqual(migrated.desired('greenhouse'), {
      loop: 'greenhouse',
      setpoint: 18,
      setpointSource: 'mqtt',
      mode: 'heat',
      modeSource: 'file',
      generation: 4,
      updatedAtMs: 123,
    });
    assert.deepEqual(migrated.resetFault('greenhouse', { requestedAtMs: 500, source: 'mqtt' }), {
      generation: 5,
    });
    db4.close();
  });
});
