/**
 * Versioned tunings as desired state (DesiredStore.recordTuning, applyTuning, tunings,
 * requestAutotune): every change committed with its event before returning, kept across
 * restarts, carried into a fresh file, and weighed against the config file's gains (newer
 * intent wins).
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import pino from 'pino';
import { openStandIn } from '../../src/store/database.js';
import {
  type ConfigLoop,
  DesiredStore,
  MAX_TUNING_DETAILS_BYTES,
  type NewTuning,
  type StoredEvent,
  sha256,
  TuningError,
  type TuningGains,
  UnknownTuningError,
} from '../../src/store/desired-store.js';
import { EventFeed } from '../../src/store/event-feed.js';
import { sameTuning, toStoredTuning, toTuningRecord } from '../../src/store/tuning-codec.js';
import { desiredStoreFileEachTest } from '../support/store.js';

const silent = pino({ level: 'silent' });

/** The file's gains of the greenhouse loop in the first config. */
const FILE_GAINS: TuningGains = { kp: 0.1, tiS: 600, tdS: 0 };

/** A config with the greenhouse loop (and the cellar unless left out); `comment` changes only the text. */
function config(
  options: { gains?: TuningGains; setpoint?: number; comment?: string; cellar?: boolean } = {},
) {
  const { gains = FILE_GAINS, setpoint = 18, comment = '', cellar = true } = options;
  const greenhouse = { setpoint, mode: 'heat' as const, gains };
  const loops: Record<string, ConfigLoop> = {
    greenhouse: { ...greenhouse, sectionHash: sha256(JSON.stringify(greenhouse)) },
  };
  if (cellar) loops.cellar = { setpoint: 70, mode: 'dehumidify', sectionHash: sha256('cellar') };
  return { text: `# ${comment}\n${JSON.stringify(loops)}`, loops };
}

/** An autotune result: gains, model (one standard error unknown) and a summary. */
function autotuned(kp: number): NewTuning {
  return {
    gains: { kp, tiS: 450, tdS: 0 },
    model: {
      gain: 22,
      timeConstantS: 610,
      deadTimeS: 58,
      ambient: 9.5,
      standardError: { gain: 0.8, timeConstantS: 25, deadTimeS: Number.NaN },
      rmsResidual: 0.04,
    },
    details: { durationS: 3600, cycles: 4, noise: 0.05, bandC: 0.3, modulation: { windowS: 300 } },
  };
}

const disk = desiredStoreFileEachTest('homeostat-tunings-');
beforeEach(() => {
  disk.store.applyConfig(config());
});

/** The node's generation counter as stored. */
function storedGeneration(): number {
  const row = disk.db.prepare("SELECT value FROM meta WHERE key = 'lastGeneration'").get() as {
    value: string;
  };
  return Number(row.value);
}

const kinds = (events: StoredEvent[]) => events.map((e) => e.kind);

