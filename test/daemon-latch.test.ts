/**
 * A latched fault end to end: a heater with (almost) no effect latches HeatingIneffective, the
 * heater stays off (also across a restart), and a reset lets the loop heat again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Daemon } from '../src/daemon/daemon.js';
import { ManualClock } from '../src/runtime/manual-clock.js';
import { holdWriteLock, LATCHING_DEMO, tempDbPath } from './storage/support.js';
import { startStoreDaemon, type TestNode } from './support/node.js';
import type { HasAfter } from './support/tmp.js';

// The room heater barely heats (a heating element fell off), and the room loop watches it.
const TEXT = LATCHING_DEMO;

const start = (dbPath: string, clock: ManualClock) => startStoreDaemon(TEXT, dbPath, clock);

const room = (daemon: Daemon) => daemon.statuses().find((s) => s.loop === 'room')!;
/** Stops the daemon and closes its database, as a clean shutdown does. */
async function stop(run: TestNode): Promise<void> {
  await run.daemon.stop();
  run.db.close();
}

const faulted = (daemon: Daemon) => room(daemon).conditions.find((c) => c.type === 'Faulted');
const heater = async (daemon: Daemon) => daemon.drivers.actuators.get('room_heater')!.observe();

/** A daemon on a new store file whose room latched its fault: 15 minutes of ineffective heating. */
async function startLatched(t: HasAfter, latchedMessage?: string) {
  const dbPath = tempDbPath(t, 'homeostat-latch-');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const run = await start(dbPath, clock);
  await clock.advance(15 * 60_000);
  assert.equal(faulted(run.daemon)?.status, 'True', latchedMessage);
  return { dbPath, clock, run };
}

test('given an ineffective heater, it latches, stays off across a restart, and heats again after a reset', async (t) => {
  const dbPath = tempDbPath(t, 'homeostat-latch-');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let run = await start(dbPath, clock);
  await clock.advance(5 * 60_000);
  assert.equal(await heater(run.daemon), 1, 'heating a cold room');

  // When ten minutes of full heating do not raise the room by 1 °C …
  await clock.advance(10 * 60_000);
  const latched = faulted(run.daemon)!;
  assert.equal(latched.status, 'True');
  assert.equal(latched.reason, 'LatchedHeatingIneffective');
  assert.equal(await heater(run.daemon), 0, '… the heater is off');

  // … and stays off across a restart (the latch was written at once).
  await stop(run);
  run = await start(dbPath, clock);
  await clock.advance(60_000);
  assert.equal(await heater(run.daemon), 0, 'still off after the restart');
  assert.equal(faulted(run.daemon)?.reason, 'LatchedHeatingIneffective');

  // When a person resets it, the loop heats again and the reset is recorded.
  assert.equal(run.daemon.requestFaultReset('room', 'test', clock.nowMs()).accepted, true);
  await clock.advance(2 * 60_000);
  assert.equal(await heater(run.daemon), 1, 'heating again');
  assert.equal(faulted(run.daemon)?.status, 'False');
  assert.ok(
    run.store.desired.events({ loop: 'room' }).some((e) => e.kind === 'fault-reset' && e.source === 'test'),
  );
  assert.equal(
    run.daemon.requestFaultReset('room', 'test', clock.nowMs()).accepted,
    false,
    'nothing latched any more',
  );
  await stop(run);
});

test('given a reset latch, when the daemon dies right after its next cycle (no stop, no batched flush), then after a restart the latch stays cleared', async (t) => {
  const latched = await startLatched(t);
  const { dbPath, clock } = latched;
  let run = latched.run;

  // A person resets it; the loop's next cycle runs; then the process is killed: no stop(), so
  // nothing batched is flushed (memory.flush is 600 s in the demo).
  assert.equal(run.daemon.requestFaultReset('room', 'test', clock.nowMs()).accepted, true);
  await clock.advance(1_000);
  assert.equal(await heater(run.daemon), 1, 'heating again after the reset');
  run.db.close();

  const restarted = new ManualClock(clock.nowMs() + 5_000);
  run = await start(dbPath, restarted);
  await restarted.advance(1_000);
  assert.equal(
    faulted(run.daemon)?.status,
    'False',
    'the reset was written at once: the latch does not come back after a crash',
  );
  await stop(run);
});

test('given the supervised store, when an hour passes, then history retention runs (old events are deleted)', async (t) => {
  const dbPath = tempDbPath(t, 'homeostat-prune-');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  // Events are kept 10 minutes in this config.
  const text = TEXT.replace(/^node:/m, 'storage:\n  eventRetentionS: 600\nnode:');
  const run = await startStoreDaemon(text, dbPath, clock);
  const count = () => (run.db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
  await clock.advance(60_000);
  run.daemon.flush();
  assert.ok(count() > 0, 'events were written at start');
  await clock.advance(3_600_000);
  run.daemon.flush();
  const oldest = run.db.prepare('SELECT MIN(at_ms) AS t FROM events').get() as { t: number | null };
  assert.ok(
    oldest.t === null || oldest.t >= clock.nowMs() - 600_000 - 3_600_000,
    'events older than the retention were pruned by the hourly run',
  );
  assert.equal(
    (
      run.db
        .prepare('SELECT COUNT(*) AS n FROM events WHERE at_ms < ?')
        .get(Date.UTC(2026, 0, 1) + 60_000) as { n: number }
    ).n,
    0,
    'the events of the start are gone',
  );
  await stop(run);
});

test('given a latched fault on file, when the daemon restarts while another process holds the write lock (it starts on the in-memory stand-in), then the latch holds and is still in the file once the lock is gone', async (t) => {
  const latched = await startLatched(t, 'latched');
  const { dbPath, clock } = latched;
  let run = latched.run;
  await stop(run);

  // An edited file (it must be written) while another process holds the lock: the stand-in.
  const release = holdWriteLock(dbPath);
  run = await startStoreDaemon(`${TEXT}\n# edited\n`, dbPath, clock);
  assert.equal(run.store.onStandIn, true, 'started on the stand-in');
  await clock.advance(60_000);
  assert.equal(await heater(run.daemon), 0, 'the heater stays off: the latch came along');
  assert.equal(faulted(run.daemon)?.reason, 'LatchedHeatingIneffective');

  release();
  await clock.advance(60_000);
  assert.equal(run.store.onStandIn, false, 'the file opened again');
  await clock.advance(60_000);
  assert.equal(await heater(run.daemon), 0, 'still held safe');
  await stop(run);

  run = await start(dbPath, clock);
  await clock.advance(60_000);
  assert.equal(await heater(run.daemon), 0, 'and after another restart');
  await stop(run);
});
