import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { openStandIn } from '../../src/store/database.js';
import { type ConfigLoop, DesiredStore, sha256 } from '../../src/store/desired-store.js';
import { silentLogger } from '../support/logger.js';
import { desiredStoreFileEachTest } from '../support/store.js';

const PRESETS = { eco: { setpoint: 17 }, away: { setpoint: 12, mode: 'off' as const } };
const LOOPS: Record<string, ConfigLoop> = {
  room: { setpoint: 20, mode: 'heat', sectionHash: sha256('room') },
  cellar: { setpoint: 12, mode: 'cool', sectionHash: sha256('cellar') },
};
const TEXT = '# schedule store test';

const disk = desiredStoreFileEachTest();

beforeEach(() => {
  disk.store.applyConfig({ text: TEXT, loops: LOOPS });
});

/** The loop's events of `kind` since the config was applied. */
const eventsOf = (kind: string) => disk.store.events({ loop: 'room', kind });

describe('DesiredStore.setDesired: the manual change is stamped', () => {
  test('given a setpoint change, then changedAtMs is now and the preset is cleared', () => {
    disk.store.selectPreset('room', 'eco', PRESETS, 'mqtt');
    disk.nowMs += 5_000;
    const result = disk.store.setDesired('room', { setpoint: 21 }, 'homeassistant');
    assert.equal(result.changed, true);
    const row = disk.store.desired('room')!;
    assert.equal(row.changedAtMs, disk.nowMs);
    assert.equal(row.preset, undefined, 'a manual setpoint leaves the preset');
  });

  test('given a preset, a setpoint equal to its value is still a change: it leaves the preset', () => {
    disk.store.selectPreset('room', 'eco', PRESETS, 'mqtt');
    const result = disk.store.setDesired('room', { setpoint: 17 }, 'mqtt');
    assert.equal(result.changed, true);
    assert.equal(disk.store.desired('room')?.preset, undefined);
    assert.deepEqual(
      eventsOf('preset-changed').map((e) => e.message),
      ['preset none → eco (mqtt)', 'preset eco → none (mqtt)'],
    );
  });

  test('a mode change keeps the preset, and stamps the change', () => {
    disk.store.selectPreset('room', 'eco', PRESETS, 'mqtt');
    disk.nowMs += 1_000;
    disk.store.setDesired('room', { mode: 'off' }, 'http');
    assert.equal(disk.store.desired('room')?.preset, 'eco');
    assert.equal(disk.store.desired('room')?.changedAtMs, disk.nowMs);
  });
});

describe('DesiredStore.selectPreset', () => {
  test('given a preset, then its setpoint and mode are stored with the next generation, an event, committed', () => {
    const before = disk.store.desired('room')!.generation;
    const result = disk.store.selectPreset('room', 'away', PRESETS, 'homeassistant', 'r1');
    assert.deepEqual(result, { changed: true, generation: before + 1 });
    disk.reopen();
    const row = disk.store.desired('room')!;
    assert.equal(row.preset, 'away');
    assert.equal(row.setpoint, 12);
    assert.equal(row.mode, 'off');
    assert.equal(row.setpointSource, 'homeassistant');
    assert.equal(row.changedAtMs, disk.nowMs);
    const [event] = eventsOf('preset-changed');
    assert.deepEqual(event?.data, { from: null, to: 'away', generation: before + 1, requestId: 'r1' });
  });

  test('the preset already selected is a no-op (QoS 1 duplicate): no generation, no event', () => {
    const first = disk.store.selectPreset('room', 'eco', PRESETS, 'mqtt');
    const again = disk.store.selectPreset('room', 'eco', PRESETS, 'mqtt');
    assert.deepEqual(again, { changed: false, generation: first.generation });
    assert.equal(eventsOf('preset-changed').length, 1);
  });

  test('null clears the preset only (the setpoint stays); null again is a no-op', () => {
    disk.store.selectPreset('room', 'eco', PRESETS, 'mqtt');
    const cleared = disk.store.selectPreset('room', null, PRESETS, 'mqtt');
    assert.equal(cleared.changed, true);
    assert.equal(disk.store.desired('room')?.preset, undefined);
    assert.equal(disk.store.desired('room')?.setpoint, 17);
    assert.equal(disk.store.selectPreset('room', null, PRESETS, 'mqtt').changed, false);
  });

  test('an unknown loop or a name not among the presets throws, nothing written', () => {
    const generation = disk.store.desired('room')!.generation;
    assert.throws(() => disk.store.selectPreset('nope', 'eco', PRESETS, 'mqtt'), /unknown loop/);
    assert.throws(() => disk.store.selectPreset('room', 'ecco', PRESETS, 'mqtt'), /unknown preset "ecco"/);
    assert.equal(disk.store.desired('room')!.generation, generation);
  });
});