describe('DesiredStore.recordTuning', () => {
  test('given two proposed tunings, then they get versions 1 and 2, newest first, none in force, and no generation', () => {
    disk.nowMs += 1_000;
    assert.deepEqual(
      disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: false, source: 'autotune' }),
      {
        version: 1,
      },
    );
    disk.nowMs += 1_000;
    assert.deepEqual(
      disk.store.recordTuning(
        'greenhouse',
        { gains: { kp: 0.3, tiS: 500, tdS: 10 } },
        { apply: false, source: 'manual', by: 'cli', requestId: 'r9' },
      ),
      { version: 2 },
    );

    const history = disk.store.tunings('greenhouse');
    assert.deepEqual(
      history.map((t) => [t.version, t.source, t.active, t.createdAtMs]),
      [
        [2, 'manual', false, 1_002_000],
        [1, 'autotune', false, 1_001_000],
      ],
    );
    assert.deepEqual(
      history[1],
      {
        loop: 'greenhouse',
        version: 1,
        createdAtMs: 1_001_000,
        source: 'autotune',
        active: false,
        ...autotuned(0.2),
      },
      'model (NaN standard error included) and details read back',
    );
    assert.equal(history[0]?.model, undefined, 'a manual tuning has no model');

    const desired = disk.store.desired('greenhouse');
    assert.equal(desired?.generation, 1, 'proposing does not change what the loop runs');
    assert.equal(desired?.tuning, undefined, "still the file's gains");
    assert.equal(desired?.lastTuningVersion, 2, 'a newer tuning than the one in force exists');
    assert.equal(storedGeneration(), 1);
    assert.deepEqual(kinds(disk.store.events({ kind: 'tuning-proposed' })), [
      'tuning-proposed',
      'tuning-proposed',
    ]);
    assert.deepEqual(disk.store.events().at(-1), {
      atMs: 1_002_000,
      loop: 'greenhouse',
      kind: 'tuning-proposed',
      source: 'cli',
      message: 'tuning 2 proposed (manual): kp 0.3, tiS 500, tdS 10',
      data: { version: 2, tuningSource: 'manual', gains: { kp: 0.3, tiS: 500, tdS: 10 }, requestId: 'r9' },
    });
  });

  test('given apply: true, then the tuning is in force with the next generation and one tuning-applied event', () => {
    disk.nowMs += 1_000;
    assert.deepEqual(
      disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: true, source: 'autotune' }),
      {
        version: 1,
        generation: 2,
      },
    );
    const desired = disk.store.desired('greenhouse');
    assert.equal(desired?.generation, 2);
    assert.equal(desired?.tuning?.version, 1);
    assert.deepEqual(desired?.tuning?.gains, { kp: 0.2, tiS: 450, tdS: 0 });
    assert.equal(desired?.tuningSource, 'autotune');
    assert.deepEqual(
      disk.store.tunings('greenhouse').map((t) => t.active),
      [true],
    );
    const events = disk.store.events({ loop: 'greenhouse', sinceMs: 1_001_000 });
    assert.deepEqual(kinds(events), ['tuning-applied']);
    assert.deepEqual(
      { ...(events[0]?.data as object), model: undefined },
      {
        version: 1,
        tuningSource: 'autotune',
        gains: { kp: 0.2, tiS: 450, tdS: 0 },
        model: undefined,
        from: 'config',
        to: 1,
        generation: 2,
        recorded: true,
      },
    );
  });

  const refused: Array<[string, NewTuning, RegExp]> = [
    ['kp 0', { gains: { kp: 0, tiS: 1, tdS: 0 } }, /kp must be > 0/],
    ['kp NaN', { gains: { kp: Number.NaN, tiS: 1, tdS: 0 } }, /kp must be a finite number/],
    ['tiS negative', { gains: { kp: 1, tiS: -1, tdS: 0 } }, /tiS must be a finite number ≥ 0/],
    [
      'setpoint weight over 1',
      { gains: { kp: 1, tiS: 1, tdS: 0, setpointWeight: 1.5 } },
      /setpointWeight must be ≤ 1/,
    ],
    [
      'setpoint weight negative',
      { gains: { kp: 1, tiS: 1, tdS: 0, setpointWeight: -0.1 } },
      /setpointWeight must be a finite number ≥ 0/,
    ],
    [
      'details over 16 KiB',
      { gains: { kp: 1, tiS: 1, tdS: 0 }, details: { log: 'x'.repeat(MAX_TUNING_DETAILS_BYTES) } },
      /tuning details take 16394 bytes, more than 16384/,
    ],
    [
      'model dead time infinite',
      {
        ...autotuned(1),
        model: {
          ...(autotuned(1).model as NonNullable<NewTuning['model']>),
          deadTimeS: Number.POSITIVE_INFINITY,
        },
      },
      /model deadTimeS must be a finite number/,
    ],
  ];
  for (const [name, tuning, message] of refused) {
    test(`given ${name}, then it is refused with TuningError and nothing is written`, () => {
      const eventsBefore = disk.store.events().length;
      assert.throws(
        () => disk.store.recordTuning('greenhouse', tuning, { apply: true, source: 'manual', by: 'http' }),
        (error: unknown) => error instanceof TuningError && message.test(error.message),
      );
      assert.deepEqual(disk.store.tunings('greenhouse'), []);
      assert.equal(disk.store.events().length, eventsBefore);
      assert.equal(storedGeneration(), 1);
      assert.equal(disk.store.desired('greenhouse')?.lastTuningVersion, undefined);
    });
  }

  test('given details of exactly 16 KiB, then they are stored', () => {
    const details = 'y'.repeat(MAX_TUNING_DETAILS_BYTES - 2); // with its quotes: 16384 bytes
    disk.store.recordTuning(
      'greenhouse',
      { gains: FILE_GAINS, details },
      { apply: false, source: 'manual', by: 'cli' },
    );
    assert.equal(disk.store.tunings('greenhouse')[0]?.details, details);
  });

  test('given an unknown or removed loop, then it throws and nothing is stored', () => {
    assert.throws(
      () => disk.store.recordTuning('attic', autotuned(1), { apply: false, source: 'autotune' }),
      /unknown loop "attic"/,
    );
    disk.store.applyConfig(config({ cellar: false }));
    assert.throws(
      () => disk.store.recordTuning('cellar', autotuned(1), { apply: false, source: 'autotune' }),
      /was removed from the config/,
    );
    assert.deepEqual(disk.store.tunings('cellar'), []);
  });
});

