import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { REDACTED_TOKEN, redactConfigText, redactUrl } from '../src/redact.js';

/** A password inside a URL never leaves the process: logs, stored config, events, output. */

describe('redactUrl', () => {
  const cases: [url: string, expected: string][] = [
    ['mqtt://user:secret@host:1883', 'mqtt://user:***@host:1883'],
    ['mqtts://homeostat:p%40ss%2Fw0rd@broker.lan', 'mqtts://homeostat:***@broker.lan'],
    ['mqtt://:only-password@host', 'mqtt://:***@host'],
    ['mqtt://user:pa:ss@host/', 'mqtt://user:***@host/'],
    ['mqtt://user@host:1883', 'mqtt://user@host:1883'],
    ['mqtt://127.0.0.1:1883', 'mqtt://127.0.0.1:1883'],
    ['ws://host:9001/mqtt', 'ws://host:9001/mqtt'],
    ['not a url', 'not a url'],
  ];
  for (const [url, expected] of cases) {
    test(`${url} → ${expected}`, () => assert.equal(redactUrl(url), expected));
  }
});

describe('redactConfigText', () => {
  test('given a YAML config with a password in mqtt.url (plain, quoted, commented), then only the passwords change', () => {
    const text = [
      'version: 1',
      'mqtt:',
      '  url: mqtt://homeostat:s3cret@broker.lan:1883 # the broker',
      '  # url: "mqtts://old:older-secret@old.lan"',
      "  baseTopic: 'homeostat'",
      'node:',
      '  id: pi',
      '',
    ].join('\n');

    const redacted = redactConfigText(text);

    assert.equal(redacted.includes('s3cret'), false);
    assert.equal(redacted.includes('older-secret'), false);
    assert.equal(
      redacted,
      text.replace('s3cret', '***').replace('older-secret', '***'),
      'everything else is kept byte for byte',
    );
  });

  test('a text without URL passwords is returned unchanged', () => {
    const text =
      'mqtt:\n  url: mqtt://127.0.0.1:1883\n  username: homeostat\n  passwordFile: /etc/homeostat/pw\n';
    assert.equal(redactConfigText(text), text);
  });
});

describe('redactConfigText: the API token', () => {
  const cases = [
    { given: 'a block token', text: 'http:\n  token: abcdefghijklmnopqrstu\n  port: 1\n' },
    {
      given: 'a quoted token in a flow mapping',
      text: 'http: { token: "abc def ghijklmnopqrs", port: 8 }\n',
    },
    { given: 'a single-quoted token with a quote', text: "http: {token: 'a''bcdefghijklmnopq'}\n" },
    { given: 'a token followed by a comment', text: 'http:\n  token: abcdefghijklmnopqrstu # secret\n' },
    { given: 'a quoted key', text: 'http:\n  "token": abcdefghijklmnopqrstu\n  port: 1\n' },
    { given: 'a folded block scalar', text: 'http:\n  token: >-\n    abcdefghijklmnopqrstu\n  port: 1\n' },
    { given: 'a literal block scalar', text: 'http:\n  token: |\n    abcdefghijklmnopqrstu\n' },
    { given: 'a text that is not valid YAML', text: 'http: [broken\n  token: abcdefghijklmnopqrstu\n' },
  ];
  for (const { given, text } of cases) {
    test(`given ${given}, then the value is replaced and the text still parses as a valid token`, () => {
      const redacted = redactConfigText(text);
      assert.ok(!/abc|bcdef/.test(redacted), redacted);
      assert.ok(redacted.includes(`"${REDACTED_TOKEN}"`), redacted);
      assert.ok(REDACTED_TOKEN.length >= 16, 'still a valid token (16 characters or more)');
    });
  }
  for (const { given, text } of cases.slice(0, -1)) {
    test(`given ${given}, then the redacted text parses to the same config with the token replaced`, () => {
      const before = parse(text) as { http: Record<string, unknown> };
      assert.deepEqual(parse(redactConfigText(text)), { http: { ...before.http, token: REDACTED_TOKEN } });
    });
  }

  test('given a comment after the token, then the comment keeps its space (still YAML)', () => {
    assert.equal(
      redactConfigText('http:\n  token: abcdefghijklmnopqrstu # secret\n'),
      `http:\n  token: "${REDACTED_TOKEN}" # secret\n`,
    );
  });

  test('given keys named token whose values are mappings (a loop id), or tokenFile, then nothing changes', () => {
    for (const text of [
      'loops:\n  token:\n    sensor: x\n',
      'sensors: { token: { kind: x } }\n',
      'http:\n  tokenFile: /etc/x\n',
    ]) {
      assert.equal(redactConfigText(text), text);
    }
  });
});
