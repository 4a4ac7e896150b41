/**
 * `homeostat status | history | events | set` as a user runs them (the command line run in-process: test/support/cli.ts),
 * with a daemon answering on the HTTP API: a stand-in server per the contract, recording what
 * the CLI sends. The CLI first asks which node answers (GET /api/node) and goes on only for the
 * config's node. The token goes only to an address off loopback (a LAN address of this machine
 * here; skipped without one). Without a daemon: cli-fallback.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { runCliHere } from '../support/cli.js';
import { minimalSimConfigText } from '../support/config.js';
import { tempDir } from '../support/tmp.js';
import { fakeApi, lanAddress, queryOf, recordingBroker, sampleEvent, sampleLoop } from './fake-api.js';

const TOKEN = 'cli-test-token-0123456789abcdef';
const LAN = lanAddress();
const noLan = LAN === undefined ? 'this machine has no LAN address' : false;

/** The minimal config with its http block on `port`, the token in a file next to it. */
function configForApi(t: TestContext, port: number, http = ''): string {
  const dir = tempDir(t, 'homeostat-cli-api-');
  const tokenFile = path.join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const file = path.join(dir, 'config.yaml');
  writeFileSync(
    file,
    minimalSimConfigText({ extra: `http: { port: ${port}, tokenFile: ${tokenFile}${http} }` }),
  );
  return file;
}