describe('DesiredStore.profileCommand', () => {
  test('start, pause, resume, stop: each the next generation, an event, stored in the file', () => {
    const start = disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'cli');
    assert.equal(start.changed, true);
    const startedAtMs = disk.nowMs;
    disk.nowMs += 60_000;
    const pause = disk.store.profileCommand('room', { action: 'pause' }, 'mqtt');
    assert.equal(pause.generation, start.generation + 1);
    disk.nowMs += 30_000;
    disk.reopen();
    assert.deepEqual(disk.store.desired('room')?.profileRun, {
      name: 'ale',
      startedAtMs,
      pausedAtMs: startedAtMs + 60_000,
      pausedTotalMs: 0,
    });
    disk.store.profileCommand('room', { action: 'resume' }, 'http');
    assert.deepEqual(disk.store.desired('room')?.profileRun, {
      name: 'ale',
      startedAtMs,
      pausedTotalMs: 30_000,
      resumedAtMs: startedAtMs + 90_000,
    });
    const stop = disk.store.profileCommand('room', { action: 'stop' }, 'homeassistant');
    assert.equal(stop.changed, true);
    assert.equal(disk.store.desired('room')?.profileRun, undefined);
    assert.deepEqual(
      disk.store
        .events({ loop: 'room' })
        .filter((e) => e.kind.startsWith('profile-'))
        .map((e) => e.message),
      [
        'profile ale started (cli)',
        'profile ale paused (mqtt)',
        'profile ale resumed (http)',
        'profile ale stopped (homeassistant)',
      ],
    );
  });

  const noOps: {
    name: string;
    before: (store: DesiredStore) => void;
    command: Parameters<DesiredStore['profileCommand']>[1];
  }[] = [
    { name: 'pause with none started', before: () => {}, command: { action: 'pause' } },
    { name: 'resume with none started', before: () => {}, command: { action: 'resume' } },
    { name: 'stop with none started', before: () => {}, command: { action: 'stop' } },
    {
      name: 'pause when paused',
      before: (s) => {
        s.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
        s.profileCommand('room', { action: 'pause' }, 'mqtt');
      },
      command: { action: 'pause' },
    },
    {
      name: 'resume when running',
      before: (s) => s.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt'),
      command: { action: 'resume' },
    },
    {
      name: 'start of the profile already started (a duplicate)',
      before: (s) => s.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt'),
      command: { action: 'start', name: 'ale' },
    },
  ];
  for (const { name, before, command } of noOps) {
    test(`${name}: a no-op, no generation, no event`, () => {
      before(disk.store);
      const generation = disk.store.desired('room')!.generation;
      const events = disk.store.events({ loop: 'room' }).length;
      assert.deepEqual(disk.store.profileCommand('room', command, 'mqtt'), { changed: false, generation });
      assert.equal(disk.store.events({ loop: 'room' }).length, events);
    });
  }

  test('start of another profile while one runs restarts with the new name, from now', () => {
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    disk.nowMs += 10_000;
    assert.equal(disk.store.profileCommand('room', { action: 'start', name: 'lager' }, 'mqtt').changed, true);
    assert.deepEqual(disk.store.desired('room')?.profileRun, {
      name: 'lager',
      startedAtMs: disk.nowMs,
      pausedTotalMs: 0,
    });
  });

  test('an unknown loop throws', () => {
    assert.throws(() => disk.store.profileCommand('nope', { action: 'stop' }, 'mqtt'), /unknown loop/);
  });
});