describe('DesiredStore.applyTuning', () => {
  beforeEach(() => {
    disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: true, source: 'autotune' }); // v1, gen 2
    disk.store.recordTuning('greenhouse', autotuned(0.3), { apply: false, source: 'autotune' }); // v2
  });

  test('given a proposed version, when accepted, then it is in force with the next generation', () => {
    disk.nowMs += 1_000;
    assert.deepEqual(disk.store.applyTuning('greenhouse', 2, 'homeassistant', 'accept-1'), {
      changed: true,
      generation: 3,
    });
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 2);
    assert.equal(disk.store.desired('greenhouse')?.tuningSource, 'homeassistant');
    assert.deepEqual(
      disk.store.tunings('greenhouse').map((t) => [t.version, t.active]),
      [
        [2, true],
        [1, false],
      ],
    );
    assert.deepEqual(disk.store.events().at(-1), {
      atMs: 1_001_000,
      loop: 'greenhouse',
      kind: 'tuning-applied',
      source: 'homeassistant',
      message: 'tuning 2 applied (homeassistant): kp 0.3, tiS 450, tdS 0',
      data: { from: 1, to: 2, generation: 3, gains: { kp: 0.3, tiS: 450, tdS: 0 }, requestId: 'accept-1' },
    });
  });

  test('given a later version in force, when an earlier one is restored, then the earlier is in force again', () => {
    disk.store.applyTuning('greenhouse', 2, 'cli');
    assert.deepEqual(disk.store.applyTuning('greenhouse', 1, 'cli'), { changed: true, generation: 4 });
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 1);
  });

  test("given a tuning in force, when 'config' is asked, then the file's gains are in force", () => {
    assert.deepEqual(disk.store.applyTuning('greenhouse', 'config', 'mqtt'), {
      changed: true,
      generation: 3,
    });
    const desired = disk.store.desired('greenhouse');
    assert.equal(desired?.tuning, undefined);
    assert.equal(desired?.tuningSource, 'mqtt');
    assert.deepEqual(disk.store.events().at(-1)?.data, { from: 1, to: 'config', generation: 3 });
    assert.ok(disk.store.tunings('greenhouse').every((t) => !t.active));
  });

  test('given the version in force asked again (a redelivery), then nothing changes: same generation, no event', () => {
    const eventsBefore = disk.store.events().length;
    assert.deepEqual(disk.store.applyTuning('greenhouse', 1, 'mqtt'), { changed: false, generation: 2 });
    disk.store.applyTuning('greenhouse', 'config', 'mqtt');
    assert.deepEqual(disk.store.applyTuning('greenhouse', 'config', 'mqtt'), {
      changed: false,
      generation: 3,
    });
    assert.equal(disk.store.events().length, eventsBefore + 1, 'only the one real change');
    assert.equal(storedGeneration(), 3);
  });

  for (const version of [3, 0, 1.5, -1]) {
    test(`given version ${version} the loop does not have, then UnknownTuningError and nothing is written`, () => {
      const before = { desired: disk.store.desired('greenhouse'), events: disk.store.events().length };
      assert.throws(
        () => disk.store.applyTuning('greenhouse', version, 'http'),
        (error: unknown) =>
          error instanceof UnknownTuningError &&
          error.message === `loop "greenhouse" has no tuning version ${version}`,
      );
      assert.deepEqual(disk.store.desired('greenhouse'), before.desired);
      assert.equal(disk.store.events().length, before.events);
      assert.equal(storedGeneration(), 2);
    });
  }

  test("given another loop's version number, then it is unknown for this loop", () => {
    assert.throws(() => disk.store.applyTuning('cellar', 1, 'http'), UnknownTuningError);
  });

  test('given a tuning in force, when a restart reopens the file, then the same tuning is in force and the history reads back', () => {
    disk.store.applyTuning('greenhouse', 2, 'cli');
    const desired = disk.store.desired('greenhouse');
    const history = disk.store.tunings('greenhouse');
    disk.reopen();
    assert.deepEqual(disk.store.desired('greenhouse'), desired);
    assert.deepEqual(disk.store.tunings('greenhouse'), history);
    assert.deepEqual(disk.store.readBack(), [], 'memory and file agree');
    assert.deepEqual(disk.store.applyConfig(config()).changed, false, 'the same file again changes nothing');
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 2);
  });

  test('given a setpoint weight, when a restart reopens the file, then it reads back from SQLite', () => {
    disk.nowMs += 1_000;
    const gains = { kp: 0.4, tiS: 480, tdS: 0, setpointWeight: 0.85 };
    const { version } = disk.store.recordTuning(
      'greenhouse',
      { gains },
      { apply: true, source: 'manual', by: 'cli' },
    );
    disk.reopen();
    assert.deepEqual(disk.store.desired('greenhouse')?.tuning?.gains, gains);
    assert.deepEqual(disk.store.tunings('greenhouse').find((t) => t.version === version)?.gains, gains);
  });

  test('given a setpoint change or a fault reset, then the tuning stays in force in memory', () => {
    disk.store.setDesired('greenhouse', { setpoint: 20 }, 'mqtt');
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 1);
    disk.store.resetFault('greenhouse', { requestedAtMs: 1, source: 'mqtt' });
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 1);
  });
});

