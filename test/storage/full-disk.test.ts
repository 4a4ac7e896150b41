/**
 * A full disk, on a small tmpfs. Before: full at start meant exit 1 before any loop
 * ran (and the hint for SQLITE_IOERR_SHMSIZE did not say "disk full"); full while running
 * logged one error per write. Now: the daemon starts and regulates from the config on an
 * in-memory stand-in with StorageHealthy=False ("disk full: free space on …"), retries the file
 * with capped backoff and carries the state kept in memory over once it opens; while running,
 * regulation goes on, writes are retried, and the streak is logged once.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { recordingLogger } from '../support/logger.js';
import { startStoreDaemon } from '../support/node.js';
import { DEMO, fillUp, smallFilesystem, storageHealthy } from './support.js';

describe('a full disk', () => {
  test('given a full disk at start, then the loops regulate from the config, StorageHealthy says disk full, and once space is freed the file opens with the state carried over', async (t) => {
    const fsys = smallFilesystem(256);
    if ('skip' in fsys) return t.skip(fsys.skip);
    try {
      fillUp(fsys.dir);
      const dbPath = path.join(fsys.dir, 'state.db');
      const { logger, lines } = recordingLogger({ level: 'debug' });
      const run = await startStoreDaemon(DEMO, dbPath, undefined, { logger });
      await run.clock.advance(20 * 60_000);

      for (const status of run.daemon.statuses()) {
        assert.equal(status.conditions.find((c) => c.type === 'Reconciled')?.status, 'True', status.loop);
        assert.equal(storageHealthy(run.daemon, status.loop)?.status, 'False');
        assert.equal(storageHealthy(run.daemon, status.loop)?.reason, 'Full');
      }
      assert.match(
        storageHealthy(run.daemon, 'room')?.message ?? '',
        new RegExp(`^disk full: free space on the filesystem holding ${fsys.dir}`),
      );
      // A command on the stand-in is kept in memory and carried over.
      run.store.desired.setDesired('room', { setpoint: 21 }, 'mqtt');
      // Many reopen attempts in 20 minutes (capped backoff): one error line for all of them.
      assert.equal(lines.filter((l) => l.level >= 50).length, 1, lines.map((l) => l.msg).join('\n'));

      fs.rmSync(path.join(fsys.dir, 'filler'));
      await run.clock.advance(2 * 60_000);
      assert.equal(run.store.onStandIn, false, 'the file is open');
      assert.equal(storageHealthy(run.daemon, 'room')?.status, 'True');
      await run.clock.advance(10 * 60_000);
      run.store.database.pragma('wal_checkpoint(PASSIVE)');
      const reader = new Database(dbPath, { readonly: true });
      const rows = reader
        .prepare('SELECT loop, setpoint, setpoint_source FROM loop_desired ORDER BY loop')
        .all();
      const states = reader.prepare('SELECT count(*) AS n FROM loop_state').get() as { n: number };
      reader.close();
      assert.deepEqual(rows, [
        { loop: 'fermenter', setpoint: 18, setpoint_source: 'file' },
        { loop: 'greenhouse_humidity', setpoint: 65, setpoint_source: 'file' },
        { loop: 'room', setpoint: 21, setpoint_source: 'mqtt' },
      ]);
      assert.equal(states.n, 3, 'every loop memory written');
      await run.daemon.stop();
      run.store.close();
    } finally {
      fsys.unmount();
    }
  });

  test('given a disk that fills while running, then regulation goes on, commands are refused, writes are retried, and it is logged once', async (t) => {
    const fsys = smallFilesystem(512);
    if ('skip' in fsys) return t.skip(fsys.skip);
    try {
      const dbPath = path.join(fsys.dir, 'state.db');
      const { logger, lines } = recordingLogger({ level: 'debug' });
      const run = await startStoreDaemon(DEMO, dbPath, undefined, { logger });
      await run.clock.advance(60_000);
      fillUp(fsys.dir);
      const fullAtMs = run.clock.nowMs();

      // Four hours of flushes and a command every 4 minutes. A small command may still fit on
      // the nearly full disk; one that does not is refused and changes nothing.
      let refused = 0;
      for (let i = 0; i < 60; i++) {
        await run.clock.advance(4 * 60_000);
        const before = run.store.desired.desired('room');
        try {
          run.store.desired.setDesired('room', { setpoint: 19 + (i % 3) }, 'mqtt');
        } catch {
          refused++;
          assert.deepEqual(run.store.desired.desired('room'), before, 'a refused command changes nothing');
        }
      }
      assert.ok(refused > 0, 'commands met the full disk');
      assert.equal(storageHealthy(run.daemon, 'room')?.reason, 'Full');
      for (const status of run.daemon.statuses()) {
        assert.ok(status.updatedAtMs > fullAtMs + 230 * 60_000, `${status.loop} still cycling`);
        assert.equal(status.conditions.find((c) => c.type === 'Reconciled')?.status, 'True');
      }
      const errors = lines.filter((l) => l.level >= 50);
      assert.equal(errors.length, 1, errors.map((l) => l.msg).join('\n'));
      assert.match(errors[0]!.msg, /disk full/);

      fs.rmSync(path.join(fsys.dir, 'filler'));
      await run.clock.advance(10 * 60_000);
      assert.equal(storageHealthy(run.daemon, 'room')?.status, 'True', 'healthy once a flush went through');
      assert.equal(lines.filter((l) => /writable again/.test(l.msg)).length, 1);
      await run.daemon.stop();
      run.store.close();
    } finally {
      fsys.unmount();
    }
  });
});
