/**
 * The wrong-token throttle on a real node listening on 0.0.0.0 with a token, asked from this
 * machine's LAN address (another machine, as the server sees it): locked out after five wrong
 * tokens, on real time whatever the daemon's clock does, logged once, in /metrics; this machine
 * never locked out; a client behind a proxy on this machine counted as itself.
 */
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { describe, type TestContext, test } from 'node:test';
import { demoConfigText } from '../support/config.js';
import { LogLevel, recordingLogger } from '../support/logger.js';
import { getJson, startApiNode } from './support.js';

const TOKEN = 'tok-throttle-5b1d4c8a9e0f6b2d7c4a1e5f';
const LAN_ADDRESS = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
const NEEDS_LAN = LAN_ADDRESS ? {} : { skip: 'no non-loopback IPv4 address on this machine to connect from' };

async function lanNode(t: TestContext) {
  const text = demoConfigText((doc) => doc.set('http', { host: '0.0.0.0', port: 8734, token: TOKEN }));
  const log = recordingLogger();
  const node = await startApiNode(t, { text, logger: log.logger, http: { port: 0 } });
  const port = new URL(node.node.http?.url ?? '').port;
  return { node, log, lan: `http://${LAN_ADDRESS}:${port}`, local: `http://127.0.0.1:${port}` };
}

const bearer = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });
const wrong = bearer('w'.repeat(32));

describe('given a node on 0.0.0.0 with a token, asked from its LAN address', NEEDS_LAN, () => {
  test('when six wrong tokens come, then the sixth locks the address out: even the right token gets 429 with Retry-After, logged once, in /metrics; an hour of the daemon’s clock does not lift it', async (t) => {
    const { node, log, lan, local } = await lanNode(t);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await getJson(lan, '/api/loops', wrong)).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401]);
    // The daemon's clock races ahead (as at --speed 60): the lockout is on real time.
    node.clock.advance(3_600_000);
    const right = await getJson(lan, '/api/loops', bearer(TOKEN));
    assert.equal(right.status, 429);
    assert.equal(right.headers.get('retry-after'), '1');
    const more = await getJson(lan, '/api/loops', wrong);
    assert.equal(more.status, 429, 'a guess while locked out is not even compared');
    const warnings = log.atLevel(LogLevel.warn).filter((r) => /wrong API tokens from/.test(String(r.msg)));
    assert.equal(warnings.length, 1);
    assert.equal(log.text().includes(TOKEN), false, 'the token is never logged');
    // This machine needs no token: never locked out, and it sees the figures.
    const metrics = await fetch(`${local}/metrics`);
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    assert.match(text, /^homeostat_http_auth_failures_total 6$/m);
    assert.match(text, /^homeostat_http_auth_throttled_total 2$/m);
    assert.match(text, /^homeostat_http_locked_out_addresses 1$/m);
  });

  test('when a reverse proxy on this machine forwards a client that sends wrong tokens, then that client is locked out, not the proxy’s other clients', async (t) => {
    const { local } = await lanNode(t);
    const via = (client: string, token: string) => ({
      headers: { Authorization: `Bearer ${token}`, 'X-Forwarded-For': client },
    });
    for (let i = 0; i < 6; i++) await getJson(local, '/api/loops', via('192.0.2.66', 'w'.repeat(32)));
    assert.equal((await getJson(local, '/api/loops', via('192.0.2.66', TOKEN))).status, 429);
    assert.equal((await getJson(local, '/api/loops', via('192.0.2.7', TOKEN))).status, 200);
    assert.equal((await getJson(local, '/api/loops')).status, 200, 'this machine itself, no proxy header');
  });

  test('when a dashboard login sends wrong tokens, then they count too: the sixth locks the login out (429)', async (t) => {
    const { lan } = await lanNode(t);
    const login = (token: string) =>
      fetch(`${lan}/api/session`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token }),
      }).then((r) => r.status);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push(await login('w'.repeat(32)));
    statuses.push(await login(TOKEN));
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401, 429]);
  });
});
