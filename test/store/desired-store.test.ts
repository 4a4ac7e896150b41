import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import type { Mode } from '../../src/core/types.js';
import { type ConfigLoop, sha256 } from '../../src/store/desired-store.js';
import { desiredStoreFileEachTest } from '../support/store.js';

/** A loop's section in a test config: what the file says, plus other parameters (gains…). */
interface Section {
  setpoint: number;
  mode: Mode;
  kp?: number;
}

/** The config text and the per-loop input applyConfig takes, from sections (and an optional comment). */
function config(sections: Record<string, Section>, comment = '') {
  const loops: Record<string, ConfigLoop> = {};
  for (const [loop, section] of Object.entries(sections)) {
    loops[loop] = {
      setpoint: section.setpoint,
      mode: section.mode,
      sectionHash: sha256(JSON.stringify(section)),
    };
  }
  return { text: `# ${comment}\n${JSON.stringify(sections)}`, loops };
}

/** The store under test on a file, reopened by `disk.reopen()` as after a restart. */
const disk = desiredStoreFileEachTest();

const GREENHOUSE: Section = { setpoint: 18, mode: 'heat' };
const CELLAR: Section = { setpoint: 70, mode: 'dehumidify' };

describe('sha256', () => {
  test('is the hex SHA-256 of the UTF-8 text', () => {
    assert.equal(sha256('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('DesiredStore.applyConfig', () => {
  test('given a first config, then every loop is added from the file at generation 1', () => {
    const result = disk.store.applyConfig(config({ greenhouse: GREENHOUSE, cellar: CELLAR }));
    assert.deepEqual(result, {
      generation: 1,
      changed: true,
      addedLoops: ['greenhouse', 'cellar'],
      changedLoops: [],
      removedLoops: [],
    });
    assert.deepEqual(disk.store.allDesired(), [
      {
        loop: 'cellar',
        setpoint: 70,
        setpointSource: 'file',
        mode: 'dehumidify',
        modeSource: 'file',
        generation: 1,
        updatedAtMs: 1_000_000,
      },
      {
        loop: 'greenhouse',
        setpoint: 18,
        setpointSource: 'file',
        mode: 'heat',
        modeSource: 'file',
        generation: 1,
        updatedAtMs: 1_000_000,
      },
    ]);
    const cfg = config({ greenhouse: GREENHOUSE, cellar: CELLAR });
    assert.deepEqual(disk.store.latestConfig(), {
      generation: 1,
      hash: sha256(cfg.text),
      text: cfg.text,
      appliedAtMs: 1_000_000,
    });
  });

  test('given the same file applied twice, then the same generation and nothing written', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    const eventsBefore = disk.store.events().length;
    disk.nowMs += 60_000;
    const again = disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    assert.deepEqual(again, {
      generation: 1,
      changed: false,
      addedLoops: [],
      changedLoops: [],
      removedLoops: [],
    });
    assert.equal(disk.store.latestConfig()?.appliedAtMs, 1_000_000);
    assert.equal(disk.store.events().length, eventsBefore);
  });

  test('given a changed file, then the next generation, and only the loops that changed get it', () => {
    disk.store.applyConfig(
      config({ greenhouse: GREENHOUSE, cellar: CELLAR, attic: { setpoint: 10, mode: 'heat' } }),
    );
    const table: Array<{
      when: string;
      file: Record<string, Section>;
      comment?: string;
      generation: number;
      changedLoops: string[];
      loopGenerations: Record<string, number>;
    }> = [
      {
        when: 'the cellar setpoint changes',
        file: {
          greenhouse: GREENHOUSE,
          cellar: { ...CELLAR, setpoint: 65 },
          attic: { setpoint: 10, mode: 'heat' },
        },
        generation: 2,
        changedLoops: ['cellar'],
        loopGenerations: { greenhouse: 1, cellar: 2, attic: 1 },
      },
      {
        when: 'only the greenhouse gains change (its section, not its setpoint or mode)',
        file: {
          greenhouse: { ...GREENHOUSE, kp: 2 },
          cellar: { ...CELLAR, setpoint: 65 },
          attic: { setpoint: 10, mode: 'heat' },
        },
        generation: 3,
        changedLoops: ['greenhouse'],
        loopGenerations: { greenhouse: 3, cellar: 2, attic: 1 },
      },
      {
        when: 'only a comment changes',
        file: {
          greenhouse: { ...GREENHOUSE, kp: 2 },
          cellar: { ...CELLAR, setpoint: 65 },
          attic: { setpoint: 10, mode: 'heat' },
        },
        comment: 'tuned in May',
        generation: 4,
        changedLoops: [],
        loopGenerations: { greenhouse: 3, cellar: 2, attic: 1 },
      },
      {
        when: 'the attic mode changes',
        file: {
          greenhouse: { ...GREENHOUSE, kp: 2 },
          cellar: { ...CELLAR, setpoint: 65 },
          attic: { setpoint: 10, mode: 'off' },
        },
        comment: 'tuned in May',
        generation: 5,
        changedLoops: ['attic'],
        loopGenerations: { greenhouse: 3, cellar: 2, attic: 5 },
      },
    ];
    for (const step of table) {
      const result = disk.store.applyConfig(config(step.file, step.comment));
      assert.equal(result.generation, step.generation, step.when);
      assert.equal(result.changed, true, step.when);
      assert.deepEqual(result.changedLoops, step.changedLoops, step.when);
      const generations = Object.fromEntries(
        disk.store.allDesired().map((row) => [row.loop, row.generation]),
      );
      assert.deepEqual(generations, step.loopGenerations, step.when);
    }
    assert.equal(disk.store.desired('cellar')?.setpoint, 65);
    assert.equal(disk.store.desired('attic')?.mode, 'off');
  });
});

describe('DesiredStore.setDesired', () => {
  beforeEach(() => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE, cellar: CELLAR }));
  });

  test('given a runtime change, then the next generation, stored with its source', () => {
    disk.nowMs += 5_000;
    assert.deepEqual(disk.store.setDesired('greenhouse', { setpoint: 19 }, 'mqtt', 'req-1'), {
      changed: true,
      generation: 2,
    });
    assert.deepEqual(disk.store.desired('greenhouse'), {
      loop: 'greenhouse',
      setpoint: 19,
      setpointSource: 'mqtt',
      mode: 'heat',
      modeSource: 'file',
      generation: 2,
      updatedAtMs: 1_005_000,
      // The manual change's time (the override rule of schedules and profiles).
      changedAtMs: 1_005_000,
    });
    assert.equal(disk.store.desired('cellar')?.generation, 1, 'other loops keep their generation');
  });

  test('given the same value again (QoS 1 redelivery), then no new generation', () => {
    const table: Array<
      [when: string, change: { setpoint?: number; mode?: Mode }, changed: boolean, generation: number]
    > = [
      ['setpoint 19', { setpoint: 19 }, true, 2],
      ['setpoint 19 again', { setpoint: 19 }, false, 2],
      ['mode heat (already heat)', { mode: 'heat' }, false, 2],
      ['setpoint 19 and mode off', { setpoint: 19, mode: 'off' }, true, 3],
      ['setpoint 19 and mode off again', { setpoint: 19, mode: 'off' }, false, 3],
      ['nothing', {}, false, 3],
    ];
    for (const [when, change, changed, generation] of table) {
      assert.deepEqual(
        disk.store.setDesired('greenhouse', change, 'homeassistant'),
        { changed, generation },
        when,
      );
    }
    assert.equal(
      disk.store.events({ loop: 'greenhouse', sinceMs: 0 }).filter((e) => e.source !== 'file').length,
      2,
    );
  });

  test('given the file value sent at runtime, then nothing changes, the source stays file', () => {
    assert.deepEqual(disk.store.setDesired('greenhouse', { setpoint: 18 }, 'cli'), {
      changed: false,
      generation: 1,
    });
    assert.equal(disk.store.desired('greenhouse')?.setpointSource, 'file');
  });

  test('given an unknown, removed or non-finite target, then a clear Error and nothing stored', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    assert.throws(() => disk.store.setDesired('garage', { setpoint: 5 }, 'mqtt'), {
      message: 'unknown loop "garage"',
    });
    assert.throws(() => disk.store.setDesired('cellar', { setpoint: 60 }, 'mqtt'), {
      message: 'loop "cellar" was removed from the config',
    });
    assert.throws(
      () => disk.store.setDesired('greenhouse', { setpoint: Number.NaN }, 'mqtt'),
      /finite number/,
    );
    assert.equal(disk.store.desired('greenhouse')?.setpoint, 18);
  });
});

