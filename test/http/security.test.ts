import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';
import {
  authorize,
  checkAccess,
  checkHost,
  checkWrite,
  fromThisMachine,
  SESSION_COOKIE,
  Sessions,
  tokenMatches,
} from '../../src/http/security.js';
import type { HttpSettings } from '../../src/http/settings.js';

const TOKEN = 'a-long-random-token-0123456789';
const DAY_MS = 24 * 3_600_000;

function settings(overrides: Partial<HttpSettings> = {}): HttpSettings {
  return {
    host: '0.0.0.0',
    port: 8734,
    token: TOKEN,
    loopbackOnly: false,
    publicReads: false,
    allowedHosts: [],
    ...overrides,
  };
}

describe('checkHost: the Host header must name this server (DNS rebinding)', () => {
  const machine = hostname().toLowerCase();
  const cases: Array<{
    given: string;
    host: string | undefined;
    opts?: Partial<HttpSettings>;
    status?: number;
  }> = [
    { given: 'an IPv4 literal with a port', host: '192.168.1.20:8734' },
    { given: 'the IPv4 loopback', host: '127.0.0.1:8734' },
    { given: 'a bracketed IPv6 literal', host: '[::1]:8734' },
    { given: 'a bracketed IPv6 LAN literal', host: '[fe80::1]' },
    { given: 'localhost', host: 'localhost:8734' },
    { given: 'LOCALHOST in capitals', host: 'LOCALHOST' },
    { given: 'the machine name', host: `${machine}:8734` },
    { given: 'the machine name .local (mDNS)', host: `${machine}.local` },
    { given: 'the listen address as a name', host: 'pi.lan:8734', opts: { host: 'pi.lan' } },
    {
      given: 'a name in allowedHosts (any case)',
      host: 'Proxy.Example.org',
      opts: { allowedHosts: ['proxy.example.ORG'] },
    },
    { given: 'a rebinding name', host: 'evil.example:8734', status: 403 },
    { given: 'a name that only starts like localhost', host: 'localhost.evil.example', status: 403 },
    { given: 'no Host header', host: undefined, status: 400 },
    { given: 'an empty Host header', host: '', status: 400 },
  ];
  for (const { given, host, opts, status } of cases) {
    test(`given ${given} (${JSON.stringify(host)}), then ${status ? `refused ${status}` : 'answered'}`, () => {
      const verdict = checkHost(host, settings(opts));
      if (status === undefined) assert.deepEqual(verdict, { ok: true });
      else assert.equal(!verdict.ok && verdict.status, status);
    });
  }

  test('given a rebinding name, then the error names it and says how to allow it', () => {
    const verdict = checkHost('evil.example:80', settings());
    assert.ok(!verdict.ok);
    assert.match(verdict.error, /"evil\.example"/);
    assert.match(verdict.error, /http\.allowedHosts/);
  });
});

describe('checkWrite: writes are JSON from this server or from no page (CSRF)', () => {
  const JSON_TYPE = { 'content-type': 'application/json', host: 'pi.local:8734' };
  const cases: Array<{ given: string; headers: IncomingHttpHeaders; status?: number }> = [
    { given: 'curl (no Origin, no Sec-Fetch-Site)', headers: JSON_TYPE },
    { given: 'Sec-Fetch-Site same-origin', headers: { ...JSON_TYPE, 'sec-fetch-site': 'same-origin' } },
    { given: 'Sec-Fetch-Site none (typed by the user)', headers: { ...JSON_TYPE, 'sec-fetch-site': 'none' } },
    {
      given: 'Sec-Fetch-Site cross-site',
      headers: { ...JSON_TYPE, 'sec-fetch-site': 'cross-site' },
      status: 403,
    },
    {
      given: 'Sec-Fetch-Site same-site',
      headers: { ...JSON_TYPE, 'sec-fetch-site': 'same-site' },
      status: 403,
    },
    { given: 'an Origin matching Host', headers: { ...JSON_TYPE, origin: 'http://pi.local:8734' } },
    {
      given: 'an Origin matching Host in another case',
      headers: { ...JSON_TYPE, origin: 'http://PI.local:8734' },
    },
    {
      given: 'an Origin of another site',
      headers: { ...JSON_TYPE, origin: 'https://evil.example' },
      status: 403,
    },
    {
      given: 'an Origin on another port',
      headers: { ...JSON_TYPE, origin: 'http://pi.local:9000' },
      status: 403,
    },
    { given: 'Origin null (sandboxed page, file:)', headers: { ...JSON_TYPE, origin: 'null' }, status: 403 },
    { given: 'an Origin that is not a URL', headers: { ...JSON_TYPE, origin: 'garbage' }, status: 403 },
    { given: 'JSON with a charset', headers: { 'content-type': 'application/json; charset=utf-8' } },
    { given: 'JSON in capitals', headers: { 'content-type': 'Application/JSON' } },
    { given: 'no Content-Type', headers: {}, status: 415 },
    {
      given: 'text/plain (a form without preflight)',
      headers: { 'content-type': 'text/plain' },
      status: 415,
    },
    { given: 'a form post', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415 },
    {
      given: 'a cross-site text/plain post',
      headers: { 'content-type': 'text/plain', 'sec-fetch-site': 'cross-site' },
      status: 403,
    },
  ];
  for (const { given, headers, status } of cases) {
    test(`given ${given}, then ${status ? `refused ${status}` : 'allowed'}`, () => {
      const verdict = checkWrite(headers);
      if (status === undefined) assert.deepEqual(verdict, { ok: true });
      else assert.equal(!verdict.ok && verdict.status, status);
    });
  }
});

