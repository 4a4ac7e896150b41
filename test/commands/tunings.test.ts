/**
 * `homeostat tunings LOOP` (the stored versions, the one in force marked: the daemon's API,
 * else the database read-only) and `homeostat tuning LOOP VERSION|latest|config` (through the
 * daemon only), against a stand-in of the API per src/operations/schemas.ts.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { tuningsCommand, tuningTable } from '../../src/commands/tunings.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore, sha256 } from '../../src/store/desired-store.js';
import { runCliHere } from '../support/cli.js';
import { minimalSimConfigText } from '../support/config.js';
import { silentLogger } from '../support/logger.js';
import { freePort } from '../support/net.js';
import { tempDir } from '../support/tmp.js';
import { fakeApi } from './fake-api.js';

function configFor(t: TestContext, port: number): string {
  const file = path.join(tempDir(t, 'homeostat-cli-tunings-'), 'config.yaml');
  writeFileSync(file, minimalSimConfigText({ extra: `http: { port: ${port} }` }));
  return file;
}

const MODEL = {
  gain: 20.13,
  timeConstantS: 612.4,
  deadTimeS: 61.2,
  ambient: 10.2,
  standardError: { gain: 0.81, timeConstantS: 30.6, deadTimeS: null },
  rmsResidual: 0.041,
};

const TUNINGS = {
  loop: 'room',
  active: 2,
  tunings: [
    {
      version: 3,
      createdAt: '2026-11-30T12:00:00.000Z',
      source: 'autotune',
      active: false,
      gains: { kp: 0.2451, tiS: 612.4, tdS: 0 },
      model: MODEL,
    },
    {
      version: 2,
      createdAt: '2026-11-29T08:30:00.000Z',
      source: 'manual',
      active: true,
      gains: { kp: 0.3, tiS: 900, tdS: 0 },
    },
  ],
};

describe("tuningTable: a loop with a heater and a cooler shows each side's gains", () => {
  test('given a tuning with the lower side’s gains, then its cells read raise / lower, and a line says so', () => {
    const answer = {
      loop: 'fermenter',
      active: 4,
      tunings: [
        {
          version: 4,
          createdAt: '2026-11-30T12:00:00.000Z',
          source: 'autotune',
          active: true,
          gains: { kp: 0.05, tiS: 3600, tdS: 0 },
          lowerGains: { kp: 0.5, tiS: 900, tdS: 10 },
        },
        {
          version: 3,
          createdAt: '2026-11-29T08:30:00.000Z',
          source: 'manual',
          active: false,
          gains: { kp: 0.3, tiS: 900, tdS: 0 },
        },
      ],
    };
    assert.deepEqual(tuningTable(answer), [
      'fermenter: 2 stored tuning(s); in force: version 4',
      '  version  created (UTC)     source    kp          tiS             tdS         model (gain, τ, θ)',
      '* 4        2026-11-30 12:00  autotune  0.05 / 0.5  3600 s / 900 s  0 s / 10 s',
      '  3        2026-11-29 08:30  manual    0.3         900 s           0 s',
      '  config                     file',
      "a / b: the raise side's / the lower side's gains (heater / cooler)",
    ]);
  });
});

describe('homeostat tunings LOOP', () => {
  test('given the daemon, then a table: newest first, * on the one in force, the config row last; exit 0', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: TUNINGS }));
    const result = await runCliHere(['tunings', 'room', '--config', configFor(t, server.port)]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.requests[0]?.url, '/api/loops/room/tunings');
    assert.deepEqual(result.stdout.trimEnd().split('\n'), [
      'room: 2 stored tuning(s); in force: version 2',
      '  version  created (UTC)     source    kp     tiS    tdS  model (gain, τ, θ)',
      '  3        2026-11-30 12:00  autotune  0.245  612 s  0 s  20.1 ± 0.81, 612 ± 30.6 s, 61.2 s',
      '* 2        2026-11-29 08:30  manual    0.3    900 s  0 s',
      '  config                     file',
    ]);
  });

  test('--json: the API answer as JSON', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: TUNINGS }));
    const result = await runCliHere(['tunings', 'room', '--json', '--config', configFor(t, server.port)]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), TUNINGS);
  });

  test('given no daemon, then the database read-only, said on stderr; the versions as the store has them', async (t) => {
    const dir = tempDir(t, 'homeostat-cli-tunings-db-');
    const dbPath = path.join(dir, 'state.db');
    let nowMs = Date.UTC(2026, 10, 30, 9, 0);
    const { db } = openStore({ path: dbPath, logger: silentLogger, nowMs: () => nowMs });
    const store = new DesiredStore(db, () => nowMs);
    const room = { setpoint: 20, mode: 'heat' as const, gains: { kp: 0.2, tiS: 600, tdS: 0 } };
    store.applyConfig({
      text: '# test\n',
      loops: { room: { ...room, sectionHash: sha256(JSON.stringify(room)) } },
    });
    const model = { ...MODEL, standardError: { ...MODEL.standardError, deadTimeS: Number.NaN } };
    store.recordTuning(
      'room',
      { gains: { kp: 0.25, tiS: 612, tdS: 0 }, model },
      { apply: true, source: 'autotune' },
    );
    nowMs += 3_600_000;
    store.recordTuning(
      'room',
      { gains: { kp: 0.3, tiS: 900, tdS: 0 } },
      { apply: false, source: 'manual', by: 'cli' },
    );
    db.close();

    const out: string[] = [];
    const err: string[] = [];
    const code = await tuningsCommand(
      { configPath: path.join(dir, 'none.yaml'), dbPath, direct: true, loop: 'room', json: false },
      (line) => out.push(line),
      (line) => err.push(line),
    );
    assert.equal(code, 0, err.join('\n'));
    assert.deepEqual(err, [
      `reading the database given by --db (leave --db out to ask the running daemon); tunings from the database ${dbPath}`,
    ]);
    assert.deepEqual(out, [
      'room: 2 stored tuning(s); in force: version 1',
      '  version  created (UTC)     source    kp    tiS    tdS  model (gain, τ, θ)',
      '  2        2026-11-30 10:00  manual    0.3   900 s  0 s',
      '* 1        2026-11-30 09:00  autotune  0.25  612 s  0 s  20.1 ± 0.81, 612 ± 30.6 s, 61.2 s',
      '  config                     file',
    ]);
  });

  test('given no daemon and a loop the database does not have, then says so; exit 1', async (t) => {
    const dir = tempDir(t, 'homeostat-cli-tunings-db-');
    const dbPath = path.join(dir, 'state.db');
    openStore({ path: dbPath, logger: silentLogger, nowMs: () => 0 }).db.close();
    const err: string[] = [];
    const code = await tuningsCommand(
      { configPath: path.join(dir, 'none.yaml'), dbPath, direct: true, loop: 'attic', json: false },
      () => {},
      (line) => err.push(line),
    );
    assert.equal(code, 1);
    assert.match(err.join('\n'), /no loop "attic" in the database$/);
  });
});

describe('homeostat tuning LOOP VERSION|latest|config', () => {
  const cases: { given: string; body: unknown; answer: unknown; line: string }[] = [
    {
      given: 'latest',
      body: 'latest',
      answer: { accepted: true, generation: 7, changed: true },
      line: 'room: the newest tuning in force (generation 7); the PID takes the new gains bumplessly at its next cycle',
    },
    {
      given: '2',
      body: 2,
      answer: { accepted: true, generation: 7, changed: true },
      line: 'room: tuning version 2 in force (generation 7); the PID takes the new gains bumplessly at its next cycle',
    },
    {
      given: 'config',
      body: 'config',
      answer: { accepted: true, generation: 6, changed: false },
      line: "room: the config file's gains already in force (generation 6)",
    },
  ];
  for (const { given, body, answer, line } of cases) {
    test(`tuning room ${given}: POSTs {"version": ${JSON.stringify(body)}}, prints "${line}", exit 0`, async (t) => {
      const server = await fakeApi(t, () => ({ status: 200, body: answer }));
      const result = await runCliHere(['tuning', 'room', given, '--config', configFor(t, server.port)]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `${line}\n`);
      assert.equal(server.requests[0]?.url, '/api/loops/room/tuning');
      assert.equal(JSON.parse(server.requests[0]!.body).version, body);
    });
  }

  test("given an unknown version (422), then the daemon's reason, exit 1", async (t) => {
    const reason = 'loop "room" has no tuning version 9 (it has 1..3)';
    const server = await fakeApi(t, () => ({ status: 422, body: { accepted: false, reason } }));
    const result = await runCliHere(['tuning', 'room', '9', '--config', configFor(t, server.port)]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, `homeostat tuning: room: refused: ${reason}\n`);
  });

  test('given no daemon, then one line, exit 1', async (t) => {
    const port = await freePort();
    const result = await runCliHere(['tuning', 'room', 'latest', '--config', configFor(t, port)]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stdout,
      `homeostat tuning: daemon not running (no answer at http://127.0.0.1:${port}: connection refused): a tuning is put in force by the running daemon; start it first\n`,
    );
  });

  test('given no version or a bad one, then usage, exit 2', async () => {
    for (const args of [
      ['tuning', 'room'],
      ['tuning', 'room', 'newest'],
      ['tuning', 'room', '0'],
    ]) {
      const result = await runCliHere(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, /^homeostat tuning: name a loop and a version number, latest or config/);
    }
  });
});
