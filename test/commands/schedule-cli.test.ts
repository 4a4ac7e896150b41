/**
 * `homeostat preset` and `homeostat profile` as a user runs them (the command line run in-process: test/support/cli.ts),
 * against a stand-in daemon API that records what the CLI sends: the body POSTed, the line
 * printed, the exit code (0 accepted, 1 refused / no daemon, 2 usage).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { parseProfileArgs } from '../../src/commands/profile.js';
import { runCliHere } from '../support/cli.js';
import { minimalSimConfigText } from '../support/config.js';
import { freePort } from '../support/net.js';
import { tempDir } from '../support/tmp.js';
import { fakeApi } from './fake-api.js';

function configFor(t: TestContext, port: number): string {
  const file = path.join(tempDir(t, 'homeostat-cli-schedule-'), 'config.yaml');
  writeFileSync(file, minimalSimConfigText({ extra: `http: { port: ${port} }` }));
  return file;
}

const ok = (changed: boolean) => ({
  status: 200,
  body: { loop: 'room', accepted: true, generation: 7, changed, requestId: 'x' },
});

describe('homeostat preset LOOP NAME|none', () => {
  const cases: { args: string[]; sent: unknown; changed: boolean; line: string }[] = [
    { args: ['eco'], sent: 'eco', changed: true, line: 'room: preset eco selected (generation 7)' },
    { args: ['eco'], sent: 'eco', changed: false, line: 'room: preset eco already selected (generation 7)' },
    {
      args: ['none'],
      sent: null,
      changed: true,
      line: 'room: no preset now; the setpoint stays where the preset left it (generation 7)',
    },
  ];
  for (const { args, sent, changed, line } of cases) {
    test(`preset room ${args.join(' ')} (changed ${changed}): POSTs {"preset": ${JSON.stringify(sent)}}, prints "${line}", exit 0`, async (t) => {
      const server = await fakeApi(t, () => ok(changed));
      const result = await runCliHere(['preset', 'room', ...args, '--config', configFor(t, server.port)]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `${line}\n`);
      assert.equal(server.requests[0]?.url, '/api/loops/room/preset');
      const body = JSON.parse(server.requests[0]!.body) as { preset: unknown; requestId: string };
      assert.equal(body.preset, sent);
      assert.match(body.requestId, /^[0-9a-f-]{12}$/);
    });
  }

  test("given an unknown preset (422), then the daemon's reason, exit 1", async (t) => {
    const reason = 'unknown preset "ecco" (known: comfort, eco, or none)';
    const server = await fakeApi(t, () => ({ status: 422, body: { loop: 'room', accepted: false, reason } }));
    const result = await runCliHere(['preset', 'room', 'ecco', '--config', configFor(t, server.port)]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, `homeostat preset: room: refused: ${reason}\n`);
  });

  test('given no daemon, then one line, nothing sent, exit 1', async (t) => {
    const port = await freePort();
    const result = await runCliHere(['preset', 'room', 'eco', '--config', configFor(t, port)]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stdout,
      `homeostat preset: daemon not running (no answer at http://127.0.0.1:${port}: connection refused): the running daemon applies it; start it first\n`,
    );
  });

  test('given no preset, or one too many, then usage, exit 2', async () => {
    const missing = await runCliHere(['preset', 'room']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^homeostat preset: name a loop and a preset, or none/);
    const extra = await runCliHere(['preset', 'room', 'eco', 'away']);
    assert.equal(extra.code, 2);
    assert.match(extra.stderr, /^homeostat preset: unexpected argument "away"/);
  });
});

describe('homeostat profile LOOP start NAME|pause|resume|stop', () => {
  const cases: { args: string[]; sent: object; changed: boolean; line: string }[] = [
    {
      args: ['start', 'ale'],
      sent: { action: 'start', name: 'ale' },
      changed: true,
      line: 'room: profile ale started (generation 7)',
    },
    {
      args: ['pause'],
      sent: { action: 'pause' },
      changed: true,
      line: 'room: profile paused: it holds its setpoint until resumed (generation 7)',
    },
    {
      args: ['pause'],
      sent: { action: 'pause' },
      changed: false,
      line: 'room: nothing to pause (no profile running, or it already is paused) (generation 7)',
    },
    {
      args: ['resume'],
      sent: { action: 'resume' },
      changed: true,
      line: 'room: profile resumed (generation 7)',
    },
    {
      args: ['stop'],
      sent: { action: 'stop' },
      changed: true,
      line: 'room: profile stopped: the schedule or the manual setpoint is in force again (generation 7)',
    },
  ];
  for (const { args, sent, changed, line } of cases) {
    test(`profile room ${args.join(' ')} (changed ${changed}): POSTs ${JSON.stringify(sent)}, exit 0`, async (t) => {
      const server = await fakeApi(t, () => ok(changed));
      const result = await runCliHere(['profile', 'room', ...args, '--config', configFor(t, server.port)]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `${line}\n`);
      assert.equal(server.requests[0]?.url, '/api/loops/room/profile');
      const { requestId, ...body } = JSON.parse(server.requests[0]!.body) as { requestId: string };
      assert.deepEqual(body, sent);
      assert.equal(typeof requestId, 'string');
    });
  }

  test("given a refusal (422), then the daemon's reason, exit 1", async (t) => {
    const reason = 'loop room has no profiles: add them under loops.room.profiles in the config';
    const server = await fakeApi(t, () => ({ status: 422, body: { loop: 'room', accepted: false, reason } }));
    const result = await runCliHere([
      'profile',
      'room',
      'start',
      'ale',
      '--config',
      configFor(t, server.port),
    ]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, `homeostat profile: room: refused: ${reason}\n`);
  });

  test('given words that are not a profile command, then usage, exit 2, nothing sent', async () => {
    for (const args of [
      ['profile', 'room'],
      ['profile', 'room', 'start'],
      ['profile', 'room', 'toggle'],
      ['profile', 'room', 'pause', 'ale'],
    ]) {
      const result = await runCliHere(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, /^homeostat profile: name a loop and start NAME, pause, resume or stop/);
    }
    const extra = await runCliHere(['profile', 'room', 'start', 'ale', 'now']);
    assert.equal(extra.code, 2);
    assert.match(extra.stderr, /unexpected argument "now"/);
  });

  test('parseProfileArgs: the four commands, nothing else', () => {
    const table: [words: string[], expected: ReturnType<typeof parseProfileArgs>][] = [
      [['start', 'ale'], { action: 'start', name: 'ale' }],
      [['pause'], { action: 'pause' }],
      [['resume'], { action: 'resume' }],
      [['stop'], { action: 'stop' }],
      [['start'], undefined],
      [['stop', 'ale'], undefined],
      [['Start', 'ale'], undefined],
      [[], undefined],
    ];
    for (const [words, expected] of table)
      assert.deepEqual(parseProfileArgs(words), expected, words.join(' '));
  });

  test('--help names the usage and an example', async () => {
    const result = await runCliHere(['profile', '--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /Usage: homeostat profile LOOP start NAME\|pause\|resume\|stop/);
    assert.match(result.stdout, /Example: homeostat profile fermenter start ale/);
  });
});