const withSession = () => {
  let nowMs = 1_000_000;
  const sessions = new Sessions(() => nowMs);
  const { id } = sessions.open();
  return {
    sessions,
    cookie: `theme=dark; ${SESSION_COOKIE}=${id}`,
    advance: (ms: number) => (nowMs += ms),
  };
};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('authorize: who may read and write', () => {
  const cases: Array<{
    given: string;
    opts?: Partial<HttpSettings>;
    headers?: IncomingHttpHeaders;
    access: 'read' | 'write';
    status?: number;
  }> = [
    { given: 'loopback, a read without token', opts: { loopbackOnly: true }, access: 'read' },
    { given: 'loopback, a write without token', opts: { loopbackOnly: true }, access: 'write' },
    { given: 'off loopback, a read without token', access: 'read', status: 401 },
    {
      given: 'off loopback with publicReads, a read without token',
      opts: { publicReads: true },
      access: 'read',
    },
    {
      given: 'off loopback with publicReads, a write without token',
      opts: { publicReads: true },
      access: 'write',
      status: 401,
    },
    { given: 'off loopback, a write with the right token', headers: bearer(TOKEN), access: 'write' },
    { given: 'off loopback, a read with the right token', headers: bearer(TOKEN), access: 'read' },
    {
      given: 'off loopback, a write with a wrong token',
      headers: bearer('x'.repeat(30)),
      access: 'write',
      status: 401,
    },
    {
      given: 'off loopback, the token without "Bearer "',
      headers: { authorization: TOKEN },
      access: 'write',
      status: 401,
    },
    {
      given: 'off loopback, the right token after "bearer" in lower case (schemes are case-insensitive)',
      headers: { authorization: `bearer ${TOKEN}` },
      access: 'write',
    },
    {
      given: 'off loopback, Basic auth',
      headers: { authorization: `Basic ${TOKEN}` },
      access: 'write',
      status: 401,
    },
    {
      given: 'off loopback, an unknown session cookie',
      headers: { cookie: `${SESSION_COOKIE}=nope` },
      access: 'write',
      status: 401,
    },
    {
      given: 'no token configured off loopback, a read',
      opts: { token: undefined },
      access: 'read',
      status: 401,
    },
    {
      given: 'no token configured off loopback, a write with some token',
      opts: { token: undefined },
      headers: bearer(TOKEN),
      access: 'write',
      status: 401,
    },
  ];
  for (const { given, opts, headers, access, status } of cases) {
    test(`given ${given}, then ${status ? `refused ${status}` : 'allowed'}`, () => {
      const verdict = authorize(headers ?? {}, settings(opts), new Sessions(), access);
      if (status === undefined) assert.deepEqual(verdict, { ok: true });
      else assert.equal(!verdict.ok && verdict.status, status);
    });
  }

  test('given no Authorization header, then the error says the token is needed; given a wrong one, "wrong API token"', () => {
    const missing = authorize({}, settings(), new Sessions(), 'write');
    const wrong = authorize(bearer('y'.repeat(30)), settings(), new Sessions(), 'write');
    assert.ok(!missing.ok && !wrong.ok);
    assert.match(missing.error, /Authorization: Bearer/);
    assert.equal(wrong.error, 'wrong API token');
  });

  test('given no token configured off loopback, then the error says so', () => {
    const verdict = authorize(bearer(TOKEN), settings({ token: undefined }), new Sessions(), 'write');
    assert.ok(!verdict.ok);
    assert.match(verdict.error, /no API token is configured/);
  });

  test('given a valid session cookie among others, when writing off loopback, then allowed', () => {
    const { sessions, cookie } = withSession();
    assert.deepEqual(authorize({ cookie }, settings(), sessions, 'write'), { ok: true });
  });

  test('given a session cookie 30 days old less 1 ms, then allowed; 1 ms past 30 days, then refused 401', () => {
    const { sessions, cookie, advance } = withSession();
    advance(30 * DAY_MS - 1);
    assert.deepEqual(authorize({ cookie }, settings(), sessions, 'write'), { ok: true });
    advance(2);
    const verdict = authorize({ cookie }, settings(), sessions, 'write');
    assert.equal(!verdict.ok && verdict.status, 401);
  });
});