describe('precedence: the newer intent wins, per field', () => {
  test('runtime change, file re-applied, restart, file change, runtime change', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    const steps: Array<{ when: string; act: () => void; setpoint: number; source: string }> = [
      {
        when: 'MQTT sets 19',
        act: () => disk.store.setDesired('greenhouse', { setpoint: 19 }, 'mqtt'),
        setpoint: 19,
        source: 'mqtt',
      },
      {
        when: 'the unchanged file is re-applied',
        act: () => disk.store.applyConfig(config({ greenhouse: GREENHOUSE })),
        setpoint: 19,
        source: 'mqtt',
      },
      {
        when: 'a file that changed elsewhere (a comment) is applied',
        act: () => disk.store.applyConfig(config({ greenhouse: GREENHOUSE }, 'edited')),
        setpoint: 19,
        source: 'mqtt',
      },
      { when: 'the daemon restarts', act: () => disk.reopen(), setpoint: 19, source: 'mqtt' },
      {
        when: 'the daemon restarts and re-applies the same file',
        act: () => {
          disk.reopen();
          disk.store.applyConfig(config({ greenhouse: GREENHOUSE }, 'edited'));
        },
        setpoint: 19,
        source: 'mqtt',
      },
      {
        when: 'the file changes the setpoint 18 → 20',
        act: () => disk.store.applyConfig(config({ greenhouse: { ...GREENHOUSE, setpoint: 20 } })),
        setpoint: 20,
        source: 'file',
      },
      {
        when: 'Home Assistant sets 21 after that',
        act: () => disk.store.setDesired('greenhouse', { setpoint: 21 }, 'homeassistant'),
        setpoint: 21,
        source: 'homeassistant',
      },
      {
        when: 'the file (still 20) is re-applied after a restart',
        act: () => {
          disk.reopen();
          disk.store.applyConfig(config({ greenhouse: { ...GREENHOUSE, setpoint: 20, kp: 3 } }));
        },
        setpoint: 21,
        source: 'homeassistant',
      },
    ];
    for (const step of steps) {
      step.act();
      const row = disk.store.desired('greenhouse');
      assert.equal(row?.setpoint, step.setpoint, `when ${step.when}: setpoint`);
      assert.equal(row?.setpointSource, step.source, `when ${step.when}: source`);
    }
  });

  test('setpoint and mode are decided separately', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    disk.store.setDesired('greenhouse', { mode: 'off' }, 'cli');
    const result = disk.store.applyConfig(config({ greenhouse: { ...GREENHOUSE, setpoint: 20 } }));
    assert.deepEqual(result.changedLoops, ['greenhouse']);
    const row = disk.store.desired('greenhouse');
    assert.deepEqual(
      {
        setpoint: row?.setpoint,
        setpointSource: row?.setpointSource,
        mode: row?.mode,
        modeSource: row?.modeSource,
      },
      { setpoint: 20, setpointSource: 'file', mode: 'off', modeSource: 'cli' },
    );
  });

  test('a file change to the value already in force: the source becomes file, no setpoint-changed event', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    disk.store.setDesired('greenhouse', { setpoint: 20 }, 'mqtt'); // generation 2
    const result = disk.store.applyConfig(config({ greenhouse: { ...GREENHOUSE, setpoint: 20 } }));
    // The section hash changed (the file's setpoint did), so the loop gets the generation.
    assert.deepEqual(result.changedLoops, ['greenhouse']);
    assert.equal(disk.store.desired('greenhouse')?.setpointSource, 'file');
    assert.equal(disk.store.events().filter((e) => e.kind === 'setpoint-changed').length, 1);
  });
});

