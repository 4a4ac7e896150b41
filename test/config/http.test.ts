import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_HTTP_PORT, isLoopbackHost } from '../../src/config/schema.js';
import { configErrors, minimalSimConfigText, validConfig } from '../support/config.js';

const TOKEN = '0123456789abcdef0123';
/** The minimal simulated config with an `http:` block (YAML flow mapping). */
const withHttp = (block: string) => minimalSimConfigText({ extra: `http: ${block}` });

describe('config http block', () => {
  test('given no http block, then enabled on 127.0.0.1:8734, reads not public, no extra hosts, no token', () => {
    assert.equal(DEFAULT_HTTP_PORT, 8734);
    assert.deepEqual(validConfig(minimalSimConfigText()).http, {
      enabled: true,
      host: '127.0.0.1',
      port: 8734,
      publicReads: false,
      allowedHosts: [],
    });
  });

  const valid: Array<{ given: string; block: string; expect: Record<string, unknown> }> = [
    { given: 'host ::1 without a token', block: '{ host: "::1" }', expect: { host: '::1' } },
    { given: 'host localhost without a token', block: '{ host: localhost }', expect: { host: 'localhost' } },
    {
      given: 'host 0.0.0.0 with a token',
      block: `{ host: 0.0.0.0, token: ${TOKEN} }`,
      expect: { token: TOKEN },
    },
    {
      given: 'host 0.0.0.0 with a tokenFile',
      block: '{ host: 0.0.0.0, tokenFile: /etc/homeostat/token }',
      expect: { tokenFile: '/etc/homeostat/token' },
    },
    {
      given: 'host 0.0.0.0 but disabled',
      block: '{ enabled: false, host: 0.0.0.0 }',
      expect: { enabled: false },
    },
    { given: 'port 0 (pick a free one)', block: '{ port: 0 }', expect: { port: 0 } },
    {
      given: 'publicReads and allowedHosts',
      block: `{ host: 0.0.0.0, token: ${TOKEN}, publicReads: true, allowedHosts: [pi.local] }`,
      expect: { publicReads: true, allowedHosts: ['pi.local'] },
    },
  ];
  for (const { given, block, expect } of valid) {
    test(`given ${given}, then valid with ${JSON.stringify(expect)}`, () => {
      const { http } = validConfig(withHttp(block));
      for (const [key, value] of Object.entries(expect))
        assert.deepEqual(http[key as keyof typeof http], value, key);
    });
  }

  const invalid: Array<{ given: string; block: string; error: string }> = [
    {
      given: 'host 0.0.0.0 without a token',
      block: '{ host: 0.0.0.0 }',
      error:
        'http.host: listening on 0.0.0.0 (reachable from other machines) needs http.tokenFile or http.token: every request that changes something must carry it',
    },
    {
      given: 'a LAN address without a token',
      block: '{ host: 192.168.1.20 }',
      error:
        'http.host: listening on 192.168.1.20 (reachable from other machines) needs http.tokenFile or http.token: every request that changes something must carry it',
    },
    {
      given: 'both token and tokenFile',
      block: `{ host: 0.0.0.0, token: ${TOKEN}, tokenFile: /etc/homeostat/token }`,
      error: 'http.token: give token or tokenFile, not both',
    },
    {
      given: 'a token of 15 characters',
      block: `{ host: 0.0.0.0, token: ${'x'.repeat(15)} }`,
      error: 'http.token: must be at least 16 characters (use tokenFile for a generated one)',
    },
  ];
  for (const { given, block, error } of invalid) {
    test(`given ${given}, then refused: "${error}"`, () => {
      assert.deepEqual(configErrors(withHttp(block)), [error]);
    });
  }

  const refusedShapes: Array<{ given: string; block: string; path: string }> = [
    { given: 'port 65536', block: '{ port: 65536 }', path: 'http.port' },
    { given: 'port -1', block: '{ port: -1 }', path: 'http.port' },
    { given: 'an unknown key', block: '{ hots: 0.0.0.0 }', path: 'http' },
    { given: 'an empty host', block: '{ host: "" }', path: 'http.host' },
    { given: 'an empty allowed host', block: '{ allowedHosts: [""] }', path: 'http.allowedHosts' },
  ];
  for (const { given, block, path } of refusedShapes) {
    test(`given ${given}, then refused at ${path}`, () => {
      const errors = configErrors(withHttp(block));
      assert.ok(
        errors.some((e) => e.startsWith(path)),
        errors.join('\n'),
      );
    });
  }
});

describe('isLoopbackHost', () => {
  const cases: Array<[string, boolean]> = [
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['[::1]', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.20', false],
    ['127.0.0.1.evil.example', false],
    ['localhost.evil.example', false],
  ];
  for (const [host, loopback] of cases) {
    test(`given ${host}, then ${loopback ? 'loopback' : 'reachable from other machines'}`, () => {
      assert.equal(isLoopbackHost(host), loopback);
    });
  }
});