describe('tokenMatches', () => {
  const cases: Array<[string, string, boolean]> = [
    [TOKEN, TOKEN, true],
    [`${TOKEN}x`, TOKEN, false],
    [TOKEN.slice(0, -1), TOKEN, false],
    ['', TOKEN, false],
    [TOKEN.toUpperCase(), TOKEN, false],
  ];
  for (const [sent, token, expected] of cases) {
    test(`given sent ${JSON.stringify(sent)}, then ${expected ? 'matches' : 'does not match'}`, () => {
      assert.equal(tokenMatches(sent, token), expected);
    });
  }
});

describe('Sessions', () => {
  test('when opened, then the cookie is HttpOnly, SameSite=Strict, Path=/, 30 days, with a fresh random id', () => {
    const sessions = new Sessions(() => 0);
    const first = sessions.open();
    const second = sessions.open();
    assert.notEqual(first.id, second.id);
    assert.match(first.id, /^[\w-]{32}$/);
    assert.equal(
      first.cookie,
      `${SESSION_COOKIE}=${first.id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${30 * 24 * 3600}`,
    );
    assert.equal(sessions.valid(`${SESSION_COOKIE}=${first.id}`), true);
  });

  test('when closed, then the session is no longer valid and the cookie is cleared (Max-Age=0)', () => {
    const sessions = new Sessions(() => 0);
    const { id } = sessions.open();
    const cleared = sessions.close(`${SESSION_COOKIE}=${id}`);
    assert.equal(cleared, `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`);
    assert.equal(sessions.valid(`${SESSION_COOKIE}=${id}`), false);
  });

  test('given no cookie, an empty value or another cookie only, then not valid', () => {
    const sessions = new Sessions(() => 0);
    sessions.open();
    assert.equal(sessions.valid(undefined), false);
    assert.equal(sessions.valid(`${SESSION_COOKIE}=`), false);
    assert.equal(sessions.valid('other=1'), false);
  });

  test('given 64 sessions, when a 65th opens, then the oldest is dropped and the others stay valid', () => {
    const sessions = new Sessions(() => 0);
    const ids = Array.from({ length: 65 }, () => sessions.open().id);
    const valid = ids.map((id) => sessions.valid(`${SESSION_COOKIE}=${id}`));
    assert.equal(valid[0], false);
    assert.deepEqual(valid.slice(1), new Array(64).fill(true));
  });
});