describe('generations', () => {
  test('configs and runtime changes share one counter: unique and increasing, across restarts', () => {
    const generations: number[] = [];
    generations.push(disk.store.applyConfig(config({ greenhouse: GREENHOUSE })).generation);
    generations.push(disk.store.setDesired('greenhouse', { setpoint: 19 }, 'mqtt').generation);
    generations.push(disk.store.applyConfig(config({ greenhouse: GREENHOUSE, cellar: CELLAR })).generation);
    disk.reopen();
    generations.push(disk.store.setDesired('cellar', { mode: 'off' }, 'cli').generation);
    generations.push(disk.store.applyConfig(config({ greenhouse: GREENHOUSE })).generation);
    assert.deepEqual(generations, [1, 2, 3, 4, 5]);
  });
});

describe('restart', () => {
  test('closing and reopening the file preserves desired state, the latest config and the events', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE, cellar: CELLAR }));
    disk.nowMs += 1_000;
    disk.store.setDesired('greenhouse', { setpoint: 19, mode: 'off' }, 'mqtt', 'abc');
    disk.store.recordEvent({
      loop: 'cellar',
      kind: 'fault',
      message: 'sensor stale',
      data: { ageMs: 90_000 },
    });
    const before = {
      desired: disk.store.allDesired(),
      config: disk.store.latestConfig(),
      events: disk.store.events(),
    };
    disk.reopen();
    assert.deepEqual(
      { desired: disk.store.allDesired(), config: disk.store.latestConfig(), events: disk.store.events() },
      before,
    );
    assert.equal(before.desired.length, 2);
  });
});