describe('DesiredStore.applyConfig and the tuning in force (newer intent wins)', () => {
  beforeEach(() => {
    disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: true, source: 'autotune' }); // v1, gen 2
  });

  test('given a re-applied file that changed other things than the gains, then the tuning stays in force', () => {
    const result = disk.store.applyConfig(config({ setpoint: 19, comment: 'warmer' }));
    assert.deepEqual(result.changedLoops, ['greenhouse']);
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 1);
    assert.equal(disk.store.events({ kind: 'tuning-applied' }).length, 1, 'only the first one');
  });

  test("given a re-applied file that changed the loop's gains, then the file's gains are in force, and the event says why", () => {
    disk.nowMs += 1_000;
    const result = disk.store.applyConfig(config({ gains: { kp: 0.15, tiS: 600, tdS: 0 } }));
    assert.deepEqual(result.changedLoops, ['greenhouse']);
    const desired = disk.store.desired('greenhouse');
    assert.equal(desired?.tuning, undefined);
    assert.equal(desired?.tuningSource, undefined, 'the file chose');
    assert.equal(desired?.generation, result.generation);
    assert.deepEqual(disk.store.events({ kind: 'tuning-applied' }).at(-1), {
      atMs: 1_001_000,
      loop: 'greenhouse',
      kind: 'tuning-applied',
      source: 'file',
      message: "the config file's gains applied: the file changed them (tuning 1 set aside)",
      data: { from: 1, to: 'config', generation: result.generation, reason: 'config-gains-changed' },
    });
    assert.deepEqual(
      disk.store.tunings('greenhouse').map((t) => t.active),
      [false],
      'kept in the history',
    );

    // Then a newer runtime choice wins again, and stays across a reload that keeps those gains.
    disk.store.applyTuning('greenhouse', 1, 'cli');
    disk.store.applyConfig(config({ gains: { kp: 0.15, tiS: 600, tdS: 0 }, comment: 'only a comment' }));
    disk.reopen();
    disk.store.applyConfig(config({ gains: { kp: 0.15, tiS: 600, tdS: 0 }, setpoint: 17 }));
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 1);
  });

  test('given a caller that passes no gains, then nothing says the file changed them: the tuning stays', () => {
    const { text, loops } = config({ gains: { kp: 9, tiS: 9, tdS: 9 } });
    const { gains: _gains, ...withoutGains } = loops.greenhouse as ConfigLoop;
    const result = disk.store.applyConfig({ text, loops: { ...loops, greenhouse: withoutGains } });
    assert.deepEqual(result.changedLoops, ['greenhouse'], 'its section changed');
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 1);
  });

  test('given a row whose file gains are not known (written before version 5), then the first gains passed are recorded, not taken as a change', () => {
    disk.db.prepare("UPDATE loop_desired SET file_gains_json = NULL WHERE loop = 'greenhouse'").run();
    disk.store.applyConfig(config({ gains: { kp: 9, tiS: 9, tdS: 9 } }));
    assert.equal(disk.store.desired('greenhouse')?.tuning?.version, 1);
    disk.store.applyConfig(config({ gains: { kp: 8, tiS: 9, tdS: 9 } }));
    assert.equal(
      disk.store.desired('greenhouse')?.tuning,
      undefined,
      'a change of the recorded gains counts',
    );
  });
});