describe('fromThisMachine: a loopback peer whose request no proxy forwarded', () => {
  const cases: Array<{
    given: string;
    address: string | undefined;
    headers?: Record<string, string>;
    local: boolean;
  }> = [
    { given: 'IPv4 loopback', address: '127.0.0.1', local: true },
    { given: 'another 127/8 address', address: '127.0.0.2', local: true },
    { given: 'IPv6 loopback', address: '::1', local: true },
    { given: 'IPv4-mapped loopback (a dual-stack listener)', address: '::ffff:127.0.0.1', local: true },
    { given: 'a LAN address', address: '192.168.1.20', local: false },
    { given: 'an IPv4-mapped LAN address', address: '::ffff:192.168.1.20', local: false },
    { given: 'no address (a closed socket)', address: undefined, local: false },
    {
      given: 'loopback with X-Forwarded-For (a proxy)',
      address: '127.0.0.1',
      headers: { 'x-forwarded-for': '192.0.2.1' },
      local: false,
    },
    {
      given: 'loopback with Forwarded (a proxy)',
      address: '127.0.0.1',
      headers: { forwarded: 'for=192.0.2.1' },
      local: false,
    },
    {
      given: 'loopback with X-Real-IP (a proxy)',
      address: '::1',
      headers: { 'x-real-ip': '192.0.2.1' },
      local: false,
    },
  ];
  for (const { given, address, headers, local } of cases) {
    test(`given ${given}, then ${local ? 'this machine' : 'not this machine'}`, () => {
      assert.equal(fromThisMachine(address, headers ?? {}), local);
    });
  }

  test('given off loopback without a token, when the peer is this machine, then reads and writes are allowed', () => {
    assert.deepEqual(authorize({}, settings(), new Sessions(), 'write', true), { ok: true });
    assert.equal(authorize({}, settings(), new Sessions(), 'write', false).ok, false);
  });
});

describe('checkAccess: who proved who it is, wrong tokens, and an address locked out', () => {
  const cases: Array<{
    given: string;
    headers?: IncomingHttpHeaders;
    opts?: Partial<HttpSettings>;
    access?: 'read' | 'write';
    local?: boolean;
    lockedForMs?: number;
    expect: Record<string, unknown>;
  }> = [
    { given: 'the right token', headers: bearer(TOKEN), expect: { ok: true, trusted: true } },
    {
      given: 'a wrong token: a guess',
      headers: bearer('y'.repeat(30)),
      expect: { ok: false, status: 401, wrongToken: true },
    },
    { given: 'no token: no guess', expect: { ok: false, status: 401, wrongToken: false } },
    {
      given: 'the right token from an address locked out: not even compared',
      headers: bearer(TOKEN),
      lockedForMs: 1_500,
      expect: { ok: false, status: 429, retryAfterS: 2 },
    },
    {
      given: 'this machine while "locked out": it needs no token, never throttled',
      local: true,
      lockedForMs: 60_000,
      expect: { ok: true, trusted: true },
    },
    {
      given: 'a loopback-only server while "locked out"',
      opts: { loopbackOnly: true },
      lockedForMs: 60_000,
      expect: { ok: true, trusted: true },
    },
    {
      given: 'a public read without a token: allowed, not trusted (the public stream pool)',
      opts: { publicReads: true },
      access: 'read',
      expect: { ok: true, trusted: false, wrongToken: false },
    },
    {
      given: 'a public read with the token: trusted',
      opts: { publicReads: true },
      access: 'read',
      headers: bearer(TOKEN),
      expect: { ok: true, trusted: true, wrongToken: false },
    },
    {
      given: 'a public read with a wrong token: allowed, and still counted as a guess',
      opts: { publicReads: true },
      access: 'read',
      headers: bearer('y'.repeat(30)),
      expect: { ok: true, trusted: false, wrongToken: true },
    },
    {
      given: 'a public read with the token from an address locked out: allowed, not trusted, not compared',
      opts: { publicReads: true },
      access: 'read',
      headers: bearer(TOKEN),
      lockedForMs: 5_000,
      expect: { ok: true, trusted: false, wrongToken: false },
    },
  ];
  for (const c of cases) {
    test(`given ${c.given}`, () => {
      const verdict = checkAccess(
        c.headers ?? {},
        settings(c.opts),
        new Sessions(),
        c.access ?? 'write',
        c.local ?? false,
        c.lockedForMs ?? 0,
      );
      const seen = Object.fromEntries(
        Object.keys(c.expect).map((key) => [key, (verdict as Record<string, unknown>)[key]]),
      );
      assert.deepEqual(seen, c.expect);
    });
  }

  test('given a valid session from an address locked out, then allowed (a session id cannot be guessed)', () => {
    const { sessions, cookie } = withSession();
    assert.deepEqual(checkAccess({ cookie }, settings(), sessions, 'write', false, 60_000), {
      ok: true,
      trusted: true,
    });
  });
});
