/**
 * A database page damaged while the daemon runs. Before: the desired-state read in
 * the loop cycle ran outside its error handling, so reconcile never ran again and every
 * actuator stayed where it was, with the retained state still saying healthy. Now: the loops
 * regulate on from the desired state in memory, every loop shows StorageHealthy=False, and the
 * file is moved aside and replaced by a fresh one holding the running config, the runtime
 * setpoints and the loops' memory — without a restart.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { LoopStatus } from '../../src/core/status.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { startStoreDaemon } from '../support/node.js';
import { LATCHING_DEMO, startDemoStore, tempDbPath } from './support.js';

/**
 * Overwrites every page but the header page with garbage, as a failing SD card would, and
 * empties the connection's page cache (as memory pressure would) so its next read sees it.
 */
function damagePages(db: Database.Database, dbPath: string): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const size = fs.statSync(dbPath).size;
  const fd = fs.openSync(dbPath, 'r+');
  fs.writeSync(fd, Buffer.alloc(size - 512, 0xa5), 0, size - 512, 512);
  fs.closeSync(fd);
  db.pragma('cache_size = 0');
}

/** Damages only the pages of `table` (and its indexes): pages the loops never read. */
function damageTable(db: Database.Database, dbPath: string, table: string): void {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pages = (
    db
      .prepare(
        "SELECT pageno FROM dbstat WHERE name = ? OR name IN (SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?)",
      )
      .all(table, table) as Array<{ pageno: number }>
  ).map((r) => r.pageno);
  const fd = fs.openSync(dbPath, 'r+');
  for (const page of pages) fs.writeSync(fd, Buffer.alloc(512, 0x5a), 0, 512, (page - 1) * 512);
  fs.closeSync(fd);
  db.pragma('cache_size = 0');
}

const condition = (status: LoopStatus | undefined, type: string) =>
  status?.conditions.find((c) => c.type === type);
const byLoop = (daemon: Daemon) => Object.fromEntries(daemon.statuses().map((s) => [s.loop, s]));