describe('DesiredStore.rebaseSchedules (a clock step)', () => {
  test('profile times and the manual change move by the step; committed; loops without either are untouched', () => {
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    const startedAtMs = disk.nowMs;
    disk.nowMs += 1_000;
    disk.store.setDesired('room', { setpoint: 21 }, 'mqtt');
    const cellarBefore = disk.store.desired('cellar');
    const generation = disk.store.desired('room')!.generation;
    disk.store.rebaseSchedules(3_600_000);
    disk.reopen();
    const room = disk.store.desired('room')!;
    assert.equal(room.profileRun?.startedAtMs, startedAtMs + 3_600_000);
    assert.equal(room.changedAtMs, disk.nowMs + 3_600_000);
    assert.equal(room.generation, generation + 1);
    assert.deepEqual(disk.store.desired('cellar'), cellarBefore);
    assert.equal(disk.store.events({ kind: 'profile-rebased' }).length, 1);
  });

  test('a step of 0 changes nothing', () => {
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    const before = disk.store.desired('room');
    disk.store.rebaseSchedules(0);
    assert.deepEqual(disk.store.desired('room'), before);
  });
});

describe('DesiredStore.restoreDesired: preset, manual change and profile carried into a fresh file', () => {
  test('given them in memory, then the fresh file gets them (the profile keeps its start)', () => {
    disk.store.selectPreset('room', 'eco', PRESETS, 'mqtt');
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    disk.nowMs += 1_000;
    disk.store.profileCommand('room', { action: 'pause' }, 'mqtt');
    const remembered = disk.store.allDesired();
    const fresh = openStandIn(silentLogger);
    try {
      const target = new DesiredStore(fresh, () => disk.nowMs);
      target.raiseGenerationFloor(disk.store.highestGeneration());
      target.applyConfig({ text: TEXT, loops: LOOPS });
      assert.deepEqual(target.restoreDesired(remembered), ['room']);
      const row = target.desired('room')!;
      const was = remembered.find((r) => r.loop === 'room')!;
      assert.equal(row.preset, 'eco');
      assert.equal(row.changedAtMs, was.changedAtMs);
      assert.deepEqual(row.profileRun, was.profileRun);
      assert.deepEqual(target.readBack(), [], 'memory and the fresh file agree');
      assert.deepEqual(target.restoreDesired(target.allDesired()), [], 'restoring the same again: nothing');
    } finally {
      fresh.close();
    }
  });

  test('readBack finds a profile the file lost (memory differs)', () => {
    disk.store.profileCommand('room', { action: 'start', name: 'ale' }, 'mqtt');
    disk.db.prepare('UPDATE loop_desired SET profile = NULL WHERE loop = ?').run('room');
    assert.deepEqual(disk.store.readBack(), ['room']);
  });
});

describe('applyConfig: a file that changes the setpoint is a manual change', () => {
  test('stamped, and it leaves the preset', () => {
    disk.store.selectPreset('room', 'eco', PRESETS, 'mqtt');
    disk.nowMs += 1_000;
    disk.store.applyConfig({
      text: `${TEXT} 2`,
      loops: { ...LOOPS, room: { ...LOOPS.room!, setpoint: 22, sectionHash: sha256('room2') } },
    });
    const row = disk.store.desired('room')!;
    assert.equal(row.setpoint, 22);
    assert.equal(row.preset, undefined);
    assert.equal(row.changedAtMs, disk.nowMs);
  });

  test('a loop added from the file has no stamp, no preset, no profile (the schedule is in force at once)', () => {
    const row = disk.store.desired('room')!;
    assert.equal(row.changedAtMs, undefined);
    assert.equal(row.preset, undefined);
    assert.equal(row.profileRun, undefined);
  });
});
