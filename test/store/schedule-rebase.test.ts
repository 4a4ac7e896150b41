/**
 * A clock step moves only the stored schedule times the process recorded under the old clock,
 * and never runs nested in another of the store's transactions.
 *
 * Why the window: a Raspberry Pi without a real-time clock boots with a wrong clock (1970, or
 * its last shutdown) and NTP steps it at boot. A profile started days before under a correct
 * clock is at the right step by the restart rule (progress is wall-clock since the start);
 * moving it with the boot-time step shifted it by the downtime (3 days down: 3 days late), and
 * after a 1970 boot moved a 2026 start to 2083.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { type ConfigLoop, DesiredStore, sha256 } from '../../src/store/desired-store.js';
import { desiredStoreFileEachTest } from '../support/store.js';

const LOOPS: Record<string, ConfigLoop> = {
  room: { setpoint: 20, mode: 'heat', sectionHash: sha256('room') },
  cellar: { setpoint: 12, mode: 'cool', sectionHash: sha256('cellar') },
};
const PRESETS = { eco: { setpoint: 17 } };
const H = 3_600_000;
const D = 24 * H;

const disk = desiredStoreFileEachTest();

beforeEach(() => {
  disk.nowMs = Date.UTC(2026, 10, 30, 12);
  disk.store.applyConfig({ text: '# rebase test', loops: LOOPS });
});

describe('DesiredStore.rebaseSchedules: only the times recorded since the process started move', () => {
  for (const stepMs of [D, -H]) {
    test(`a step of ${stepMs / H} h: a profile started before the process start stays, one started after moves`, () => {
      // An earlier run started the cellar's profile; this process started 2 h later.
      disk.store.profileCommand('cellar', { action: 'start', name: 'lager' }, 'mqtt');
      const cellarStartMs = disk.nowMs;
      disk.nowMs += 2 * H;
      const processStartMs = disk.nowMs;
      disk.nowMs += H;
      disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
      const roomStartMs = disk.nowMs;
      disk.nowMs += H;
      disk.store.rebaseSchedules(stepMs, { fromMs: processStartMs, toMs: disk.nowMs });
      disk.reopen();
      assert.equal(disk.store.desired('room')!.profileRun!.startedAtMs, roomStartMs + stepMs, 'moved');
      assert.equal(disk.store.desired('cellar')!.profileRun!.startedAtMs, cellarStartMs, 'left alone');
      assert.deepEqual(
        disk.store.events({ kind: 'profile-rebased' }).map((e) => e.loop),
        ['room'],
      );
    });

    test(`a step of ${stepMs / H} h: a manual change from before the process start stays, a later one moves`, () => {
      disk.store.setDesired('cellar', { setpoint: 11 }, 'mqtt');
      const cellarChangedMs = disk.nowMs;
      disk.nowMs += H;
      const processStartMs = disk.nowMs;
      disk.nowMs += H;
      disk.store.selectPreset('room', 'eco', PRESETS, 'homeassistant');
      const roomChangedMs = disk.nowMs;
      disk.store.rebaseSchedules(stepMs, { fromMs: processStartMs, toMs: disk.nowMs });
      assert.equal(disk.store.desired('room')!.changedAtMs, roomChangedMs + stepMs);
      assert.equal(disk.store.desired('cellar')!.changedAtMs, cellarChangedMs);
    });
  }

  test('a Pi booted in 1970: the boot-time step leaves a profile started in 2026 where it was (not 2083)', () => {
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    const startedAtMs = disk.nowMs; // 2026, under a correct clock, before the reboot
    const bootMs = 5_000; // the clock after a boot without a real-time clock
    const stepMs = startedAtMs + 3 * D - bootMs - 10_000; // NTP: 3 days after the start
    const generation = disk.store.desired('room')!.generation;
    disk.store.rebaseSchedules(stepMs, { fromMs: bootMs, toMs: bootMs + 10_000 });
    assert.equal(disk.store.desired('room')!.profileRun!.startedAtMs, startedAtMs);
    assert.equal(disk.store.desired('room')!.generation, generation, 'nothing written');
    assert.deepEqual(disk.store.events({ kind: 'profile-rebased' }), []);
  });

  test('a pause this process recorded moves, the start from an earlier run stays', () => {
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    const startedAtMs = disk.nowMs;
    disk.nowMs += D;
    const processStartMs = disk.nowMs;
    disk.nowMs += H;
    disk.store.profileCommand('room', { action: 'pause' }, 'mqtt');
    const pausedAtMs = disk.nowMs;
    disk.store.rebaseSchedules(H, { fromMs: processStartMs, toMs: disk.nowMs });
    const run = disk.store.desired('room')!.profileRun!;
    assert.deepEqual([run.startedAtMs, run.pausedAtMs], [startedAtMs, pausedAtMs + H]);
  });
});

describe('DesiredStore.rebaseSchedules inside another of its transactions (a clock read noticed the step)', () => {
  test('given a +1 day step noticed inside selectPreset, then the profile start moves, on disk and in memory', async () => {
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    const startedAtMs = disk.nowMs;
    // A clock whose next read notices a step and tells its listener from inside the read, as
    // RealClock does; the listener rebases at once (no queueing in between).
    let pendingStepMs = D;
    let store: DesiredStore;
    const nowMs = () => {
      if (pendingStepMs !== 0) {
        const stepMs = pendingStepMs;
        pendingStepMs = 0;
        disk.nowMs += stepMs;
        store.rebaseSchedules(stepMs);
      }
      return disk.nowMs;
    };
    store = new DesiredStore(disk.db, nowMs);
    store.selectPreset('room', 'eco', PRESETS, 'homeassistant');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(store.desired('room')!.profileRun!.startedAtMs, startedAtMs + D, 'in memory');
    assert.equal(store.desired('room')!.preset, 'eco', 'the selection is kept');
    assert.deepEqual(store.readBack(), [], 'the file agrees with memory');
    disk.reopen();
    assert.equal(disk.store.desired('room')!.profileRun!.startedAtMs, startedAtMs + D, 'on disk');
  });
});