describe('given a daemon answering on the HTTP API', () => {
  test('status: one status line (with the unit) and one generation line per loop, from GET /api/loops after GET /api/node; no token to loopback', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [sampleLoop()] } }));
    const config = configForApi(t, server.port);
    const result = await runCliHere(['status', '--config', config]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n'), [
      'room  19.50 °C → 21 °C  heat  output 43 %  heating  [Converged=False(Approaching)]',
      '  generation 3, observed 3; setpoint from http, mode from file, updated 2026-11-30T12:00:00.000Z',
    ]);
    // Which node and which config answered, on stderr only (stdout stays the status).
    assert.equal(result.stderr, `node pi answered at ${server.url} (config ${config})\n`);
    assert.equal(server.requests[0]?.url, '/api/loops');
    assert.equal(server.nodeRequests.length, 1, 'one extra request: which node answers');
    // 127.0.0.1 gets no token, even with a token file.
    for (const request of [...server.nodeRequests, ...server.requests]) {
      assert.equal(request.headers.authorization, undefined);
    }
  });

  test('status --json: the API loops, as JSON on stdout', async (t) => {
    const loop = sampleLoop();
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [loop] } }));
    const result = await runCliHere(['status', '--json', '--config', configForApi(t, server.port)]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [loop]);
  });

  test('history --since 6h --csv: the duration as written, maxPoints 5000; the CSV columns of the database form', async (t) => {
    const point = {
      at: '2026-11-30T11:00:00.000Z',
      measured: 19.25,
      setpoint: 21,
      output: 0.5,
      action: 'heating',
    };
    const gap = { ...point, at: '2026-11-30T11:01:00.000Z', measured: null };
    const history = {
      loop: 'room',
      from: '2026-11-30T06:00:00Z',
      to: '2026-11-30T12:00:00Z',
      downsampled: false,
    };
    const server = await fakeApi(t, () => ({ status: 200, body: { ...history, points: [point, gap] } }));
    const result = await runCliHere([
      'history',
      'room',
      '--since',
      '6h',
      '--csv',
      '--config',
      configForApi(t, server.port),
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n'), [
      'time,setpoint,measured,output,action,resolution_s',
      '2026-11-30T11:00:00.000Z,21,19.25,0.5,heating,',
      '2026-11-30T11:01:00.000Z,21,,0.5,heating,',
    ]);
    assert.equal(server.requests[0]?.url.split('?')[0], '/api/loops/room/history');
    assert.deepEqual(queryOf(server.requests[0]), { since: '6h', maxPoints: '5000' });
  });

  test('history of an unknown loop: the 404 reason on stderr, exit 1, no database read', async (t) => {
    const server = await fakeApi(t, () => ({ status: 404, body: { error: 'unknown loop "nope"' } }));
    const result = await runCliHere(['history', 'nope', '--config', configForApi(t, server.port)]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^homeostat history: unknown loop "nope"/m);
    assert.doesNotMatch(result.stderr, /database/);
  });

  test('events --loop room --json: loop and limit 1000 asked; the API events as JSON', async (t) => {
    const event = sampleEvent();
    const server = await fakeApi(t, () => ({ status: 200, body: { events: [event] } }));
    const result = await runCliHere([
      'events',
      '--loop',
      'room',
      '--json',
      '--config',
      configForApi(t, server.port),
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [event]);
    assert.deepEqual(queryOf(server.requests[0]), { loop: 'room', limit: '1000' });
  });

  test('events: one line each, as from the database', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { events: [sampleEvent()] } }));
    const result = await runCliHere(['events', '--config', configForApi(t, server.port)]);
    assert.equal(
      result.stdout,
      '2026-11-30T11:59:00.000Z  room  setpoint-changed (http)  setpoint 20 → 21\n',
    );
  });

  test('set room --setpoint 21.5: POST /api/loops/room with the body (no token to loopback); "accepted (generation N)", exit 0', async (t) => {
    const server = await fakeApi(t, (request) => ({
      status: 200,
      body: { loop: 'room', accepted: true, generation: 4, requestId: JSON.parse(request.body).requestId },
    }));
    const result = await runCliHere([
      'set',
      'room',
      '--setpoint',
      '21.5',
      '--config',
      configForApi(t, server.port),
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.stdout, 'room: accepted (generation 4)\n');
    const request = server.requests[0];
    assert.equal(request?.method, 'POST');
    assert.equal(request?.url, '/api/loops/room');
    assert.equal(request?.headers['content-type'], 'application/json');
    assert.equal(request?.headers.authorization, undefined);
    const body = JSON.parse(request?.body ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['requestId', 'setpoint']);
    assert.equal(body.setpoint, 21.5);
    assert.match(String(body.requestId), /^[\w-]{1,64}$/);
  });

  test('set refused (422): "rejected: reason", exit 1', async (t) => {
    const reason = 'setpoint 99 is outside the limits 5..30';
    const server = await fakeApi(t, () => ({ status: 422, body: { loop: 'room', accepted: false, reason } }));
    const result = await runCliHere([
      'set',
      'room',
      '--setpoint',
      '99',
      '--config',
      configForApi(t, server.port),
    ]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, `room: rejected: ${reason}\n`);
  });

  test('set of a loop the daemon does not have (404): fails with the reason, nothing tried over MQTT', async (t) => {
    const server = await fakeApi(t, () => ({ status: 404, body: { error: 'unknown loop "nope"' } }));
    const result = await runCliHere([
      'set',
      'nope',
      '--mode',
      'off',
      '--config',
      configForApi(t, server.port),
    ]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^homeostat set: unknown loop "nope" \(POST \/api\/loops\/nope: 404\)$/m);
    assert.doesNotMatch(result.stdout + result.stderr, /broker/);
  });

  test('a 401 from loopback: the daemon wants a token from loopback (older daemon or proxy), exit 1, no fallback', async (t) => {
    const refuse = () => ({ status: 401, body: { error: 'a valid token is needed' } });
    const server = await fakeApi(t, refuse, { node: refuse });
    const result = await runCliHere(['status', '--json', '--config', configForApi(t, server.port)]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^homeostat status: the daemon at http:\/\/127\.0\.0\.1:\d+ wants a token from loopback \(401\)/,
    );
    assert.doesNotMatch(result.stderr, /database/);
    assert.equal(server.nodeRequests[0]?.headers.authorization, undefined);
  });

  test("--api-url off loopback: the config's token is sent there (the user named the address)", {
    skip: noLan,
  }, async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [sampleLoop()] } }), { host: LAN });
    const result = await runCliHere(['status', '--config', configForApi(t, 1), '--api-url', server.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.nodeRequests[0]?.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(server.requests[0]?.headers.authorization, `Bearer ${TOKEN}`);
  });

  test('a refused token off loopback (401): says so and how to give it, exit 1, the token never printed', {
    skip: noLan,
  }, async (t) => {
    const refuse = () => ({ status: 401, body: { error: 'a valid token is needed' } });
    const server = await fakeApi(t, refuse, { host: LAN, node: refuse });
    const config = configForApi(t, 1);
    const result = await runCliHere(['status', '--json', '--config', config, '--api-url', server.url]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /wants a valid token \(401\): the token from http\.tokenFile .* was refused/);
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(TOKEN));
  });

  test('--api-url: asked there even when the config turns the API off', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [sampleLoop()] } }));
    const config = configForApi(t, 1, ', enabled: false');
    const result = await runCliHere(['status', '--config', config, '--api-url', server.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.requests.length, 1);
  });

  test('--api-url that is not http(s)://host: a usage error (exit 2)', async () => {
    const result = await runCliHere(['status', '--api-url', 'ftp://pi.local']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--api-url must be http:\/\/host:port/);
  });
});

