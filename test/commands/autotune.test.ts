/**
 * `homeostat autotune LOOP` as a user at the node's terminal sees it, against a stand-in of the
 * daemon's API answering per its schemas (src/operations/schemas.ts): the POST, then the
 * loop's status polled until the run ends. The command runs in-process (polling every 1 ms, a
 * scripted sequence of statuses) and, for the exit codes as the shell sees them, as the CLI.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import {
  type AutotuneCommandOptions,
  autotuneCommand,
  duration,
  significant,
} from '../../src/commands/autotune.js';
import { CliProcess, runCli, waitUntil } from '../integration/helpers.js';
import { runCliHere } from '../support/cli.js';
import { minimalSimConfigText } from '../support/config.js';
import { freePort } from '../support/net.js';
import { tempDir } from '../support/tmp.js';
import { type FakeAnswer, fakeApi, type RecordedRequest } from './fake-api.js';

function configFor(t: TestContext, port: number): string {
  const file = path.join(tempDir(t, 'homeostat-cli-autotune-'), 'config.yaml');
  writeFileSync(file, minimalSimConfigText({ extra: `http: { port: ${port} }` }));
  return file;
}

const H = 3_600_000;
const MIN = 60_000;

/**
 * The room's status as GET /api/loops/room sends it, with `autotune` (absent: none since the
 * start) and `tuning`; fields the command does not read are left out.
 */
function roomWith(
  generation: number,
  observed: number,
  autotune: unknown,
  latest = 2,
  active: number | 'config' = 'config',
) {
  return {
    loop: 'room',
    name: 'Living room',
    quantity: 'temperature',
    unit: '°C',
    step: 0.5,
    modes: ['off', 'heat'],
    mode: 'heat',
    setpoint: 21,
    controller: 'pid',
    generation,
    observedGeneration: observed,
    actuators: { room_heater: { wanted: 1, observed: 1 } },
    tuning: { active, latest },
    ...(autotune === null ? {} : { autotune }),
  };
}

const progress = (phase: string, fields: Record<string, unknown>) => ({
  phase,
  side: 'raise',
  cycles: 0,
  cyclesNeeded: 3,
  remainingIsLimit: true,
  ...fields,
});

/** A finished run's result as the status shows it (src/operations/schemas.ts autotuneView.result). */
const RESULT = {
  gain: 20.13,
  timeConstantS: 612.4,
  deadTimeS: 61.2,
  ambient: 10.21,
  standardError: { gain: 0.81, timeConstantS: 30.6, deadTimeS: 4.04 },
  rmsResidual: 0.0412,
  kp: 0.2451,
  tiS: 612.4,
  tdS: 0,
  closedLoopS: 61.2,
  band: 0.3,
  windowS: 120,
};

/**
 * A stand-in daemon: POST /autotune answers `post`; GET /api/loops/room answers `statuses` in
 * turn (the last one again once they run out).
 */
async function daemon(t: TestContext, post: FakeAnswer, statuses: unknown[]) {
  let next = 0;
  const server = await fakeApi(t, (request: RecordedRequest) => {
    if (request.method === 'POST') return post;
    const body = statuses[Math.min(next, statuses.length - 1)];
    next++;
    return { status: 200, body };
  });
  return { server, config: configFor(t, server.port) };
}

async function run(config: string, opts: Partial<AutotuneCommandOptions> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await autotuneCommand(
    { configPath: config, loop: 'room', wait: true, cancel: false, pollMs: 1, ...opts },
    (line) => out.push(line),
    (line) => err.push(line),
  );
  return { code, out, err };
}

const ACCEPTED: FakeAnswer = { status: 200, body: { loop: 'room', accepted: true, generation: 4 } };
const STARTED_LINE =
  'room: autotune started: switches the heater (room_heater) on and off around 21.0 °C until the oscillation is steady; at most 48 h; the safety limits stay active; Ctrl-C stops watching, not the run';