describe('removal', () => {
  test('a loop left out of the file is pending removal until finalized, across restarts', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE, cellar: CELLAR }));
    disk.db
      .prepare('INSERT INTO loop_state (loop, memory_json, saved_at_ms) VALUES (?, ?, ?)')
      .run('cellar', '{}', 1);

    const result = disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    assert.deepEqual(result.removedLoops, ['cellar']);
    assert.equal(disk.store.desired('cellar'), undefined, 'removed loops are not desired');
    assert.deepEqual(
      disk.store.allDesired().map((row) => row.loop),
      ['greenhouse'],
    );
    assert.deepEqual(disk.store.pendingRemovals(), ['cellar']);

    disk.reopen(); // a crash between removal and finalizer
    assert.deepEqual(disk.store.pendingRemovals(), ['cellar']);
    assert.deepEqual(
      disk.store.applyConfig(config({ greenhouse: GREENHOUSE })).removedLoops,
      [],
      'the same file again removes nothing more',
    );

    disk.store.markRemovalFinalized('cellar');
    assert.deepEqual(disk.store.pendingRemovals(), []);
    assert.deepEqual(disk.db.prepare('SELECT loop FROM loop_state').all(), [], 'its saved memory is gone');
    assert.deepEqual(
      disk.store.events({ loop: 'cellar' }).map((e) => e.kind),
      ['loop-added', 'loop-removed', 'loop-finalized'],
    );
    disk.store.markRemovalFinalized('cellar'); // idempotent
    assert.equal(disk.store.events({ loop: 'cellar' }).length, 3);
  });

  test('a loop re-added before its finalizer ran starts again from the file, and finalizing it is a no-op', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE, cellar: CELLAR }));
    disk.store.setDesired('cellar', { setpoint: 60 }, 'mqtt');
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    const result = disk.store.applyConfig(config({ greenhouse: GREENHOUSE, cellar: CELLAR }));
    assert.deepEqual(result.addedLoops, ['cellar']);
    assert.deepEqual(disk.store.pendingRemovals(), []);
    disk.store.markRemovalFinalized('cellar');
    assert.deepEqual(
      {
        setpoint: disk.store.desired('cellar')?.setpoint,
        source: disk.store.desired('cellar')?.setpointSource,
      },
      { setpoint: 70, source: 'file' },
    );
  });
});

describe('events', () => {
  test('every change is recorded, in order, with its source and request id', () => {
    disk.store.applyConfig(config({ greenhouse: GREENHOUSE }));
    disk.nowMs += 1_000;
    disk.store.setDesired('greenhouse', { setpoint: 19, mode: 'off' }, 'mqtt', 'req-7');
    disk.nowMs += 1_000;
    disk.store.applyConfig(config({ greenhouse: { ...GREENHOUSE, mode: 'auto' }, cellar: CELLAR }));

    const rows = disk.store.events().map((e) => [e.atMs, e.loop, e.kind, e.source] as const);
    assert.deepEqual(rows, [
      [1_000_000, 'greenhouse', 'loop-added', 'file'],
      [1_000_000, undefined, 'config-applied', 'file'],
      [1_001_000, 'greenhouse', 'setpoint-changed', 'mqtt'],
      [1_001_000, 'greenhouse', 'mode-changed', 'mqtt'],
      [1_002_000, 'greenhouse', 'mode-changed', 'file'],
      [1_002_000, 'cellar', 'loop-added', 'file'],
      [1_002_000, undefined, 'config-applied', 'file'],
    ]);
    const setpointEvent = disk.store
      .events({ loop: 'greenhouse' })
      .find((e) => e.kind === 'setpoint-changed');
    assert.deepEqual(setpointEvent?.data, { from: 18, to: 19, generation: 2, requestId: 'req-7' });
    assert.equal(setpointEvent?.message, 'setpoint 18 → 19 (mqtt)');
  });

  test('filters: sinceMs, loop, and limit keeps the newest, still oldest first', () => {
    for (let i = 0; i < 5; i++) {
      disk.nowMs = 1_000 * i;
      disk.store.recordEvent({ loop: i % 2 === 0 ? 'even' : 'odd', kind: 'note', message: `n${i}` });
    }
    const table: Array<[opts: { sinceMs?: number; loop?: string; limit?: number }, messages: string[]]> = [
      [{}, ['n0', 'n1', 'n2', 'n3', 'n4']],
      [{ sinceMs: 2_000 }, ['n2', 'n3', 'n4']],
      [{ loop: 'even' }, ['n0', 'n2', 'n4']],
      [{ limit: 2 }, ['n3', 'n4']],
      [{ loop: 'odd', sinceMs: 2_000, limit: 5 }, ['n3']],
    ];
    for (const [opts, messages] of table) {
      assert.deepEqual(
        disk.store.events(opts).map((e) => e.message),
        messages,
        JSON.stringify(opts),
      );
    }
  });

  test('an event without loop, source or data reads back without those keys', () => {
    disk.store.recordEvent({ kind: 'startup', message: 'homeostat started' });
    assert.deepEqual(disk.store.events(), [
      { atMs: 1_000_000, kind: 'startup', message: 'homeostat started' },
    ]);
  });
});
