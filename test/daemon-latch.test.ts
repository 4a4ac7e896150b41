/**
 * A latched fault end to end: a heater with (almost) no effect latches HeatingIneffective, the
 * heater stays off (also across a restart), and a reset lets the loop heat again.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { Daemon } from '../src/daemon.js';
import { ManualClock } from '../src/runtime/manual-clock.js';
import { startStoreDaemon } from './helpers/store-daemon.js';

// The room heater barely heats (a heating element fell off), and the room loop watches it.
const TEXT = fs
  .readFileSync('config/demo.yaml', 'utf8')
  .replace('gain: 20 # a heater raises: positive', 'gain: 0.05')
  .replace(
    '    raise: room_heater # only a heater, so the modes are off and heat\n',
    (line) => `${line}    effectWatch: { periodS: 600, minChange: 1 }\n`,
  );

const start = (dbPath: string, clock: ManualClock) => startStoreDaemon(TEXT, dbPath, clock);

const room = (daemon: Daemon) => daemon.statuses().find((s) => s.loop === 'room')!;
const heater = async (daemon: Daemon) => daemon.drivers.actuators.get('room_heater')!.observe();

test('given an ineffective heater, it latches, stays off across a restart, and heats again after a reset', async () => {
  const dbPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'homeostat-latch-')), 'state.db');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let run = await start(dbPath, clock);
  await clock.advance(5 * 60_000);
  assert.equal(await heater(run.daemon), 1, 'heating a cold room');

  // When ten minutes of full heating do not raise the room by 1 °C …
  await clock.advance(10 * 60_000);
  const faulted = room(run.daemon).conditions.find((c) => c.type === 'Faulted')!;
  assert.equal(faulted.status, 'True');
  assert.equal(faulted.reason, 'LatchedHeatingIneffective');
  assert.equal(await heater(run.daemon), 0, '… the heater is off');

  // … and stays off across a restart (the latch was written at once).
  await run.daemon.stop();
  run.db.close();
  run = await start(dbPath, clock);
  await clock.advance(60_000);
  assert.equal(await heater(run.daemon), 0, 'still off after the restart');
  assert.equal(
    room(run.daemon).conditions.find((c) => c.type === 'Faulted')?.reason,
    'LatchedHeatingIneffective',
  );

  // When a person resets it, the loop heats again and the reset is recorded.
  assert.equal(run.daemon.resetFault('room', 'test', clock.nowMs()), true);
  await clock.advance(2 * 60_000);
  assert.equal(await heater(run.daemon), 1, 'heating again');
  assert.equal(room(run.daemon).conditions.find((c) => c.type === 'Faulted')?.status, 'False');
  assert.ok(
    run.store.desired.events({ loop: 'room' }).some((e) => e.kind === 'fault-reset' && e.source === 'test'),
  );
  assert.equal(run.daemon.resetFault('room', 'test', clock.nowMs()), false, 'nothing latched any more');
  await run.daemon.stop();
  run.db.close();
});

test('given a reset latch, when the daemon dies right after its next cycle (no stop, no batched flush), then after a restart the latch stays cleared', async () => {
  const dbPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'homeostat-latch-')), 'state.db');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let run = await start(dbPath, clock);
  await clock.advance(15 * 60_000);
  assert.equal(room(run.daemon).conditions.find((c) => c.type === 'Faulted')?.status, 'True');

  // A person resets it; the loop's next cycle runs; then the process is killed: no stop(), so
  // nothing batched is flushed (memory.flush is 600 s in the demo).
  assert.equal(run.daemon.resetFault('room', 'test', clock.nowMs()), true);
  await clock.advance(1_000);
  assert.equal(await heater(run.daemon), 1, 'heating again after the reset');
  run.db.close();

  const restarted = new ManualClock(clock.nowMs() + 5_000);
  run = await start(dbPath, restarted);
  await restarted.advance(1_000);
  assert.equal(
    room(run.daemon).conditions.find((c) => c.type === 'Faulted')?.status,
    'False',
    'the reset was written at once: the latch does not come back after a crash',
  );
  await run.daemon.stop();
  run.db.close();
});
