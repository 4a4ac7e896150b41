import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redactConfigText, redactUrl } from '../src/redact.js';

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