describe('tuning versions when a loop is removed and added again', () => {
  test("given a removed, finalized and re-added loop, then it starts on the file's gains, its history stays restorable, and versions continue", () => {
    disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: true, source: 'autotune' }); // v1
    disk.store.recordTuning('greenhouse', autotuned(0.3), { apply: false, source: 'autotune' }); // v2
    disk.store.applyConfig(config({ cellar: true, comment: 'x' }));
    disk.store.applyConfig({ text: 'no greenhouse', loops: { cellar: config().loops.cellar as ConfigLoop } });
    assert.deepEqual(
      disk.store.tunings('greenhouse').map((t) => t.active),
      [false, false],
      'a removed loop has none in force',
    );
    disk.store.markRemovalFinalized('greenhouse');
    disk.store.applyConfig(config({ comment: 'greenhouse back' }));

    assert.equal(disk.store.desired('greenhouse')?.tuning, undefined);
    assert.equal(disk.store.desired('greenhouse')?.lastTuningVersion, 2);
    assert.deepEqual(
      disk.store.recordTuning('greenhouse', autotuned(0.4), { apply: false, source: 'autotune' }),
      {
        version: 3,
      },
    );
    assert.equal(disk.store.applyTuning('greenhouse', 1, 'cli').changed, true);
    assert.equal(disk.store.desired('greenhouse')?.tuning?.gains.kp, 0.2);
  });
});

describe('DesiredStore.requestAutotune', () => {
  test('given a start with options, then it gets the next generation, its event, and reads back after a restart', () => {
    disk.nowMs += 2_000;
    assert.deepEqual(
      disk.store.requestAutotune('greenhouse', {
        action: 'start',
        requestedAtMs: 1_001_500,
        options: { side: 'raise', closedLoopS: 120, maxDurationS: 7200 },
        source: 'homeassistant',
        requestId: 'btn-1',
      }),
      { generation: 2 },
    );
    const expected = {
      action: 'start',
      atMs: 1_001_500,
      generation: 2,
      options: { side: 'raise', closedLoopS: 120, maxDurationS: 7200 },
    };
    assert.deepEqual(disk.store.desired('greenhouse')?.autotuneRequest, expected);
    assert.equal(disk.store.desired('greenhouse')?.generation, 2);
    assert.deepEqual(disk.store.events().at(-1), {
      atMs: 1_002_000,
      loop: 'greenhouse',
      kind: 'autotune-requested',
      source: 'homeassistant',
      message: 'autotune requested (homeassistant)',
      data: { generation: 2, requestedAtMs: 1_001_500, options: expected.options, requestId: 'btn-1' },
    });
    disk.reopen();
    assert.deepEqual(disk.store.desired('greenhouse')?.autotuneRequest, expected);
    assert.deepEqual(disk.store.readBack(), []);
  });

  test('given a cancel after a start, then the cancel is the request in force, with its own generation and event', () => {
    disk.store.requestAutotune('greenhouse', { action: 'start', requestedAtMs: 10, source: 'cli' });
    assert.deepEqual(
      disk.store.requestAutotune('greenhouse', { action: 'cancel', requestedAtMs: 20, source: 'http' }),
      {
        generation: 3,
      },
    );
    assert.deepEqual(disk.store.desired('greenhouse')?.autotuneRequest, {
      action: 'cancel',
      atMs: 20,
      generation: 3,
      options: {},
    });
    assert.deepEqual(kinds(disk.store.events({ loop: 'greenhouse' })).slice(-2), [
      'autotune-requested',
      'autotune-cancel-requested',
    ]);
  });

  const refused: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown side', { options: { side: 'up' } }, /side must be "raise" or "lower"/],
    ['a negative closedLoopS', { options: { closedLoopS: -1 } }, /closedLoopS must be a finite number > 0/],
    ['an unknown action', { action: 'pause' }, /action must be "start" or "cancel"/],
    ['a NaN time', { requestedAtMs: Number.NaN }, /request time must be a finite number/],
  ];
  for (const [name, change, message] of refused) {
    test(`given ${name}, then it is refused and nothing is written`, () => {
      const eventsBefore = disk.store.events().length;
      const request = { action: 'start', requestedAtMs: 10, source: 'mqtt', ...change } as Parameters<
        DesiredStore['requestAutotune']
      >[1];
      assert.throws(
        () => disk.store.requestAutotune('greenhouse', request),
        (e: unknown) => e instanceof TuningError && message.test(e.message),
      );
      assert.equal(disk.store.desired('greenhouse')?.autotuneRequest, undefined);
      assert.equal(disk.store.events().length, eventsBefore);
      assert.equal(storedGeneration(), 1);
    });
  }
});

