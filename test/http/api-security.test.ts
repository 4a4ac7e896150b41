/**
 * The API off loopback, on a real node listening on 0.0.0.0 with http.tokenFile: the token for
 * reads (unless publicReads) and writes, the dashboard's session cookie, CSRF and DNS-rebinding
 * refusals, and a token that never reaches the log.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import type { CommandResult } from '../../src/operations/schemas.js';
import { demoConfigText } from '../support/config.js';
import { type RecordingLogger, recordingLogger } from '../support/logger.js';
import { tempDir } from '../support/tmp.js';
import { type ApiTestNode, getJson, postJson, rawRequest, SseReader, startApiNode } from './support.js';

const TOKEN = 'tok-3f9c2a7e5b1d4c8a9e0f6b2d7c4a1e5f';

const READS = [
  '/api/node',
  '/api/health',
  '/api/loops',
  '/api/loops/room',
  '/api/loops/room/history',
  '/api/loops/room/tunings',
  '/api/events',
  '/metrics',
  '/api/stream',
];
/** Open to everyone: the page (it asks for the token), its assets, the API's description. */
const OPEN = ['/', '/assets/app.js', '/api/openapi.json'];

interface SecureNode {
  node: ApiTestNode;
  log: RecordingLogger;
}

/**
 * This machine's first non-loopback IPv4 address: requests sent to it come from it, so the
 * server sees another machine (a loopback peer needs no token). Undefined on a machine with none.
 */
const LAN_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
const NEEDS_LAN = LAN_ADDRESS ? {} : { skip: 'no non-loopback IPv4 address on this machine to connect from' };

/**
 * The demo on 0.0.0.0 (a free port) with the token in a file; `publicReads` as given. Requests
 * go to the machine's LAN address: from the server's side, another machine.
 */
async function secureNode(t: TestContext, publicReads = false): Promise<SecureNode> {
  const tokenFile = path.join(tempDir(t, 'homeostat-token-'), 'api-token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const text = demoConfigText((doc) =>
    doc.set('http', { host: '0.0.0.0', port: 8734, tokenFile, publicReads }),
  );
  const log = recordingLogger();
  const node = await startApiNode(t, { text, logger: log.logger, http: { port: 0 } });
  assert.match(node.node.http?.url ?? '', /^http:\/\/0\.0\.0\.0:\d+$/);
  const port = new URL(node.node.http?.url ?? '').port;
  return { node: Object.assign(node, { base: `http://${LAN_ADDRESS}:${port}` }), log };
}

const bearer = { Authorization: `Bearer ${TOKEN}` };

/** A read's status (a stream is closed as soon as its answer starts). */
async function readStatus(base: string, target: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await fetch(base + target, { headers, signal: abort.signal });
  abort.abort();
  return res.status;
}

/** Every line logged, searched for the token: never there, whatever was sent. */
function assertTokenNotLogged(log: RecordingLogger): void {
  assert.ok(log.records.length > 0, 'something was logged');
  assert.equal(log.text().includes(TOKEN), false, 'the token appears in the log');
  assert.equal(log.text().includes(TOKEN.slice(4, 20)), false, 'part of the token appears in the log');
}

