/**
 * The desired-state read of a loop cycle. Before: it ran outside the cycle's error
 * handling, so a read that threw skipped reconcile with every actuator frozen. Now: the daemon
 * reads desired state from memory, and should a read still throw, the cycle regulates on the
 * last desired state it had.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore, type LoopDesiredRow } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';
import { errnoError } from '../support/assert.js';
import { silentLogger } from '../support/logger.js';
import { DEMO, tempDbPath } from './support.js';

/** A desired store whose reads throw while `broken` (a damaged page, say). */
class BreakableDesiredStore extends DesiredStore {
  broken = false;
  override desired(loop: string): LoopDesiredRow | undefined {
    if (this.broken) throw errnoError('SQLITE_CORRUPT', 'database disk image is malformed');
    return super.desired(loop);
  }
}

test('given a desired-state read that starts throwing, then every loop regulates on from its last desired state', async (t) => {
  const text = DEMO;
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok);
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const logger = silentLogger;
  const dbPath = tempDbPath(t, 'homeostat-read-');
  const { db } = openStore({ path: dbPath, logger, nowMs: () => clock.nowMs() });
  const desired = new BreakableDesiredStore(db, () => clock.nowMs());
  const daemon = new Daemon({
    config: loaded.config,
    configText: text,
    clock,
    logger,
    store: { desired, state: new StateStore(db) },
    statusEveryMs: 0,
  });
  await daemon.start();
  await clock.advance(10 * 60_000);

  desired.broken = true;
  const brokenAtMs = clock.nowMs();
  await clock.advance(30 * 60_000);

  for (const status of daemon.statuses()) {
    assert.ok(status.updatedAtMs > brokenAtMs + 25 * 60_000, `${status.loop} still cycling`);
    assert.equal(status.conditions.find((c) => c.type === 'Reconciled')?.status, 'True', status.loop);
  }
  const room = daemon.statuses().find((s) => s.loop === 'room')!;
  assert.ok(
    Math.abs(room.measured! - room.setpoint) < 1,
    `room regulated: ${room.measured} vs ${room.setpoint}`,
  );
  await daemon.stop();
  db.close();
});
