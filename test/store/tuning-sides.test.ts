/**
 * A tuning's lower side (schema version 6: lower_kp, lower_ti_s, lower_td_s,
 * lower_setpoint_weight), stored autotune options held to their bounds on read, and a
 * duplicate autotune start (a QoS 1 redelivery) taken as the request already stored.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { usableTuning } from '../../src/core/tuning/loop-tuning.js';
import { type ConfigLoop, type NewTuning, sha256, TuningError } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';
import { MAX_AUTOTUNE_OPTION_S } from '../../src/store/tuning-records.js';
import { desiredStoreFileEachTest } from '../support/store.js';

const FILE_GAINS = { kp: 0.1, tiS: 600, tdS: 0 };

function config() {
  const cellar = { setpoint: 12, mode: 'heat_cool' as const, gains: FILE_GAINS };
  const loops: Record<string, ConfigLoop> = {
    cellar: { ...cellar, sectionHash: sha256(JSON.stringify(cellar)) },
  };
  return { text: JSON.stringify(loops), loops };
}

const disk = desiredStoreFileEachTest('homeostat-tuning-sides-');
beforeEach(() => {
  disk.store.applyConfig(config());
});

const SPLIT: NewTuning = {
  gains: { kp: 0.1, tiS: 600, tdS: 0, setpointWeight: 0.8 },
  lowerGains: { kp: 1.2, tiS: 900, tdS: 15, setpointWeight: 0.7 },
  details: { side: 'lower' },
};

describe("a tuning's lower side", () => {
  test('given lower gains, then they are stored, in force, and read back after a restart', () => {
    const { version } = disk.store.recordTuning('cellar', SPLIT, { apply: true, source: 'autotune' });
    assert.deepEqual(disk.store.desired('cellar')?.tuning?.lowerGains, SPLIT.lowerGains);
    disk.reopen();
    assert.deepEqual(disk.store.desired('cellar')?.tuning?.lowerGains, SPLIT.lowerGains);
    assert.deepEqual(disk.store.tunings('cellar')[0]?.lowerGains, SPLIT.lowerGains);
    const row = disk.db
      .prepare(
        'SELECT lower_kp, lower_ti_s, lower_td_s, lower_setpoint_weight FROM tunings WHERE version = ?',
      )
      .get(version);
    assert.deepEqual(row, { lower_kp: 1.2, lower_ti_s: 900, lower_td_s: 15, lower_setpoint_weight: 0.7 });
    const event = disk.store.events({ kind: 'tuning-applied' }).at(-1);
    assert.match(
      event?.message ?? '',
      /raise kp 0\.1, .*; lower kp 1\.2, tiS 900, tdS 15, setpointWeight 0\.7/,
    );
  });

  test('given no lower gains, then the columns are NULL and the tuning reads back without them', () => {
    disk.store.recordTuning('cellar', { gains: FILE_GAINS }, { apply: true, source: 'manual', by: 'cli' });
    disk.reopen();
    assert.equal(disk.store.desired('cellar')?.tuning?.lowerGains, undefined);
    assert.deepEqual(disk.db.prepare('SELECT lower_kp, lower_setpoint_weight FROM tunings').get(), {
      lower_kp: null,
      lower_setpoint_weight: null,
    });
  });

  const refused: Array<[string, NewTuning['lowerGains'], RegExp]> = [
    ['lower kp 0', { kp: 0, tiS: 600, tdS: 0 }, /tuning lower kp must be > 0/],
    ['lower kp NaN', { kp: Number.NaN, tiS: 600, tdS: 0 }, /tuning lower kp must be a finite number/],
    ['lower tiS negative', { kp: 1, tiS: -1, tdS: 0 }, /tuning lower tiS must be a finite number ≥ 0/],
    [
      'lower tdS infinite',
      { kp: 1, tiS: 1, tdS: Number.POSITIVE_INFINITY },
      /tuning lower tdS must be a finite/,
    ],
    [
      'lower b above 1',
      { kp: 1, tiS: 1, tdS: 0, setpointWeight: 1.5 },
      /tuning lower setpointWeight must be ≤ 1/,
    ],
  ];
  for (const [name, lowerGains, message] of refused) {
    test(`given ${name}, then it is refused like the raise side's gains and nothing is written`, () => {
      assert.throws(
        () =>
          disk.store.recordTuning('cellar', { ...SPLIT, lowerGains }, { apply: true, source: 'autotune' }),
        (error: unknown) => error instanceof TuningError && message.test(error.message),
      );
      assert.deepEqual(disk.store.tunings('cellar'), []);
    });
  }

  test('given a damaged lower side in the file, then the tuning reads back unusable: it never reaches the PID', () => {
    disk.store.recordTuning('cellar', SPLIT, { apply: true, source: 'autotune' });
    // Damage the CHECK constraints let through (a text compares above every number in SQLite);
    // one they catch makes the integrity check set the whole file aside (store recovery).
    for (const damage of ["lower_kp = 'x'", 'lower_ti_s = NULL', "lower_td_s = 'soon'"]) {
      disk.db.exec(`UPDATE tunings SET ${damage}`);
      disk.reopen();
      const tuning = disk.store.desired('cellar')?.tuning;
      assert.ok(tuning?.lowerGains !== undefined, damage);
      assert.equal(usableTuning(tuning), false, damage);
      // Restored for the next damage.
      disk.db.exec('UPDATE tunings SET lower_kp = 1.2, lower_ti_s = 900, lower_td_s = 15');
    }
    disk.reopen();
    assert.equal(usableTuning(disk.store.desired('cellar')!.tuning!), true);
  });
});

describe('stored autotune options are held to the write-time bounds when read back', () => {
  const { closedLoopS, maxDurationS } = MAX_AUTOTUNE_OPTION_S;
  const cases: { name: string; json: string; options: object; unreadable: boolean }[] = [
    {
      name: 'both at their bounds (1 day, 7 days)',
      json: JSON.stringify({ closedLoopS, maxDurationS }),
      options: { closedLoopS, maxDurationS },
      unreadable: false,
    },
    {
      name: 'a time limit of 8 days (ms sent as s, or a damaged row)',
      json: JSON.stringify({ side: 'raise', maxDurationS: 8 * 86_400 }),
      options: { side: 'raise' },
      unreadable: true,
    },
    {
      name: 'a τc of a year',
      json: JSON.stringify({ closedLoopS: 365 * 86_400 }),
      options: {},
      unreadable: true,
    },
  ];
  for (const { name, json, options, unreadable } of cases) {
    test(`given ${name}, then the request carries ${JSON.stringify(options)}${unreadable ? ', flagged' : ''}`, () => {
      disk.store.requestAutotune('cellar', { action: 'start', requestedAtMs: 10, source: 'cli' });
      disk.db.prepare("UPDATE loop_desired SET autotune_options_json = ? WHERE loop = 'cellar'").run(json);
      disk.reopen();
      const request = disk.store.desired('cellar')?.autotuneRequest;
      assert.deepEqual(request?.options, options);
      assert.equal(request?.optionsUnreadable === true, unreadable);
    });
  }

  test('given options beyond the bounds on write, then the store refuses them too', () => {
    for (const options of [{ maxDurationS: maxDurationS + 1 }, { closedLoopS: closedLoopS + 1 }])
      assert.throws(
        () =>
          disk.store.requestAutotune('cellar', {
            action: 'start',
            requestedAtMs: 10,
            options,
            source: 'cli',
          }),
        /must be a finite number > 0 and ≤/,
      );
  });
});

describe('a duplicate autotune start (QoS 1 redelivery) is the request already stored', () => {
  const start = (requestedAtMs: number, options: object = { side: 'lower' }) =>
    disk.store.requestAutotune('cellar', { action: 'start', requestedAtMs, options, source: 'mqtt' });
  /** The loop's memory as a cycle leaves it, flushed like the reconciler's writeNow. */
  const loopMemory = (memory: object) => {
    const state = new StateStore(disk.db);
    state.saveState('cellar', { regulating: true, ...memory }, {} as never, disk.nowMs);
    state.flush();
  };
  const requests = () => disk.store.events({ kind: 'autotune-requested' }).length;

  test('given the same start 5 s later, not acted on yet, then no new generation and nothing written', () => {
    const first = start(1_000_000);
    assert.deepEqual(start(1_005_000), { generation: first.generation, duplicate: true });
    assert.equal(disk.store.desired('cellar')?.generation, first.generation);
    assert.equal(disk.store.desired('cellar')?.autotuneRequest?.atMs, 1_000_000);
    assert.equal(requests(), 1);
  });

  test('given the same start while its run is active, then it is the same request', () => {
    const first = start(1_000_000);
    loopMemory({ autotuneRequestGeneration: first.generation, autotune: { phase: 'relay', side: 'lower' } });
    assert.deepEqual(start(1_020_000), { generation: first.generation, duplicate: true });
    assert.equal(requests(), 1);
  });

  const fresh: Array<[string, () => number, object?]> = [
    ['other options', () => start(1_000_000).generation, { side: 'raise' }],
    [
      'after the stored one was refused',
      () => {
        const { generation } = start(1_000_000);
        loopMemory({
          autotuneRequestGeneration: generation,
          autotuneRefused: { generation, reason: 'mode off' },
        });
        return generation;
      },
    ],
    [
      'after its run ended',
      () => {
        const { generation } = start(1_000_000);
        loopMemory({ autotuneRequestGeneration: generation, autotune: { phase: 'aborted', side: 'lower' } });
        return generation;
      },
    ],
  ];
  for (const [name, first, options] of fresh) {
    test(`given the same start with ${name}, then it is a new request`, () => {
      const before = first();
      const again = start(1_010_000, options);
      assert.equal(again.duplicate, undefined);
      assert.ok(again.generation > before);
      assert.equal(requests(), 2);
    });
  }

  test('given the same start 31 s later, then it is a new request', () => {
    const first = start(1_000_000);
    assert.ok(start(1_031_000).generation > first.generation);
    assert.equal(requests(), 2);
  });

  test('given a cancel stored last, then a start is a new request', () => {
    start(1_000_000);
    disk.store.requestAutotune('cellar', { action: 'cancel', requestedAtMs: 1_001_000, source: 'mqtt' });
    assert.equal(start(1_002_000).duplicate, undefined);
  });
});
