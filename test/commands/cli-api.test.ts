/**
 * `homeostat status | history | events | set` as a user runs them (the CLI as a child process),
 * with a daemon answering on the HTTP API: a stand-in server per the contract, recording what
 * the CLI sends. Without a daemon: cli-fallback.test.ts.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { runCli } from '../integration/helpers.js';
import { minimalSimConfigText } from '../support/config.js';
import { tempDir } from '../support/tmp.js';
import { fakeApi, queryOf, sampleEvent, sampleLoop } from './fake-api.js';

const TOKEN = 'cli-test-token-0123456789abcdef';

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
  test('status: one status line (with the unit) and one generation line per loop, from GET /api/loops with the token', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [sampleLoop()] } }));
    const result = await runCli(['status', '--config', configForApi(t, server.port)]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n'), [
      'room  19.50 °C → 21 °C  heat  output 43 %  heating  [Converged=False(Approaching)]',
      '  generation 3, observed 3; setpoint from http, mode from file, updated 2026-11-30T12:00:00.000Z',
    ]);
    assert.equal(result.stderr, '');
    assert.equal(server.requests[0]?.url, '/api/loops');
    assert.equal(server.requests[0]?.headers.authorization, `Bearer ${TOKEN}`);
  });

  test('status --json: the API loops, as JSON on stdout', async (t) => {
    const loop = sampleLoop();
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [loop] } }));
    const result = await runCli(['status', '--json', '--config', configForApi(t, server.port)]);
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
    const result = await runCli([
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
    const result = await runCli(['history', 'nope', '--config', configForApi(t, server.port)]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^homeostat history: unknown loop "nope"/);
    assert.doesNotMatch(result.stderr, /database/);
  });

  test('events --loop room --json: loop and limit 1000 asked; the API events as JSON', async (t) => {
    const event = sampleEvent();
    const server = await fakeApi(t, () => ({ status: 200, body: { events: [event] } }));
    const result = await runCli([
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
    const result = await runCli(['events', '--config', configForApi(t, server.port)]);
    assert.equal(
      result.stdout,
      '2026-11-30T11:59:00.000Z  room  setpoint-changed (http)  setpoint 20 → 21\n',
    );
  });

  test('set room --setpoint 21.5: POST /api/loops/room with the body and the token; "accepted (generation N)", exit 0', async (t) => {
    const server = await fakeApi(t, (request) => ({
      status: 200,
      body: { loop: 'room', accepted: true, generation: 4, requestId: JSON.parse(request.body).requestId },
    }));
    const result = await runCli([
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
    assert.equal(request?.headers.authorization, `Bearer ${TOKEN}`);
    const body = JSON.parse(request?.body ?? '') as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['requestId', 'setpoint']);
    assert.equal(body.setpoint, 21.5);
    assert.match(String(body.requestId), /^[\w-]{1,64}$/);
  });

  test('set refused (422): "rejected: reason", exit 1', async (t) => {
    const reason = 'setpoint 99 is outside the limits 5..30';
    const server = await fakeApi(t, () => ({ status: 422, body: { loop: 'room', accepted: false, reason } }));
    const result = await runCli([
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
    const result = await runCli(['set', 'nope', '--mode', 'off', '--config', configForApi(t, server.port)]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^homeostat set: unknown loop "nope" \(POST \/api\/loops\/nope: 404\)$/m);
    assert.doesNotMatch(result.stdout + result.stderr, /broker/);
  });

  test('a refused token (401): says so and how to give it, exit 1, the token never printed', async (t) => {
    const server = await fakeApi(t, () => ({ status: 401, body: { error: 'a valid token is needed' } }));
    const result = await runCli(['status', '--json', '--config', configForApi(t, server.port)]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /wants a valid token \(401\): the token from http\.tokenFile .* was refused/);
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(TOKEN));
  });

  test('--api-url: asked there even when the config turns the API off', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [sampleLoop()] } }));
    const config = configForApi(t, 1, ', enabled: false');
    const result = await runCli(['status', '--config', config, '--api-url', server.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.requests.length, 1);
  });

  test('--api-url that is not http(s)://host: a usage error (exit 2)', async () => {
    const result = await runCli(['status', '--api-url', 'ftp://pi.local']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--api-url must be http:\/\/host:port/);
  });
});
