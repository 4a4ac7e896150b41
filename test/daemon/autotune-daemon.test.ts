/**
 * The autotune end to end in the node as `homeostat run` builds it (real SQLite file, manual
 * clock, simulated room): a stored request starts a run, its result becomes one tuning version
 * (applied with autoApply, proposed without), events are logged, and a restart neither stores
 * it twice nor lets a run continue.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PublishedLoopStatus } from '../../src/runtime/loop-reconciler.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { tempDbPath } from '../storage/support.js';
import { startStoreDaemon, type TestNode } from '../support/node.js';

/** A room (K 20, τ 600 s, θ 60 s) heated by a dimmer; `autotune` is the loop's section. */
function configText(autotune: string): string {
  return `version: 1
node: { id: tune }
simulation:
  plants:
    room: { kind: thermal, ambient: 10, timeConstantS: 600, deadTimeS: 60, initial: 20, noise: 0.03, quantization: 0.0625 }
  seed: 3
sensors:
  room_temp: { kind: simulated, plant: room, periodS: 5 }
actuators:
  heater: { kind: simulated_continuous, plant: room, gain: 20 }
loops:
  room:
    sensor: room_temp
    raise: heater
    mode: heat
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.2, tiS: 900, tdS: 0 }
${autotune}`;
}

const MINUTE = 60_000;
const room = (run: TestNode) => run.daemon.statuses().find((s) => s.loop === 'room') as PublishedLoopStatus;
const phase = (run: TestNode) => room(run).autotune?.phase;

function requestStart(run: TestNode): void {
  run.store.desired.requestAutotune('room', {
    action: 'start',
    requestedAtMs: run.clock.nowMs(),
    source: 'http',
  });
  run.daemon.triggerLoop('room', 'autotune');
}

/** Advances a minute at a time until the run ended (at most `maxMinutes`). */
async function untilEnded(run: TestNode, maxMinutes: number): Promise<void> {
  for (let minute = 0; minute < maxMinutes; minute++) {
    await run.clock.advance(MINUTE);
    if (phase(run) === 'done' || phase(run) === 'aborted') return;
  }
  assert.fail(`still ${phase(run)} after ${maxMinutes} min`);
}

const eventKinds = (run: TestNode) => {
  run.daemon.flush();
  return run.store.desired.events({ loop: 'room' }).map((e) => e.kind);
};

test('given autoApply, a requested run ends with one applied tuning that survives a restart and is not stored twice', async (t) => {
  const dbPath = tempDbPath(t, 'homeostat-autotune-');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let run = await startStoreDaemon(configText('    autotune: { autoApply: true }'), dbPath, clock);
  await clock.advance(60 * MINUTE);
  requestStart(run);
  await clock.advance(10_000);
  assert.equal(phase(run), 'noise', 'started at the next cycle');
  await untilEnded(run, 180);
  assert.equal(phase(run), 'done', room(run).autotune?.abortReason);
  await clock.advance(MINUTE);

  const tunings = run.store.desired.tunings('room');
  assert.equal(tunings.length, 1);
  const [tuning] = tunings as [(typeof tunings)[number]];
  assert.equal(tuning.active, true, 'applied');
  assert.equal(tuning.source, 'autotune');
  assert.ok(Math.abs(tuning.model!.gain - 20) < 2, `K ${tuning.model!.gain}`);
  assert.deepEqual(room(run).tuning, { active: 1, latest: 1 });
  const kinds = eventKinds(run);
  for (const kind of ['autotune-requested', 'autotune-started', 'autotune-done', 'tuning-applied'])
    assert.ok(kinds.includes(kind), `event ${kind} in ${kinds.join(', ')}`);

  await run.stop();
  run = await startStoreDaemon(configText('    autotune: { autoApply: true }'), dbPath, clock);
  await clock.advance(10 * MINUTE);
  assert.equal(run.store.desired.tunings('room').length, 1, 'not stored again after the restart');
  assert.deepEqual(room(run).tuning, { active: 1, latest: 1 }, 'still in force');
  await run.stop();
});

test('without autoApply the result is proposed: the file gains stay in force, the status names the proposal', async (t) => {
  const dbPath = tempDbPath(t, 'homeostat-autotune-');
  const run = await startStoreDaemon(configText(''), dbPath);
  await run.clock.advance(60 * MINUTE);
  requestStart(run);
  await untilEnded(run, 180);
  await run.clock.advance(MINUTE);
  assert.equal(phase(run), 'done');
  const tunings = run.store.desired.tunings('room');
  assert.deepEqual(
    tunings.map((x) => [x.version, x.active]),
    [[1, false]],
  );
  assert.deepEqual(room(run).tuning, { active: 'config', latest: 1 });
  assert.ok(eventKinds(run).includes('tuning-proposed'));
  await run.stop();
});

test('a restart mid-run aborts it ("interrupted by a restart"), once, and the loop regulates again', async (t) => {
  const dbPath = tempDbPath(t, 'homeostat-autotune-');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let run = await startStoreDaemon(configText(''), dbPath, clock);
  await clock.advance(60 * MINUTE);
  requestStart(run);
  await clock.advance(5 * MINUTE);
  assert.equal(phase(run), 'relay');
  // Killed: no stop, nothing batched flushed since the request was acted on (written at once).
  run.db.close();

  run = await startStoreDaemon(configText(''), dbPath, clock);
  await clock.advance(MINUTE);
  assert.equal(phase(run), 'aborted');
  assert.equal(room(run).autotune?.abortReason, 'interrupted by a restart');
  await clock.advance(30 * MINUTE);
  assert.equal(phase(run), 'aborted', 'the request is not acted on again');
  assert.equal(eventKinds(run).filter((kind) => kind === 'autotune-aborted').length, 1);
  assert.ok(Math.abs((room(run).measured ?? 0) - 20) < 1, 'regulating at the setpoint again');
  await run.stop();
});

test('a start stored before a kill that the memory had not recorded yet (memory is batched) does not start a run at restart: it ends as aborted, "interrupted by a restart", in status and events', async (t) => {
  const dbPath = tempDbPath(t, 'homeostat-autotune-');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let run = await startStoreDaemon(configText(''), dbPath, clock);
  await clock.advance(60 * MINUTE);
  run.daemon.flush();
  // The request is committed (and answered) …
  run.store.desired.requestAutotune('room', {
    action: 'start',
    requestedAtMs: clock.nowMs(),
    source: 'http',
  });
  // … and the process is killed before any cycle acted on it (nothing written since).
  run.db.close();

  run = await startStoreDaemon(configText(''), dbPath, clock);
  await clock.advance(MINUTE);
  assert.equal(phase(run), 'aborted', JSON.stringify(room(run).autotune));
  assert.equal(room(run).autotune?.abortReason, 'interrupted by a restart');
  await clock.advance(30 * MINUTE);
  const kinds = eventKinds(run);
  assert.equal(kinds.filter((kind) => kind === 'autotune-started').length, 0, 'no run started');
  assert.equal(kinds.filter((kind) => kind === 'autotune-aborted').length, 1);
  assert.equal(phase(run), 'aborted', 'the request is not acted on again');
  assert.ok(Math.abs((room(run).measured ?? 0) - 20) < 1, 'regulating at the setpoint');

  // A start asked of this process runs as usual.
  requestStart(run);
  await clock.advance(5 * MINUTE);
  assert.ok(phase(run) === 'noise' || phase(run) === 'relay', String(phase(run)));
  await run.stop();
});
