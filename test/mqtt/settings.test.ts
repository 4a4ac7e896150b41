import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { MAX_SECRET_FILE_BYTES, mqttSettings } from '../../src/mqtt/setup.js';
import { demoConfigWithMqtt } from '../support/config.js';
import { tempDir } from '../support/tmp.js';

/**
 * The files the broker settings read (password, TLS) are read with a size cap, and only when
 * they are regular files: `/dev/zero` or a FIFO as the password file must fail at once with
 * a message naming the file, never fill the memory nor block the start.
 */

const dir = tempDir({ after }, 'homeostat-settings-');

describe('mqttSettings: the password file', () => {
  test('given a small regular file, its trimmed content is the password', () => {
    const path = join(dir, 'pw-ok');
    writeFileSync(path, 's3cret\n');
    const settings = mqttSettings(demoConfigWithMqtt({ username: 'h', passwordFile: path }), undefined, {});
    assert.equal(settings?.password, 's3cret');
  });

  test(`given a regular file larger than ${MAX_SECRET_FILE_BYTES} bytes, it is refused with the size and the path`, () => {
    const path = join(dir, 'pw-big');
    writeFileSync(path, 'x'.repeat(8 * 1024));
    assert.throws(
      () => mqttSettings(demoConfigWithMqtt({ passwordFile: path }), undefined, {}),
      (error: Error) =>
        error.message.includes(path) &&
        /8192 bytes/.test(error.message) &&
        /at most 4096/.test(error.message),
    );
  });

  test('given /dev/zero, it is refused at once as not a regular file (it used to grow to 14 GB)', () => {
    assert.throws(
      () => mqttSettings(demoConfigWithMqtt({ passwordFile: '/dev/zero' }), undefined, {}),
      /\/dev\/zero.*not a regular file/,
    );
  });

  test('given a FIFO nobody writes to, it is refused at once instead of blocking the start', () => {
    const path = join(dir, 'pw-fifo');
    execFileSync('mkfifo', [path]);
    assert.throws(
      () => mqttSettings(demoConfigWithMqtt({ passwordFile: path }), undefined, {}),
      /pw-fifo.*not a regular file/,
    );
  });

  test('given a directory, it is refused with the path', () => {
    assert.throws(
      () => mqttSettings(demoConfigWithMqtt({ passwordFile: dir }), undefined, {}),
      /not a regular file/,
    );
  });

  test('given a missing file, the message names it', () => {
    const path = join(dir, 'missing');
    assert.throws(
      () => mqttSettings(demoConfigWithMqtt({ passwordFile: path }), undefined, {}),
      /cannot read the password file .*missing/,
    );
  });

  test('without a password file, HOMEOSTAT_MQTT_PASSWORD is the password', () => {
    const settings = mqttSettings(demoConfigWithMqtt({}), undefined, { HOMEOSTAT_MQTT_PASSWORD: 'from-env' });
    assert.equal(settings?.password, 'from-env');
  });
});

describe('mqttSettings: TLS files', () => {
  test('given /dev/zero as the CA file, it is refused as not a regular file', () => {
    assert.throws(
      () => mqttSettings(demoConfigWithMqtt({ tls: { caFile: '/dev/zero' } }), undefined, {}),
      /CA file \/dev\/zero.*not a regular file/,
    );
  });
});