describe('homeostat autotune LOOP, following the run', () => {
  test('given a run that ends done, then one line on what the equipment does, a line per change of phase or cycles, the model ± its uncertainty, the gains, the modulation and how to accept; exit 0', async (t) => {
    const { server, config } = await daemon(t, ACCEPTED, [
      roomWith(3, 3, null), // before the POST
      roomWith(4, 3, null), // the daemon has not acted yet
      roomWith(4, 4, progress('noise', { elapsedMs: MIN, remainingMs: 47 * H + 59 * MIN })),
      roomWith(4, 4, progress('noise', { elapsedMs: 2 * MIN, remainingMs: 47 * H + 58 * MIN })), // no change
      roomWith(
        4,
        4,
        progress('relay', { elapsedMs: 3 * MIN, remainingMs: 47 * H + 57 * MIN, hysteresis: 0.15 }),
      ),
      roomWith(
        4,
        4,
        progress('relay', { cycles: 1, elapsedMs: 25 * MIN, remainingMs: 47 * H, hysteresis: 0.15 }),
      ),
      roomWith(
        4,
        4,
        progress('relay', {
          cycles: 2,
          elapsedMs: 52 * MIN,
          remainingMs: 20 * MIN,
          remainingIsLimit: false,
          hysteresis: 0.15,
        }),
      ),
      roomWith(
        4,
        4,
        { ...progress('done', { cycles: 3, elapsedMs: 72 * MIN, remainingMs: 0 }), result: RESULT },
        3,
      ),
    ]);
    const { code, out } = await run(config);
    assert.equal(code, 0, out.join('\n'));
    assert.deepEqual(out, [
      STARTED_LINE,
      'room: measuring the sensor noise (output held) · elapsed 60 s · at most 47 h 59 min left',
      'room: relay cycles 0/3 · band ±0.15 °C · elapsed 3 min · at most 47 h 57 min left',
      'room: relay cycles 1/3 · band ±0.15 °C · elapsed 25 min · at most 47 h left',
      'room: relay cycles 2/3 · band ±0.15 °C · elapsed 52 min · about 20 min left',
      'room: autotune done: 3 cycles in 72 min',
      '  model: gain 20.1 ± 0.81 °C at full output, τ 612 ± 30.6 s, θ 61.2 ± 4.04 s, ambient 10.2 °C; rms residual 0.0412 °C',
      '  gains: kp 0.245, tiS 612, tdS 0 (SIMC, τc 61.2 s)',
      '  suggested relay modulation: a time-proportioning window of 120 s (or a duty band of ±0.3 °C)',
      'room: stored as tuning version 3, not applied: accept it with homeostat tuning room latest',
    ]);
    const posts = server.requests.filter((r) => r.method === 'POST');
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.url, '/api/loops/room/autotune');
    const body = JSON.parse(posts[0]!.body) as Record<string, unknown>;
    assert.equal(body.action, 'start');
    assert.equal(typeof body.requestId, 'string');
  });

  test('given a loop whose config applies results, then it says the tuning was applied automatically', async (t) => {
    const { config } = await daemon(t, ACCEPTED, [
      roomWith(3, 3, null),
      roomWith(4, 4, progress('noise', { elapsedMs: MIN, remainingMs: 6 * H - MIN })),
      roomWith(
        4,
        4,
        { ...progress('done', { cycles: 3, elapsedMs: 72 * MIN, remainingMs: 0 }), result: RESULT },
        3,
        3,
      ),
    ]);
    const { code, out } = await run(config, { maxDurationS: 6 * 3600 });
    assert.equal(code, 0);
    assert.match(out[0]!, /; at most 6 h;/);
    assert.equal(
      out.at(-1),
      "room: applied automatically as tuning version 3 (homeostat tuning room config goes back to the config file's gains)",
    );
  });

  test('given a run the daemon aborts, then the reason and that the loop regulates as before; exit 1', async (t) => {
    const reason =
      'setpoint unreachable: with full output the value did not rise above 21.15 (it stays near 19.8 after 45 min)';
    const { config } = await daemon(t, ACCEPTED, [
      roomWith(3, 3, null),
      roomWith(4, 4, progress('noise', { elapsedMs: MIN, remainingMs: 47 * H + 59 * MIN })),
      roomWith(4, 4, {
        ...progress('aborted', { elapsedMs: 50 * MIN, remainingMs: 0 }),
        abortReason: reason,
      }),
    ]);
    const { code, out } = await run(config);
    assert.equal(code, 1);
    assert.deepEqual(out.slice(-2), [
      `room: autotune aborted: ${reason}`,
      '  the loop regulates with its tuning in force as before (homeostat events --loop room tells more)',
    ]);
  });

  test("given a start the loop refuses at its next cycle (tuning.refused for the request's generation), then its reason; exit 1", async (t) => {
    const refusedView = {
      ...roomWith(4, 4, null),
      tuning: {
        active: 'config',
        latest: 2,
        refused: { reason: 'the sensor cannot be used: no reading yet', generation: 4 },
      },
    };
    const { config } = await daemon(t, ACCEPTED, [roomWith(3, 3, null), refusedView]);
    const { code, out } = await run(config);
    assert.equal(code, 1);
    assert.deepEqual(out, [
      'homeostat autotune: room: the loop did not start it: the sensor cannot be used: no reading yet',
    ]);
  });

  test('given the last run still shown (done) and the daemon starting none, then it says so after a few cycles; exit 1', async (t) => {
    const old = { ...progress('done', { cycles: 3, elapsedMs: 72 * MIN, remainingMs: 0 }), result: RESULT };
    const { config } = await daemon(t, ACCEPTED, [roomWith(3, 3, old), roomWith(4, 4, old)]);
    const { code, out } = await run(config);
    assert.equal(code, 1);
    assert.deepEqual(out, [
      'homeostat autotune: room: the daemon took the request (generation 4) but started no run: see homeostat events --loop room',
    ]);
  });

  test('given Ctrl-C while following, then it says the run goes on and how to cancel it; exit 130, no cancel sent', async (t) => {
    const { server, config } = await daemon(t, ACCEPTED, [
      roomWith(3, 3, null),
      roomWith(4, 4, progress('noise', { elapsedMs: MIN, remainingMs: 47 * H + 59 * MIN })),
    ]);
    const stop = new AbortController();
    const out: string[] = [];
    const code = await autotuneCommand(
      { configPath: config, loop: 'room', wait: true, cancel: false, pollMs: 1, stop: stop.signal },
      (line) => {
        out.push(line);
        if (line.includes('measuring')) stop.abort();
      },
      () => {},
    );
    assert.equal(code, 130);
    assert.equal(
      out.at(-1),
      'room: stopped watching; the autotune goes on in the daemon (homeostat status shows it, homeostat autotune room --cancel stops it)',
    );
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 1);
  });
});