describe('given another node answering at the address (two nodes on one machine)', () => {
  test('status: exit 1 naming both nodes and what to give; no database read, no loops asked', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [sampleLoop()] } }), {
      node: 'fermenter',
    });
    const config = configForApi(t, server.port);
    const result = await runCliHere(['status', '--config', config]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      `homeostat status: the daemon at ${server.url} is node fermenter, not pi (config ${config}): give --api-url, or the http.port of pi's daemon\n`,
    );
    assert.equal(server.requests.length, 0);
  });

  test('set: exit 1 naming both nodes; nothing POSTed, nothing sent through the broker', async (t) => {
    const broker = await recordingBroker(t);
    const server = await fakeApi(t, () => ({ status: 200, body: {} }), { node: 'fermenter' });
    const config = configForApi(t, server.port, '');
    writeFileSync(config, `${readFileSync(config, 'utf8')}\nmqtt: { url: '${broker.url}' }\n`);
    const result = await runCliHere(['set', 'room', '--setpoint', '95', '--config', config]);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /^homeostat set: the daemon at http:\/\/127\.0\.0\.1:\d+ is node fermenter, not pi \(config /,
    );
    assert.equal(server.requests.length, 0, 'nothing POSTed');
    assert.equal(broker.connections, 0, 'nothing sent through the broker');
  });

  test('with --api-url: the hint names the config to give', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: {} }), { node: 'fermenter' });
    const result = await runCliHere(['events', '--config', configForApi(t, 1), '--api-url', server.url]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /is node fermenter, not pi \(config .*\): give --config with fermenter's config, or the --api-url of pi's daemon/,
    );
  });
});

describe('given no valid config', () => {
  test('a read with --api-url: answered, and stderr says which node answered', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [] } }), { node: 'kettle' });
    const missing = path.join(tempDir(t), 'none.yaml');
    const result = await runCliHere(['status', '--json', '--config', missing, '--api-url', server.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), []);
    assert.equal(
      result.stderr,
      `node kettle answered at ${server.url} (no config at ${missing}: not checked against a config)\n`,
    );
  });

  test('set without --api-url: a usage error naming the config problem (exit 2), nothing asked', async (t) => {
    const invalid = path.join(tempDir(t), 'bad.yaml');
    writeFileSync(invalid, 'version: 1\nnode: {}\n');
    const result = await runCliHere(['set', 'room', '--setpoint', '95', '--config', invalid]);
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      /^homeostat set: .*bad\.yaml is not valid \(.*\): without it the daemon cannot be checked to be the node you mean; give --config FILE \(the daemon's config\), or --api-url URL\n$/,
    );
    assert.doesNotMatch(result.stderr, /trying the default API address/);
  });

  test('set with --api-url: sent there, and stderr says which node took it', async (t) => {
    const server = await fakeApi(t, (request) => ({
      status: 200,
      body: { loop: 'room', accepted: true, generation: 7, requestId: JSON.parse(request.body).requestId },
    }));
    const missing = path.join(tempDir(t), 'none.yaml');
    const result = await runCliHere([
      'set',
      'room',
      '--mode',
      'off',
      '--config',
      missing,
      '--api-url',
      server.url,
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.stdout, 'room: accepted (generation 7)\n');
    assert.match(result.stderr, /^node pi answered at /);
  });
});

describe('given a daemon that takes a write and does not answer in time', () => {
  test('set: no answer within 5 s, the change may or may not have been applied; exit 1, not resent through the broker', async (t) => {
    const broker = await recordingBroker(t);
    const server = await fakeApi(t, () => 'hang');
    const config = configForApi(t, server.port);
    writeFileSync(config, `${readFileSync(config, 'utf8')}\nmqtt: { url: '${broker.url}' }\n`);
    const result = await runCliHere(['set', 'room', '--setpoint', '21', '--config', config]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stdout,
      `homeostat set: the daemon at ${server.url}: no answer within 5 s: the change may or may not have been applied; check with homeostat status\n`,
    );
    assert.equal(server.requests.length, 1, 'POSTed once');
    assert.equal(broker.connections, 0, 'not resent through the broker');
  });
});
