/**
 * Another process holding the database's write lock. Before: busy_timeout 5000 made
 * every write wait 5 s with the whole event loop blocked. Now: a write meets the lock within a
 * few ms and fails; a command is answered rejected and changes nothing, the batched state is
 * retried at the next flush, every loop shows StorageHealthy=False (Locked), and the streak is
 * logged once. `npm run bench:storage-lock` measures the event-loop stall.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { recordingLogger } from '../support/logger.js';
import { holdWriteLock, startDemoStore, storageHealthy } from './support.js';

describe('a write lock held by another process', () => {
  test('given a lock, when a command comes, then it is rejected with the reason and changes nothing', async (t) => {
    const { run, dbPath } = await startDemoStore(t, 'homeostat-lock-', 1);
    const before = run.store.desired.desired('room');
    const release = holdWriteLock(dbPath);

    assert.throws(() => run.store.desired.setDesired('room', { setpoint: 23 }, 'mqtt'), {
      code: 'SQLITE_BUSY',
      message: /locked by another process .*not stored and changed nothing/,
    });
    assert.deepEqual(run.store.desired.desired('room'), before, 'nothing changed');
    await run.clock.advance(60_000);
    assert.equal(run.daemon.statuses().find((s) => s.loop === 'room')?.setpoint, before?.setpoint);
    assert.equal(storageHealthy(run.daemon, 'room')?.status, 'False');
    assert.equal(storageHealthy(run.daemon, 'room')?.reason, 'Locked');
    assert.match(storageHealthy(run.daemon, 'room')?.message ?? '', /locked by another process/);

    release();
    assert.equal(
      run.store.desired.setDesired('room', { setpoint: 23 }, 'mqtt').changed,
      true,
      'accepted once free',
    );
    // Healthy again once the batched state held back is written (next flush, memoryFlushS 600 s).
    await run.clock.advance(600_000);
    assert.equal(storageHealthy(run.daemon, 'room')?.status, 'True');
    await run.daemon.stop();
    run.store.close();
  });

  test('given a lock over many flushes, then regulation goes on, the state is written once it is free, and the streak is logged once', async (t) => {
    const { logger, lines } = recordingLogger({ level: 'debug' });
    const { run, dbPath } = await startDemoStore(t, 'homeostat-lock-', 1, { logger });
    const release = holdWriteLock(dbPath);
    const lockedAtMs = run.clock.nowMs();

    // Two hours: twelve flushes (storage.memoryFlushS 600 s) and many commands meet the lock.
    for (let i = 0; i < 30; i++) {
      await run.clock.advance(4 * 60_000);
      assert.throws(() => run.store.desired.setDesired('room', { setpoint: 20 + (i % 3) }, 'mqtt'));
    }
    for (const status of run.daemon.statuses()) {
      assert.ok(status.updatedAtMs > lockedAtMs + 110 * 60_000, `${status.loop} still cycling`);
      assert.equal(status.conditions.find((c) => c.type === 'Reconciled')?.status, 'True');
    }
    const errors = lines.filter((l) => l.level >= 50);
    assert.equal(errors.length, 1, errors.map((l) => l.msg).join('\n'));
    assert.match(errors[0]!.msg, /locked by another process/);

    release();
    await run.clock.advance(600_000);
    const reader = new Database(dbPath, { readonly: true });
    const saved = reader.prepare("SELECT saved_at_ms FROM loop_state WHERE loop = 'room'").get() as {
      saved_at_ms: number;
    };
    reader.close();
    assert.ok(saved.saved_at_ms > lockedAtMs + 110 * 60_000, 'the state held back was written');
    assert.equal(lines.filter((l) => l.level >= 50).length, 1, 'no more errors');
    assert.equal(lines.filter((l) => /writable again/.test(l.msg)).length, 1, 'the recovery is logged once');
    assert.equal(storageHealthy(run.daemon, 'room')?.status, 'True');
    await run.daemon.stop();
    run.store.close();
  });
});
