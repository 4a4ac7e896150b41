/**
 * The CLI's client of the daemon's HTTP API: where it finds the daemon (the config's http
 * block), what it sends (token, query, body) and how it reads the answers: `ok`, `error` (the
 * daemon answered but refused; no fallback) and `unreachable` (nothing answered; fallback).
 * The token goes to addresses off this machine only: those tests serve the fake API on a LAN
 * address of this machine (skipped where there is none).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { DaemonApi, NoApi } from '../../src/commands/api-client.js';
import { apiBaseUrl, daemonApi, isLoopbackUrl } from '../../src/commands/cli-config.js';
import { httpSchema } from '../../src/config/schema/http.js';
import { freePort } from '../support/net.js';
import { tempDir } from '../support/tmp.js';
import { fakeApi, lanAddress, queryOf, sampleEvent, sampleLoop } from './fake-api.js';

const TOKEN = 'a-token-of-32-characters-for-tests';
const LAN = lanAddress();
const noLan = LAN === undefined ? 'this machine has no LAN address' : false;

function configWith(http: Record<string, unknown>) {
  return { http: httpSchema.parse(http) };
}

function api(target: DaemonApi | NoApi): DaemonApi {
  assert.equal(target.kind, 'api', target.kind === 'none' ? target.why : '');
  return target as DaemonApi;
}

describe('where the CLI looks for the daemon', () => {
  for (const [host, url] of [
    ['127.0.0.1', 'http://127.0.0.1:8734'],
    ['0.0.0.0', 'http://127.0.0.1:8734'],
    ['::', 'http://[::1]:8734'],
    ['::1', 'http://[::1]:8734'],
    ['[::1]', 'http://[::1]:8734'],
    ['localhost', 'http://localhost:8734'],
    ['192.168.1.5', 'http://192.168.1.5:8734'],
  ] as const) {
    test(`listening on ${host}: ${url}`, () => assert.equal(apiBaseUrl({ host, port: 8734 }), url));
  }

  test('no config file: the default address', () => {
    assert.equal(api(daemonApi(undefined)).baseUrl, 'http://127.0.0.1:8734');
  });

  test('http.enabled false: no API, and the reason', () => {
    assert.deepEqual(daemonApi(configWith({ enabled: false })), {
      kind: 'none',
      why: 'HTTP API off in the config (http.enabled: false)',
    });
  });

  test('http.port 0 (a random port): no API, give --api-url', () => {
    assert.equal(
      (daemonApi(configWith({ port: 0 })) as NoApi).why,
      'http.port is 0 (a random port): give --api-url',
    );
  });

  test('--api-url wins over the config, even a disabled block; a trailing slash is dropped', () => {
    const target = daemonApi(configWith({ enabled: false }), { apiUrl: 'http://pi.local:9000/' });
    assert.equal(api(target).baseUrl, 'http://pi.local:9000');
  });
});

describe('which addresses get the token: none on this machine (isLoopbackUrl)', () => {
  for (const [url, loopback] of [
    ['http://127.0.0.1:8734', true],
    ['http://127.0.1.1:8734', true],
    ['http://127.255.255.254:8734', true],
    ['http://127.1:8734', true],
    ['http://2130706433:8734', true],
    ['http://0x7f.1:8734', true],
    ['http://localhost:8734', true],
    ['http://LOCALHOST.:8734', true],
    ['http://pi.localhost:8734', true],
    ['http://[::1]:8734', true],
    ['http://[0:0:0:0:0:0:0:1]:8734', true],
    ['http://[::ffff:127.0.0.1]:8734', true],
    ['http://0.0.0.0:8734', true],
    ['http://[::]:8734', true],
    ['http://128.0.0.1:8734', false],
    ['http://192.168.1.5:8734', false],
    ['http://10.127.0.1:8734', false],
    ['http://[::2]:8734', false],
    ['http://[fd00::1]:8734', false],
    ['http://[::ffff:192.168.1.5]:8734', false],
    ['http://pi.local:8734', false],
    ['http://localhost.example.com:8734', false],
    ['http://127.0.0.1.nip.io:8734', false],
    ['not a url', false],
  ] as const) {
    test(`${url}: ${loopback ? 'loopback, no token' : 'off this machine, the token'}`, () =>
      assert.equal(isLoopbackUrl(url), loopback));
  }

  test('given a token file, when the daemon is at 127.0.0.1, then no Authorization header is sent', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [] } }));
    const tokenFile = join(tempDir(t), 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const answer = await api(
      daemonApi(configWith({ host: '0.0.0.0', port: server.port, tokenFile })),
    ).loops();
    assert.deepEqual(answer, { kind: 'ok', value: [] });
    assert.equal(server.requests[0]?.headers.authorization, undefined);
  });

  test('given an http.token, when --api-url is 127.0.0.1, then no header either', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [] } }));
    await api(daemonApi(configWith({ token: TOKEN }), { apiUrl: server.url })).loops();
    assert.equal(server.requests[0]?.headers.authorization, undefined);
  });

  test('a 401 from loopback: the daemon wants a token from loopback (an older daemon or a proxy), and what to do', async (t) => {
    const server = await fakeApi(t, () => ({ status: 401, body: { error: 'a valid token is needed' } }));
    const answer = await api(daemonApi(configWith({ port: server.port, token: TOKEN }))).loops();
    assert.equal(answer.kind, 'error');
    const message = answer.kind === 'error' ? answer.message : '';
    assert.match(
      message,
      /^the daemon at http:\/\/127\.0\.0\.1:\d+ wants a token from loopback \(401\): an older homeostat, or a proxy in front of it; the CLI sends no token to a loopback address .*; update the daemon, or give --api-url with its non-loopback address/,
    );
    assert.doesNotMatch(message, new RegExp(TOKEN));
  });
});

describe('reads', () => {
  test('GET /api/loops with the token from http.tokenFile as a Bearer header (an address off loopback): the loops', {
    skip: noLan,
  }, async (t) => {
    const loop = sampleLoop();
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [loop] } }), { host: LAN });
    const tokenFile = join(tempDir(t), 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const answer = await api(daemonApi(configWith({ host: LAN, port: server.port, tokenFile }))).loops();
    assert.deepEqual(answer, { kind: 'ok', value: [loop] });
    assert.equal(server.requests[0]?.method, 'GET');
    assert.equal(server.requests[0]?.url, '/api/loops');
    assert.equal(server.requests[0]?.headers.authorization, `Bearer ${TOKEN}`);
  });

  test('GET /api/node: the node that answers', async (t) => {
    const server = await fakeApi(t, () => ({ status: 500, body: {} }), { node: 'kettle' });
    const answer = await api(daemonApi(configWith({ port: server.port }))).node();
    assert.equal(answer.kind === 'ok' ? answer.value.id : answer.kind, 'kettle');
    assert.equal(server.nodeRequests[0]?.url, '/api/node');
  });

  test('no token configured: no Authorization header (loopback needs none)', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [] } }));
    await api(daemonApi(configWith({ port: server.port }))).loops();
    assert.equal(server.requests[0]?.headers.authorization, undefined);
  });

  test('history: the loop escaped in the path, since as given (the daemon measures it), maxPoints', async (t) => {
    const history = {
      loop: 'room',
      from: '2026-11-30T06:00:00Z',
      to: '2026-11-30T12:00:00Z',
      downsampled: false,
    };
    const server = await fakeApi(t, () => ({ status: 200, body: { ...history, points: [] } }));
    const answer = await api(daemonApi(configWith({ port: server.port }))).history('room', {
      since: '6h',
      maxPoints: 5000,
    });
    assert.equal(answer.kind, 'ok');
    assert.equal(server.requests[0]?.url.split('?')[0], '/api/loops/room/history');
    assert.deepEqual(queryOf(server.requests[0]), { since: '6h', maxPoints: '5000' });
  });

  test('events: loop, since and limit as query parameters; the events', async (t) => {
    const event = sampleEvent();
    const server = await fakeApi(t, () => ({ status: 200, body: { events: [event] } }));
    const answer = await api(daemonApi(configWith({ port: server.port }))).events({
      loop: 'room',
      since: '2h',
      limit: 1000,
    });
    assert.deepEqual(answer, { kind: 'ok', value: [event] });
    assert.deepEqual(queryOf(server.requests[0]), { loop: 'room', since: '2h', limit: '1000' });
  });

  test('an unknown loop (404 {error}): an error carrying the reason', async (t) => {
    const server = await fakeApi(t, () => ({ status: 404, body: { error: 'unknown loop "nope"' } }));
    const answer = await api(daemonApi(configWith({ port: server.port }))).history('nope', {
      since: '2h',
      maxPoints: 10,
    });
    assert.equal(answer.kind, 'error');
    assert.match(
      answer.kind === 'error' ? answer.message : '',
      /^unknown loop "nope" \(GET \/api\/loops\/nope\/history: 404\)$/,
    );
  });

  test('an answer that does not match the API: an error naming the endpoint and the field', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [{ loop: 'room' }] } }));
    const answer = await api(daemonApi(configWith({ port: server.port }))).loops();
    assert.equal(answer.kind, 'error');
    const message = answer.kind === 'error' ? answer.message : '';
    assert.match(
      message,
      /^GET \/api\/loops at http:\/\/127\.0\.0\.1:\d+: the answer does not match the API \(loops\.0\.\w+: /,
    );
  });
});

describe('the token, off loopback', { skip: noLan }, () => {
  const refuse = () => ({ status: 401, body: { error: 'a valid token is needed' } });

  test('401 with a token: says it was refused and where it came from, never the token itself', async (t) => {
    const server = await fakeApi(t, refuse, { host: LAN });
    const answer = await api(daemonApi(configWith({ token: TOKEN }), { apiUrl: server.url })).loops();
    assert.equal(answer.kind, 'error');
    const message = answer.kind === 'error' ? answer.message : '';
    assert.match(
      message,
      /wants a valid token \(401\): the token from http\.token was refused; put the daemon's token in http\.tokenFile/,
    );
    assert.doesNotMatch(message, new RegExp(TOKEN));
  });

  test('a token file that cannot be read (a directory): no header is sent, and a 401 says why there was none', async (t) => {
    const server = await fakeApi(t, refuse, { host: LAN });
    const tokenFile = tempDir(t);
    const answer = await api(daemonApi(configWith({ tokenFile }), { apiUrl: server.url })).loops();
    assert.equal(server.requests[0]?.headers.authorization, undefined);
    assert.match(
      answer.kind === 'error' ? answer.message : '',
      /\(401\): cannot read http\.tokenFile .* \(not a regular file\)/,
    );
  });

  test('an empty token file: no header is sent', async (t) => {
    const server = await fakeApi(t, () => ({ status: 200, body: { loops: [] } }), { host: LAN });
    const tokenFile = join(tempDir(t), 'token');
    writeFileSync(tokenFile, '\n');
    await api(daemonApi(configWith({ tokenFile }), { apiUrl: server.url })).loops();
    assert.equal(server.requests[0]?.headers.authorization, undefined);
  });
});

describe('set', () => {
  const body = { setpoint: 21, requestId: 'req-1' };

  test('POSTs the JSON body with Content-Type and the token (off loopback); accepted with its generation', {
    skip: noLan,
  }, async (t) => {
    const reply = { status: 200, body: { loop: 'room', accepted: true, generation: 4, requestId: 'req-1' } };
    const server = await fakeApi(t, () => reply, { host: LAN });
    const answer = await api(daemonApi(configWith({ token: TOKEN }), { apiUrl: server.url })).set(
      'room',
      body,
    );
    assert.deepEqual(answer, {
      kind: 'ok',
      value: { loop: 'room', accepted: true, generation: 4, requestId: 'req-1' },
    });
    const request = server.requests[0];
    assert.equal(request?.method, 'POST');
    assert.equal(request?.url, '/api/loops/room');
    assert.equal(request?.headers['content-type'], 'application/json');
    assert.equal(request?.headers.authorization, `Bearer ${TOKEN}`);
    assert.deepEqual(JSON.parse(request?.body ?? ''), body);
  });

  for (const status of [422, 429, 503]) {
    test(`${status} with a CommandResult: an answer, not accepted, with the reason`, async (t) => {
      const result = { loop: 'room', accepted: false, reason: 'setpoint 99 is outside the limits 5..30' };
      const server = await fakeApi(t, () => ({ status, body: result }));
      const answer = await api(daemonApi(configWith({ port: server.port }))).set('room', body);
      assert.deepEqual(answer, { kind: 'ok', value: result });
    });
  }

  test('404 {error} for an unknown loop: an error with the reason', async (t) => {
    const server = await fakeApi(t, () => ({ status: 404, body: { error: 'unknown loop "nope"' } }));
    const answer = await api(daemonApi(configWith({ port: server.port }))).set('nope', body);
    assert.deepEqual(answer, {
      kind: 'error',
      status: 404,
      message: 'unknown loop "nope" (POST /api/loops/nope: 404)',
    });
  });
});

describe('nothing answers', () => {
  test('a port nobody listens on: unreachable, connection refused', async () => {
    const port = await freePort();
    const answer = await api(daemonApi(configWith({ port }))).loops();
    assert.deepEqual(answer, {
      kind: 'unreachable',
      url: `http://127.0.0.1:${port}`,
      why: 'connection refused',
      cause: 'refused',
    });
  });

  test('a server that accepts but never answers: unreachable once the timeout passes, a timeout (not refused)', async (t) => {
    const server = await fakeApi(t, () => 'hang');
    const answer = await api(daemonApi(configWith({ port: server.port }), { readTimeoutMs: 200 })).loops();
    assert.deepEqual(answer, {
      kind: 'unreachable',
      url: server.url,
      why: 'no answer within 0.2 s',
      cause: 'timeout',
    });
  });

  test('a write that gets no answer in time: a timeout (it may have been applied)', async (t) => {
    const server = await fakeApi(t, () => 'hang');
    const target = api(daemonApi(configWith({ port: server.port }), { writeTimeoutMs: 200 }));
    const answer = await target.set('room', { setpoint: 21, requestId: 'req-2' });
    assert.deepEqual(answer, {
      kind: 'unreachable',
      url: server.url,
      why: 'no answer within 0.2 s',
      cause: 'timeout',
    });
    assert.equal(server.requests.length, 1, 'the POST arrived');
  });
});