describe(
  'given a node listening on 0.0.0.0 with http.tokenFile, asked from another machine',
  NEEDS_LAN,
  () => {
    test('without the token: every read and write 401 (WWW-Authenticate: Bearer), nothing stored; the page, its assets and the OpenAPI document open', async (t) => {
      const { node, log } = await secureNode(t);
      for (const target of READS) {
        const res = await fetch(node.base + target);
        assert.equal(res.status, 401, target);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer', target);
        assert.match(((await res.json()) as { error: string }).error, /needs the API token/);
      }
      for (const target of OPEN) assert.equal(await readStatus(node.base, target), 200, target);
      const before = node.store.desired.desired('room');
      assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 })).status, 401);
      assert.equal((await postJson(node.base, '/api/loops/room/fault-reset', '')).status, 401);
      assert.equal((await postJson(node.base, '/api/loops/room/autotune', {})).status, 401);
      assert.equal((await postJson(node.base, '/api/loops/room/tuning', { version: 'config' })).status, 401);
      assert.deepEqual(node.store.desired.desired('room'), before);
      assertTokenNotLogged(log);
    });

    test('with Authorization: Bearer <token>: reads and writes allowed (any case of "bearer")', async (t) => {
      const { node, log } = await secureNode(t);
      for (const target of READS) assert.equal(await readStatus(node.base, target, bearer), 200, target);
      const set = await postJson<CommandResult>(node.base, '/api/loops/room', { setpoint: 22 }, bearer);
      assert.deepEqual([set.status, set.body.accepted], [200, true]);
      assert.equal(node.store.desired.desired('room')?.setpoint, 22);
      const lower = { Authorization: `bearer ${TOKEN}` };
      assert.equal(await readStatus(node.base, '/api/loops', lower), 200);
      assertTokenNotLogged(log);
    });

    test('with a wrong token: 401 "wrong API token" for reads, writes and the session login (no cookie)', async (t) => {
      const { node, log } = await secureNode(t);
      const wrong = { Authorization: `Bearer ${TOKEN}x` };
      const read = await getJson<{ error: string }>(node.base, '/api/loops', { headers: wrong });
      assert.deepEqual([read.status, read.body.error], [401, 'wrong API token']);
      assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 }, wrong)).status, 401);
      const login = await postJson(node.base, '/api/session', { token: `${TOKEN}x` });
      assert.equal(login.status, 401);
      assert.equal(login.headers.getSetCookie().length, 0);
      assert.equal((await postJson(node.base, '/api/session', { token: '' })).status, 401);
      assert.equal(node.store.desired.desired('room')?.setpoint, 20);
      assertTokenNotLogged(log);
    });

    test('given publicReads: reads allowed without the token, writes still 401; with it they pass', async (t) => {
      const { node, log } = await secureNode(t, true);
      for (const target of READS) assert.equal(await readStatus(node.base, target), 200, target);
      assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 })).status, 401);
      assert.equal(node.store.desired.desired('room')?.setpoint, 20);
      assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 }, bearer)).status, 200);
      assertTokenNotLogged(log);
    });

    test('POST /api/session with the token: 204 and an HttpOnly SameSite=Strict cookie that authorizes reads, writes and the stream; DELETE ends it', async (t) => {
      const { node, log } = await secureNode(t);
      const login = await postJson(node.base, '/api/session', { token: TOKEN });
      assert.equal(login.status, 204);
      const [setCookie] = login.headers.getSetCookie();
      assert.match(
        setCookie ?? '',
        /^homeostat_session=[\w-]+; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/,
      );
      const cookie = { Cookie: setCookie!.split(';')[0]! };
      for (const target of READS) assert.equal(await readStatus(node.base, target, cookie), 200, target);
      assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 23 }, cookie)).status, 200);
      assert.equal(node.store.desired.desired('room')?.setpoint, 23);
      const stream = await SseReader.open(`${node.base}/api/stream?loop=room`, cookie);
      t.after(() => stream.close());
      assert.equal(stream.response.status, 200);
      assert.equal((await stream.next<{ setpoint: number }>('status')).setpoint, 23);
      stream.close();

      const logout = await getJson(node.base, '/api/session', { method: 'DELETE', headers: cookie });
      assert.equal(logout.status, 204);
      assert.match(logout.headers.getSetCookie()[0] ?? '', /^homeostat_session=; .*Max-Age=0$/);
      assert.equal(await readStatus(node.base, '/api/loops', cookie), 401, 'the old cookie no longer works');
      assertTokenNotLogged(log);
    });

    test('a cross-site write is refused 403 even with the token or the cookie; nothing stored; a same-origin one passes', async (t) => {
      const { node, log } = await secureNode(t);
      const login = await postJson(node.base, '/api/session', { token: TOKEN });
      const cookie = { Cookie: login.headers.getSetCookie()[0]!.split(';')[0]! };
      const crossSite: Array<[string, Record<string, string>]> = [
        ['token, Origin evil', { ...bearer, Origin: 'http://evil.example' }],
        ['cookie, Origin evil', { ...cookie, Origin: 'http://evil.example' }],
        ['token, Sec-Fetch-Site cross-site', { ...bearer, 'Sec-Fetch-Site': 'cross-site' }],
        ['cookie, Sec-Fetch-Site cross-site', { ...cookie, 'Sec-Fetch-Site': 'cross-site' }],
        ['cookie, Sec-Fetch-Site same-site', { ...cookie, 'Sec-Fetch-Site': 'same-site' }],
        ['token, Origin null', { ...bearer, Origin: 'null' }],
        ['token, Origin on another port', { ...bearer, Origin: 'http://127.0.0.1:1' }],
      ];
      for (const [what, headers] of crossSite) {
        const answer = await postJson<{ error: string }>(
          node.base,
          '/api/loops/room',
          { setpoint: 22 },
          headers,
        );
        assert.equal(answer.status, 403, what);
        assert.match(answer.body.error, /^cross-site request refused/, what);
      }
      const evilLogin = await postJson(
        node.base,
        '/api/session',
        { token: TOKEN },
        { Origin: 'http://evil.example' },
      );
      assert.equal(evilLogin.status, 403, 'a login from another site');
      assert.equal(node.store.desired.desired('room')?.setpoint, 20);

      const sameOrigin = { ...cookie, Origin: node.base, 'Sec-Fetch-Site': 'same-origin' };
      assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 }, sameOrigin)).status, 200);
      assertTokenNotLogged(log);
    });

    test('a Host header naming another site (DNS rebinding): 403 for reads and writes, even with the token; localhost and IP literals answered', async (t) => {
      const { node, log } = await secureNode(t);
      const port = new URL(node.base).port;
      for (const host of [`evil.example:${port}`, 'evil.example', `attacker.localhost.evil:${port}`]) {
        const read = await rawRequest(`${node.base}/api/loops`, { headers: { ...bearer, Host: host } });
        assert.equal(read.status, 403, host);
        assert.match(read.text, /does not answer to the name/);
        const write = await rawRequest(`${node.base}/api/loops/room`, {
          method: 'POST',
          headers: { ...bearer, Host: host, 'Content-Type': 'application/json' },
          body: '{"setpoint": 22}',
        });
        assert.equal(write.status, 403, host);
        const page = await rawRequest(`${node.base}/`, { headers: { Host: host } });
        assert.equal(page.status, 403, `the page too, ${host}`);
      }
      assert.equal(node.store.desired.desired('room')?.setpoint, 20);
      for (const host of [
        `localhost:${port}`,
        `127.0.0.1:${port}`,
        `[::1]:${port}`,
        `192.168.1.20:${port}`,
      ]) {
        const read = await rawRequest(`${node.base}/api/loops`, { headers: { ...bearer, Host: host } });
        assert.equal(read.status, 200, host);
      }
      assertTokenNotLogged(log);
    });
  },
);