describe('a database damaged while running', () => {
  test('given the demo regulating, when its pages are damaged, then every loop keeps reconciling and StorageHealthy=False is published', async (t) => {
    const published: LoopStatus[] = [];
    const { run, dbPath } = await startDemoStore(t, 'homeostat-corrupt-', 20, {
      onStatus: (s) => published.push(s),
    });

    damagePages(run.db, dbPath);
    const damagedAtMs = run.clock.nowMs();
    // Past the next batched flush (storage.memoryFlushS, 600 s), which meets the damage.
    await run.clock.advance(15 * 60_000);

    for (const status of run.daemon.statuses()) {
      assert.ok(status.updatedAtMs > damagedAtMs + 10 * 60_000, `${status.loop} still cycling`);
      assert.equal(condition(status, 'Reconciled')?.status, 'True', `${status.loop} reconciled`);
      assert.equal(status.observedGeneration, status.generation, `${status.loop} acted on its desired state`);
    }
    const unhealthy = published.filter((s) => condition(s, 'StorageHealthy')?.status === 'False');
    assert.deepEqual(
      [...new Set(unhealthy.map((s) => s.loop))].sort(),
      ['fermenter', 'greenhouse_humidity', 'room'],
      'every loop said the storage was unhealthy',
    );
    assert.equal(condition(unhealthy[0], 'StorageHealthy')?.reason, 'Corrupt');
    assert.match(condition(unhealthy[0], 'StorageHealthy')?.message ?? '', /is damaged .*moved aside/);
    assert.equal(condition(byLoop(run.daemon).room, 'StorageHealthy')?.status, 'True', 'healthy again');
    await run.daemon.stop();
    run.store.close();
  });

  test('given a runtime setpoint, when the file is damaged, then it is moved aside and a fresh one holds the config, the setpoint and an event, without a restart', async (t) => {
    const { run, dbPath } = await startDemoStore(t, 'homeostat-corrupt-', 5);
    run.store.desired.setDesired('room', { setpoint: 21.5 }, 'mqtt');
    const generationBefore = run.store.desired.desired('room')!.generation;
    await run.clock.advance(60_000);

    damagePages(run.db, dbPath);
    await run.clock.advance(15 * 60_000);

    const moved = fs.readdirSync(path.dirname(dbPath)).filter((f) => /^state\.db\.corrupt-/.test(f));
    assert.equal(
      moved.filter((f) => !f.endsWith('-wal') && !f.endsWith('-shm')).length,
      1,
      'moved aside once',
    );
    assert.equal(run.store.health().healthy, true, 'healthy again');
    assert.equal(condition(byLoop(run.daemon).room, 'StorageHealthy')?.status, 'True');
    assert.equal(byLoop(run.daemon).room?.setpoint, 21.5, 'the runtime setpoint stays in force');

    // The fresh file, read by another connection (as `homeostat status` would).
    run.store.database.pragma('wal_checkpoint(PASSIVE)');
    const reader = new Database(dbPath, { readonly: true });
    const room = reader
      .prepare("SELECT setpoint, setpoint_source, generation FROM loop_desired WHERE loop = 'room'")
      .get() as { setpoint: number; setpoint_source: string; generation: number } | undefined;
    assert.equal(room?.setpoint, 21.5);
    assert.equal(room?.setpoint_source, 'mqtt');
    assert.ok(room!.generation > generationBefore, 'generations never go back');
    assert.equal((reader.prepare('SELECT count(*) AS n FROM configs').get() as { n: number }).n, 1);
    const kinds = (reader.prepare('SELECT kind FROM events').all() as Array<{ kind: string }>).map(
      (e) => e.kind,
    );
    assert.ok(kinds.includes('database-recovered'), kinds.join(', '));
    reader.close();
    await run.daemon.stop();
    run.store.close();
  });

  test('given damage only to the desired-state pages (which the loops never read), then it is found within a flush period and recovered', async (t) => {
    const { run, dbPath } = await startDemoStore(t, 'homeostat-corrupt-', 5);
    damageTable(run.db, dbPath, 'loop_desired');
    // One flush period (storage.memoryFlushS, 600 s): the flush reads the desired rows back.
    await run.clock.advance(11 * 60_000);
    const moved = fs.readdirSync(path.dirname(dbPath)).filter((f) => /^state\.db\.corrupt-.*Z$/.test(f));
    assert.equal(moved.length, 1, fs.readdirSync(path.dirname(dbPath)).join(', '));
    assert.equal(run.store.health().healthy, true);
    assert.deepEqual(
      run.store.desired.allDesired().map((row) => row.loop),
      ['fermenter', 'greenhouse_humidity', 'room'],
    );
    await run.daemon.stop();
    run.store.close();
  });

  test('given a latched fault, when the file is damaged and recovered, then the latch is in the fresh file and survives a restart', async (t) => {
    // The room heater barely heats, and the room loop watches its effect (as test/daemon-latch).
    const text = LATCHING_DEMO;
    const dbPath = tempDbPath(t, 'homeostat-corrupt-');
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    let run = await startStoreDaemon(text, dbPath, clock);
    await clock.advance(16 * 60_000);
    assert.equal(condition(byLoop(run.daemon).room, 'Faulted')?.reason, 'LatchedHeatingIneffective');

    damagePages(run.db, dbPath);
    await clock.advance(15 * 60_000);
    assert.equal(run.store.health().healthy, true, 'recovered');
    assert.equal(await run.daemon.drivers.actuators.get('room_heater')!.observe(), 0, 'heater off');

    await run.daemon.stop();
    run.store.close();
    run = await startStoreDaemon(text, dbPath, clock);
    await clock.advance(60_000);
    assert.equal(condition(byLoop(run.daemon).room, 'Faulted')?.reason, 'LatchedHeatingIneffective');
    assert.equal(
      await run.daemon.drivers.actuators.get('room_heater')!.observe(),
      0,
      'still off after a restart',
    );
    await run.daemon.stop();
    run.store.close();
  });
});