describe('damaged JSON in a stored row', () => {
  test('given unreadable tuning details and autotune options, then the store opens, the gains and request apply, and the damage is flagged', () => {
    disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: true, source: 'autotune' });
    disk.store.requestAutotune('greenhouse', {
      action: 'start',
      requestedAtMs: 10,
      options: { side: 'lower' },
      source: 'cli',
    });
    disk.db.prepare('UPDATE tunings SET details_json = \'{"cycles": 4,\'').run();
    disk.db.prepare("UPDATE loop_desired SET autotune_options_json = '[1' WHERE loop = 'greenhouse'").run();
    disk.reopen();
    const desired = disk.store.desired('greenhouse');
    assert.deepEqual(desired?.tuning?.gains, { kp: 0.2, tiS: 450, tdS: 0 });
    assert.equal(desired?.tuning?.details, undefined);
    assert.equal(desired?.tuning?.detailsUnreadable, true);
    assert.deepEqual(desired?.autotuneRequest, {
      action: 'start',
      atMs: 10,
      generation: 3,
      options: {},
      optionsUnreadable: true,
    });
    assert.equal(disk.store.tunings('greenhouse')[0]?.detailsUnreadable, true);
  });
});

describe('stored autotune options are checked again when read back', () => {
  const cases: { name: string; json: string; options: object; unreadable: boolean }[] = [
    {
      name: 'valid',
      json: '{"side":"raise","maxDurationS":3600}',
      options: { side: 'raise', maxDurationS: 3600 },
      unreadable: false,
    },
    {
      name: 'a text time limit (no limit at all if taken)',
      json: '{"maxDurationS":"1h","closedLoopS":"x"}',
      options: {},
      unreadable: true,
    },
    {
      name: 'a negative τc beside a good side',
      json: '{"side":"lower","closedLoopS":-5}',
      options: { side: 'lower' },
      unreadable: true,
    },
    { name: 'an unknown side', json: '{"side":"heat"}', options: {}, unreadable: true },
    { name: 'an unknown key', json: '{"cycles":40}', options: {}, unreadable: true },
  ];
  for (const { name, json, options, unreadable } of cases) {
    test(`given ${name}, then the request carries ${JSON.stringify(options)}${unreadable ? ', flagged' : ''}`, () => {
      disk.store.requestAutotune('greenhouse', {
        action: 'start',
        requestedAtMs: 10,
        options: {},
        source: 'cli',
      });
      disk.db
        .prepare("UPDATE loop_desired SET autotune_options_json = ? WHERE loop = 'greenhouse'")
        .run(json);
      disk.reopen();
      const request = disk.store.desired('greenhouse')?.autotuneRequest;
      assert.deepEqual(request?.options, options);
      assert.equal(request?.optionsUnreadable === true, unreadable);
    });
  }
});

