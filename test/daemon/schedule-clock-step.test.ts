/**
 * The clock-step wiring for stored schedules (clock-step.ts): the rebase is
 * queued, never run from inside the clock read (which may lie inside a store transaction), and
 * moves only what this process recorded under the old clock.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { shiftRunningTimes } from '../../src/daemon/clock-step.js';
import { type ConfigLoop, DesiredStore, sha256 } from '../../src/store/desired-store.js';
import { silentLogger } from '../support/logger.js';
import { desiredStoreFileEachTest } from '../support/store.js';

const LOOPS: Record<string, ConfigLoop> = {
  room: { setpoint: 20, mode: 'heat', sectionHash: sha256('room') },
};
const PRESETS = { eco: { setpoint: 17 } };
const H = 3_600_000;
const D = 24 * H;

const disk = desiredStoreFileEachTest();

beforeEach(() => {
  disk.nowMs = Date.UTC(2026, 10, 30, 12);
  disk.store.applyConfig({ text: '# clock step test', loops: LOOPS });
});

/**
 * A daemon's clock-step wiring around the real store: a clock that notices a step armed with
 * `stepOnNextRead` at its next read and tells the listener from inside that read, as RealClock does.
 */
function wired(processStartMs: number) {
  let pendingStepMs = 0;
  const processStart = { ms: processStartMs };
  const nowMs = (): number => {
    if (pendingStepMs !== 0) {
      const deltaMs = pendingStepMs;
      pendingStepMs = 0;
      disk.nowMs += deltaMs;
      shiftRunningTimes(deltaMs, {
        loops: new Map(),
        logger: silentLogger,
        schedules: { store, processStart, nowMs },
      });
    }
    return disk.nowMs;
  };
  const store = new DesiredStore(disk.db, nowMs);
  return {
    store,
    processStart,
    stepOnNextRead: (deltaMs: number) => {
      pendingStepMs = deltaMs;
    },
  };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('a clock step noticed inside a store call (selectPreset)', () => {
  for (const stepMs of [D, -H]) {
    test(`a step of ${stepMs / H} h: the profile start moves once, the selection's stamp stays on the new clock`, async () => {
      const w = wired(disk.nowMs - 2 * H); // this process started 2 h before the profile
      w.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
      const startedAtMs = disk.nowMs;
      disk.nowMs += 30 * 60_000;
      w.stepOnNextRead(stepMs);
      w.store.selectPreset('room', 'eco', PRESETS, 'homeassistant');
      const selectedAtMs = disk.nowMs; // the new clock's reading
      await settled();
      const row = w.store.desired('room')!;
      assert.equal(row.profileRun!.startedAtMs, startedAtMs + stepMs, 'the start moved with the step');
      assert.equal(row.changedAtMs, selectedAtMs, 'stamped after the step: not moved again');
      assert.equal(row.preset, 'eco');
      assert.deepEqual(w.store.readBack(), [], 'the file agrees with memory');
      disk.reopen();
      assert.equal(disk.store.desired('room')!.profileRun!.startedAtMs, startedAtMs + stepMs, 'committed');
      assert.equal(w.processStart.ms, startedAtMs - 2 * H + stepMs, 'the process start moved with the step');
    });
  }
});

describe('a boot-time step (a Pi without a real-time clock)', () => {
  test('a profile started before this process, under a correct clock, is not moved; one started since is', async () => {
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    const startedAtMs = disk.nowMs; // before the reboot
    // Rebooted 3 days later, the clock at its last shutdown (a day after the start).
    disk.nowMs = startedAtMs + D;
    const w = wired(disk.nowMs);
    disk.nowMs += 10_000;
    w.stepOnNextRead(2 * D); // NTP sets it right
    w.store.profileCommand('room', { action: 'pause' }, 'mqtt');
    const pausedAtMs = disk.nowMs; // on the new clock: 3 days after the start
    await settled();
    const run = w.store.desired('room')!.profileRun!;
    assert.equal(
      run.startedAtMs,
      startedAtMs,
      'the restart rule: 3 days of progress, at the crash step if due',
    );
    assert.equal(run.pausedAtMs, pausedAtMs);
  });

  test('in the queued rebase, the store is not inside a transaction and the loops are triggered after it', async () => {
    const w = wired(disk.nowMs);
    w.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    const startedAtMs = disk.nowMs;
    const order: string[] = [];
    const loops = new Map([
      [
        'room',
        {
          cycle: { shiftTimes() {} },
          runner: {
            shiftTimes() {},
            trigger: () =>
              order.push(`trigger, start ${w.store.desired('room')!.profileRun!.startedAtMs - startedAtMs}`),
          },
        },
      ],
    ]);
    shiftRunningTimes(H, {
      loops: loops as never,
      logger: silentLogger,
      schedules: { store: w.store, processStart: w.processStart, nowMs: () => disk.nowMs + H },
    });
    order.push(`returned, start ${w.store.desired('room')!.profileRun!.startedAtMs - startedAtMs}`);
    await settled();
    assert.deepEqual(order, ['returned, start 0', `trigger, start ${H}`]);
  });
});