describe('homeostat autotune LOOP in a pipe, as the CLI', () => {
  test('the progress reaches the pipe while the run goes on, and Ctrl-C (SIGINT) stops watching: exit 130, no cancel sent', async (t) => {
    const { server, config } = await daemon(t, ACCEPTED, [
      roomWith(3, 3, null),
      roomWith(4, 4, progress('noise', { elapsedMs: MIN, remainingMs: 47 * H + 59 * MIN })),
    ]);
    const run = new CliProcess(['autotune', 'room', '--config', config]);
    t.after(() => run.kill('SIGKILL'));
    await waitUntil(() => run.stdout.includes('measuring the sensor noise'), {
      what: 'the first progress line on stdout',
      timeoutMs: 20_000,
    });
    run.child.kill('SIGINT');
    const exit = await run.exited;
    assert.equal(exit.code, 130, run.stderr);
    assert.deepEqual(run.stdout.trimEnd().split('\n'), [
      STARTED_LINE,
      'room: measuring the sensor noise (output held) · elapsed 60 s · at most 47 h 59 min left',
      'room: stopped watching; the autotune goes on in the daemon (homeostat status shows it, homeostat autotune room --cancel stops it)',
    ]);
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 1);
  });
});

describe('homeostat autotune LOOP, the requests', () => {
  test('--no-wait --side raise --closed-loop 2m --max-duration 6h: the options in the POST, one line, exit 0 (as the CLI)', async (t) => {
    const { server, config } = await daemon(t, ACCEPTED, [roomWith(3, 3, null)]);
    const result = await runCli([
      'autotune',
      'room',
      '--no-wait',
      '--side',
      'raise',
      '--closed-loop',
      '2m',
      '--max-duration',
      '6h',
      '--config',
      config,
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n'), [
      'room: autotune accepted (generation 4): switches the heater (room_heater) on and off around 21.0 °C until the oscillation is steady; at most 6 h; the safety limits stay active; Ctrl-C stops watching, not the run; progress in homeostat status, stop it with homeostat autotune room --cancel',
    ]);
    const post = server.requests.find((r) => r.method === 'POST');
    const { requestId: _id, ...body } = JSON.parse(post!.body) as Record<string, unknown>;
    assert.deepEqual(body, { action: 'start', side: 'raise', closedLoopS: 120, maxDurationS: 21_600 });
  });

  test("given a refusal (422), then one line with the daemon's reason, exit 1 (as the CLI)", async (t) => {
    const reason = 'loop "room" has a hysteresis controller: autotune tunes a PID';
    const { config } = await daemon(t, { status: 422, body: { loop: 'room', accepted: false, reason } }, [
      roomWith(3, 3, null),
    ]);
    const result = await runCli(['autotune', 'room', '--config', config]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, `homeostat autotune: room: refused: ${reason}\n`);
  });

  test('--cancel: POSTs action cancel, one line, exit 0', async (t) => {
    const { server, config } = await daemon(t, ACCEPTED, []);
    const { code, out } = await run(config, { cancel: true });
    assert.equal(code, 0);
    assert.deepEqual(out, ["room: cancel accepted (generation 4): the run stops at the loop's next cycle"]);
    assert.equal(JSON.parse(server.requests[0]!.body).action, 'cancel');
    assert.equal(server.requests.length, 1, 'no status asked');
  });

  test('given an unknown loop (404), then the API error, exit 1', async (t) => {
    const server404 = await fakeApi(t, () => ({ status: 404, body: { error: 'unknown loop "attic"' } }));
    const result = await run(configFor(t, server404.port), { loop: 'attic' });
    assert.equal(result.code, 1);
    assert.deepEqual(result.out, ['homeostat autotune: unknown loop "attic" (GET /api/loops/attic: 404)']);
  });

  test('given no daemon answering, then one line: it cannot run from the database; exit 1 (as the CLI)', async (t) => {
    const port = await freePort();
    const result = await runCli(['autotune', 'room', '--config', configFor(t, port)]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stdout,
      `homeostat autotune: daemon not running (no answer at http://127.0.0.1:${port}: connection refused): an autotune runs in the daemon and cannot run from the database; start it first\n`,
    );
  });

  test('usage errors: exit 2, one line naming the help (in-process)', async () => {
    const cases: [string[], string][] = [
      [
        ['autotune'],
        'homeostat autotune: name a loop, e.g. homeostat autotune room (see homeostat autotune --help)',
      ],
      [
        ['autotune', 'room', '--side', 'up'],
        'homeostat autotune: --side must be raise or lower, got "up" (see homeostat autotune --help)',
      ],
      [
        ['autotune', 'room', '--cancel', '--side', 'raise'],
        'homeostat autotune: --cancel takes no other autotune option (see homeostat autotune --help)',
      ],
      [
        ['autotune', 'room', '--max-duration', '6'],
        'homeostat autotune: "6" is not a duration: use a number and s, m, h or d (e.g. 2h) (see homeostat autotune --help)',
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCliHere(args);
      assert.deepEqual(result, { code: 2, stdout: '', stderr: `${message}\n` }, args.join(' '));
    }
  });
});

describe('numbers as printed: three significant digits, never an exponent', () => {
  const cases: [number, string][] = [
    [20.13, '20.1'],
    [3600, '3600'],
    [14_400.7, '14400'],
    [0.2451, '0.245'],
    [0.00031, '0.00031'],
    [3.22e-13, '0'],
    [-3.22e-13, '0'],
    [0, '0'],
  ];
  for (const [value, text] of cases) test(`${value} → ${text}`, () => assert.equal(significant(value), text));
});

describe('durations as printed', () => {
  const cases: [number, string][] = [
    [45_000, '45 s'],
    [89_000, '89 s'],
    [90_000, '2 min'],
    [89 * MIN, '89 min'],
    [90 * MIN, '1 h 30 min'],
    [48 * H, '48 h'],
    [47 * H + 5 * MIN, '47 h 05 min'],
  ];
  for (const [ms, text] of cases) test(`${ms} ms → ${text}`, () => assert.equal(duration(ms), text));
});