describe('the tunings table itself', () => {
  test('given details over 16 KiB written past the store (a bug, a hand edit), then SQLite refuses them too', () => {
    const insert = (details: string) =>
      disk.db
        .prepare(
          "INSERT INTO tunings (loop, version, created_at_ms, source, kp, ti_s, td_s, details_json) VALUES ('greenhouse', ?, 0, 'manual', 1, 0, 0, ?)",
        )
        .run(details.length, details);
    assert.doesNotThrow(() => insert('é'.repeat(MAX_TUNING_DETAILS_BYTES / 2)), '16384 bytes');
    assert.throws(() => insert(`${'é'.repeat(MAX_TUNING_DETAILS_BYTES / 2)}x`), /CHECK constraint failed/);
  });
});

describe('announcing tuning events on the feed', () => {
  test('given tuning and autotune changes, then each event is told once, after its commit, with memory already updated', () => {
    const feed = new EventFeed();
    const store = new DesiredStore(disk.db, () => disk.nowMs, { feed });
    const told: Array<{ kind: string; inTransaction: boolean; version?: number; request?: string }> = [];
    feed.subscribe((event) =>
      told.push({
        kind: event.kind,
        inTransaction: disk.db.inTransaction,
        version: store.desired('greenhouse')?.tuning?.version,
        request: store.desired('greenhouse')?.autotuneRequest?.action,
      }),
    );
    store.requestAutotune('greenhouse', { action: 'start', requestedAtMs: 1, source: 'http' });
    store.recordTuning('greenhouse', autotuned(0.2), { apply: false, source: 'autotune' });
    store.applyTuning('greenhouse', 1, 'http');
    store.applyTuning('greenhouse', 1, 'http'); // a redelivery: nothing told
    store.applyConfig(config({ gains: { kp: 0.5, tiS: 1, tdS: 0 } }));
    assert.deepEqual(told, [
      { kind: 'autotune-requested', inTransaction: false, version: undefined, request: 'start' },
      { kind: 'tuning-proposed', inTransaction: false, version: undefined, request: 'start' },
      { kind: 'tuning-applied', inTransaction: false, version: 1, request: 'start' },
      { kind: 'tuning-applied', inTransaction: false, version: undefined, request: 'start' },
      { kind: 'loop-config-changed', inTransaction: false, version: undefined, request: 'start' },
      { kind: 'config-applied', inTransaction: false, version: undefined, request: 'start' },
    ]);
  });

  test('given a refused or rolled-back change, then nothing is told', () => {
    const feed = new EventFeed();
    const store = new DesiredStore(disk.db, () => disk.nowMs, { feed });
    const told: StoredEvent[] = [];
    feed.subscribe((event) => told.push(event));
    assert.throws(() => store.applyTuning('greenhouse', 7, 'http'), UnknownTuningError);
    store.recordTuning('greenhouse', autotuned(0.2), { apply: false, source: 'autotune' });
    told.length = 0;
    disk.db.exec(
      "CREATE TRIGGER refuse_loop_desired BEFORE INSERT ON loop_desired BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
    );
    assert.throws(() => store.applyTuning('greenhouse', 1, 'http'), /not stored and changed nothing/);
    assert.throws(() =>
      store.recordTuning('greenhouse', autotuned(0.3), { apply: true, source: 'autotune' }),
    );
    assert.deepEqual(told, []);
    assert.deepEqual(
      store.tunings('greenhouse').map((t) => t.version),
      [1],
      'the rolled-back version 2 is not stored',
    );
    assert.equal(store.desired('greenhouse')?.tuning, undefined, 'memory unchanged');
  });
});