describe('given a node listening on 0.0.0.0 with http.tokenFile, asked from this machine', () => {
  /** The same node, asked on 127.0.0.1: a loopback peer (the CLI, a browser on the Pi). */
  async function localNode(t: TestContext) {
    const { node, log } = await secureNode(t);
    const port = new URL(node.node.http?.url ?? '').port;
    return { node: Object.assign(node, { base: `http://127.0.0.1:${port}` }), log };
  }

  test('without the token: reads and writes allowed (a local user could read the database anyway)', async (t) => {
    const { node, log } = await localNode(t);
    assert.equal(await readStatus(node.base, '/api/loops'), 200);
    const write = await postJson<CommandResult>(node.base, '/api/loops/room', { setpoint: 22 });
    assert.deepEqual([write.status, write.body.accepted], [200, true]);
    assertTokenNotLogged(log);
  });

  test('through a reverse proxy (Forwarded, X-Forwarded-For or X-Real-IP): the token is required again', async (t) => {
    const { node } = await localNode(t);
    for (const header of ['Forwarded', 'X-Forwarded-For', 'X-Real-IP']) {
      const proxied = { [header]: header === 'Forwarded' ? 'for=192.0.2.60' : '192.0.2.60' };
      assert.equal(await readStatus(node.base, '/api/loops', proxied), 401, header);
      const write = await postJson(node.base, '/api/loops/room', { setpoint: 23 }, proxied);
      assert.equal(write.status, 401, header);
    }
  });
});
