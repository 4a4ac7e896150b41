import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { httpSchema } from '../../src/config/schema/http.js';
import { HttpSettingsError, httpSettings } from '../../src/http/settings.js';
import { tempDir } from '../support/tmp.js';

const TOKEN = '0123456789abcdef0123456789abcdef';

/** An http block as the config loader outputs it (defaults filled in). */
const block = (input: Record<string, unknown> = {}) => httpSchema.parse(input);

/** The HttpSettingsError `fn` throws. */
function settingsError(fn: () => unknown): HttpSettingsError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof HttpSettingsError, `expected an HttpSettingsError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected an HttpSettingsError');
}

describe('httpSettings', () => {
  test('given the defaults, then 127.0.0.1:8734 on loopback, no token, reads not public, no extra hosts', () => {
    assert.deepEqual(httpSettings(block()), {
      host: '127.0.0.1',
      port: 8734,
      token: undefined,
      loopbackOnly: true,
      publicReads: false,
      allowedHosts: [],
    });
  });

  const hosts: Array<[string, boolean]> = [
    ['127.0.0.1', true],
    ['127.0.1.1', true],
    ['::1', true],
    ['[::1]', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.20', false],
    ['pi.local', false],
  ];
  for (const [host, loopbackOnly] of hosts) {
    test(`given host ${host}, then loopbackOnly is ${loopbackOnly}`, () => {
      assert.equal(httpSettings(block({ host, token: TOKEN })).loopbackOnly, loopbackOnly);
    });
  }

  test('given an override (run --http-port, tests), then its host and port win and loopbackOnly follows the host', () => {
    const settings = httpSettings(block({ token: TOKEN }), { host: '0.0.0.0', port: 0 });
    assert.equal(settings.host, '0.0.0.0');
    assert.equal(settings.port, 0);
    assert.equal(settings.loopbackOnly, false);
  });

  test('given publicReads and allowedHosts, then they are passed on', () => {
    const settings = httpSettings(
      block({ host: '0.0.0.0', token: TOKEN, publicReads: true, allowedHosts: ['pi.lan'] }),
    );
    assert.equal(settings.publicReads, true);
    assert.deepEqual(settings.allowedHosts, ['pi.lan']);
  });

  test('given an inline token, then it is the token', () => {
    assert.equal(httpSettings(block({ host: '0.0.0.0', token: TOKEN })).token, TOKEN);
  });

  test('given a tokenFile with surrounding whitespace and a newline, then the token is its trimmed text', (t) => {
    const file = join(tempDir(t), 'token');
    writeFileSync(file, `  ${TOKEN}\n\n`);
    assert.equal(httpSettings(block({ host: '0.0.0.0', tokenFile: file })).token, TOKEN);
  });

  test('given a tokenFile that does not exist, then HttpSettingsError naming the file, the code and that the API stays off', (t) => {
    const file = join(tempDir(t), 'missing');
    const error = settingsError(() => httpSettings(block({ host: '0.0.0.0', tokenFile: file })));
    assert.equal(error.message, `cannot read http.tokenFile ${file} (ENOENT): the API stays off`);
  });

  test('given a tokenFile that is a directory, then HttpSettingsError with EISDIR', (t) => {
    const dir = tempDir(t);
    const error = settingsError(() => httpSettings(block({ host: '0.0.0.0', tokenFile: dir })));
    assert.match(error.message, /\(EISDIR\)/);
  });

  const short: Array<{ given: string; text: string; says: string }> = [
    { given: 'an empty tokenFile', text: '', says: 'holds nothing' },
    { given: 'a tokenFile of blanks', text: ' \n\t\n', says: 'holds nothing' },
    {
      given: 'a tokenFile of 15 characters',
      text: `${'x'.repeat(15)}\n`,
      says: 'holds fewer than 16 characters',
    },
  ];
  for (const { given, text, says } of short) {
    test(`given ${given}, then HttpSettingsError: "${says}" and how to make a token`, (t) => {
      const file = join(tempDir(t), 'token');
      writeFileSync(file, text);
      const error = settingsError(() => httpSettings(block({ host: '0.0.0.0', tokenFile: file })));
      assert.ok(error.message.startsWith(`http.tokenFile ${file} ${says}`), error.message);
      assert.ok(error.message.includes(`openssl rand -hex 24 > ${file}`), error.message);
      assert.ok(error.message.endsWith('the API stays off'), error.message);
    });
  }

  test('given a tokenFile of exactly 16 characters, then it is the token', (t) => {
    const file = join(tempDir(t), 'token');
    writeFileSync(file, 'x'.repeat(16));
    assert.equal(httpSettings(block({ host: '0.0.0.0', tokenFile: file })).token, 'x'.repeat(16));
  });
});