describe('DesiredStore.restoreDesired: the tuning carried into another file', () => {
  test('given a tuning in force and newer proposals in memory, then a fresh file gets that tuning in force and continues the numbering', () => {
    disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: false, source: 'autotune' }); // v1
    disk.store.recordTuning('greenhouse', autotuned(0.3), { apply: true, source: 'autotune' }); // v2
    disk.store.recordTuning('greenhouse', autotuned(0.4), { apply: false, source: 'autotune' }); // v3
    disk.store.requestAutotune('greenhouse', { action: 'cancel', requestedAtMs: 5, source: 'mqtt' });
    const remembered = disk.store.allDesired();
    const fresh = openStandIn(silent);
    try {
      const target = new DesiredStore(fresh, () => disk.nowMs);
      target.raiseGenerationFloor(disk.store.highestGeneration());
      target.applyConfig(config());
      assert.deepEqual(target.restoreDesired(remembered), ['greenhouse']);
      const row = target.desired('greenhouse');
      assert.deepEqual(row?.tuning, remembered.find((r) => r.loop === 'greenhouse')?.tuning);
      assert.equal(row?.tuningSource, 'autotune');
      assert.deepEqual(row?.autotuneRequest?.generation, 3, 'the request keeps its generation');
      assert.deepEqual(
        target.tunings('greenhouse').map((t) => [t.version, t.active]),
        [[2, true]],
      );
      assert.deepEqual(target.restoreDesired(target.allDesired()), [], 'restoring the same again: nothing');
      assert.deepEqual(
        target.recordTuning('greenhouse', autotuned(0.5), { apply: false, source: 'autotune' }),
        {
          version: 4,
        },
      );
    } finally {
      fresh.close();
    }
  });

  test("given a file whose version number names other gains, then memory's tuning is stored under a new version", () => {
    disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: true, source: 'autotune' }); // v1 here
    const remembered = disk.store.allDesired();
    const other = openStandIn(silent);
    try {
      const target = new DesiredStore(other, () => disk.nowMs + 5);
      target.applyConfig(config());
      target.recordTuning(
        'greenhouse',
        { gains: { kp: 7, tiS: 7, tdS: 7 } },
        { apply: false, source: 'manual', by: 'cli' },
      );
      target.restoreDesired(remembered);
      assert.deepEqual(
        target.tunings('greenhouse').map((t) => [t.version, t.gains.kp, t.active]),
        [
          [2, 0.2, true],
          [1, 7, false],
        ],
      );
    } finally {
      other.close();
    }
  });

  test("given the file's gains chosen at runtime in memory, then the other file's tuning is set aside", () => {
    const other = openStandIn(silent);
    try {
      const target = new DesiredStore(other, () => disk.nowMs);
      target.applyConfig(config());
      target.recordTuning('greenhouse', autotuned(0.2), { apply: true, source: 'autotune' });
      disk.store.applyTuning('greenhouse', 'config', 'mqtt'); // nothing in force here: no change
      disk.store.recordTuning('greenhouse', autotuned(0.9), { apply: true, source: 'autotune' });
      disk.store.applyTuning('greenhouse', 'config', 'mqtt');
      assert.deepEqual(target.restoreDesired(disk.store.allDesired()), ['greenhouse']);
      assert.equal(target.desired('greenhouse')?.tuning, undefined);
      assert.equal(target.desired('greenhouse')?.tuningSource, 'mqtt');
    } finally {
      other.close();
    }
  });

  test("given the file's tuning in force changed under the store, then readBack names the loop", () => {
    disk.store.recordTuning('greenhouse', autotuned(0.2), { apply: true, source: 'autotune' });
    disk.db.prepare("UPDATE loop_desired SET tuning_version = NULL WHERE loop = 'greenhouse'").run();
    assert.deepEqual(disk.store.readBack(), ['greenhouse']);
  });
});

describe('setpoint weight in the tunings row (setpoint_weight, nullable)', () => {
  const gains = { kp: 0.25, tiS: 480, tdS: 0 };
  const stored = (tuning: NewTuning) =>
    toStoredTuning(toTuningRecord('greenhouse', 1, 1_000, 'autotune', tuning, null));

  test('given a tuning with b, then the row carries it and reads back the same gains', () => {
    const record = toTuningRecord(
      'greenhouse',
      1,
      1_000,
      'autotune',
      { gains: { ...gains, setpointWeight: 0.9 } },
      null,
    );
    assert.equal(record.setpoint_weight, 0.9);
    assert.deepEqual(toStoredTuning(record).gains, { ...gains, setpointWeight: 0.9 });
  });

  test('given a tuning without b (by hand), then the column is NULL and the gains read back without it', () => {
    assert.equal(toTuningRecord('greenhouse', 1, 1_000, 'manual', { gains }, null).setpoint_weight, null);
    assert.deepEqual(stored({ gains }).gains, gains);
  });

  test('two tunings differing only in b are not the same tuning', () => {
    assert.equal(sameTuning(stored({ gains }), stored({ gains: { ...gains, setpointWeight: 0.9 } })), false);
    assert.equal(sameTuning(stored({ gains }), stored({ gains })), true);
  });
});
