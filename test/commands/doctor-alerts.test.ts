/**
 * `homeostat doctor`'s alert-channel check: secrets readable, or which file and how to fix it;
 * an email channel's server takes its login (a real SMTP server, test/alerts/support/smtp.ts).
 */
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { checkAlerts } from '../../src/commands/doctor.js';
import { smtpSkip, startSmtpServer } from '../alerts/support/smtp.js';
import { minimalSimConfigText, validConfig } from '../support/config.js';
import { type HasAfter, tempDir } from '../support/tmp.js';

const configWith = (channels: string) =>
  validConfig(minimalSimConfigText({ extra: channels ? `alerts:\n  channels:\n${channels}` : '' }));

test('without alert channels the check is skipped', async () => {
  assert.equal((await checkAlerts(configWith(''))).status, 'skip');
});

test('given readable secrets, ok, naming each channel and the test command', async (t) => {
  const token = path.join(tempDir(t), 'token');
  writeFileSync(token, 'tk_abc\n');
  chmodSync(token, 0o640);
  const result = await checkAlerts(
    configWith(
      `    phone: { type: ntfy, topic: t1, tokenFile: ${token} }\n    hook: { type: webhook, url: "http://127.0.0.1:1/x" }`,
    ),
  );
  assert.equal(result.status, 'ok');
  assert.equal(
    result.detail,
    'phone (ntfy), hook (webhook): secrets readable; homeostat alert test sends a test through each',
  );
});

test('given a missing bot token and an empty key, one line for each and the fix', async (t) => {
  const dir = tempDir(t);
  const empty = path.join(dir, 'key');
  writeFileSync(empty, '');
  const result = await checkAlerts(
    configWith(
      `    tg: { type: telegram, botTokenFile: ${dir}/none, chatId: 1 }\n    hook: { type: webhook, url: "http://127.0.0.1:1/x", secretFile: ${empty} }`,
    ),
  );
  assert.equal(result.status, 'fail');
  const lines = result.detail.split('\n');
  assert.equal(lines.length, 2);
  assert.match(lines[0] ?? '', /^alerts\.channels\.tg\.botTokenFile: cannot read .*none: ENOENT/);
  assert.match(lines[1] ?? '', /^alerts\.channels\.hook\.secretFile: .*key is empty$/);
  assert.match(result.fix ?? '', /readable by the user running homeostat/);
});

describe('an email channel: doctor logs in to the server (sends nothing)', { skip: smtpSkip }, () => {
  const mailChannel = (t: HasAfter, port: number, caPath: string | undefined, password: string) => {
    const file = path.join(tempDir(t), 'smtp.password');
    writeFileSync(file, `${password}\n`);
    return `    mail: { type: email, host: 127.0.0.1, port: ${port}, caFile: ${caPath}, from: cellar@example.org, to: brewer@example.org, username: cellar, passwordFile: ${file} }`;
  };

  test('given the right password, ok, saying the server answers', async (t) => {
    const server = await startSmtpServer(t, { mode: 'starttls', login: 'cellar:s3cret' });
    const result = await checkAlerts(configWith(mailChannel(t, server.port, server.caPath, 's3cret')));
    assert.equal(result.status, 'ok', result.detail);
    assert.match(result.detail, /^mail \(email\): secrets readable, the SMTP server answers;/);
    assert.equal(server.mails.length, 0);
  });

  test('given a wrong password, fail: what the server answered and what to fix', async (t) => {
    const server = await startSmtpServer(t, { mode: 'starttls', login: 'cellar:s3cret' });
    const result = await checkAlerts(configWith(mailChannel(t, server.port, server.caPath, 'wrong')));
    assert.equal(result.status, 'fail');
    assert.match(result.detail, /^alerts\.channels\.mail: email \(127\.0\.0\.1:\d+\) answered 535 /);
    assert.match(result.fix ?? '', /host, port, security, username, passwordFile, caFile/);
    assert.ok(!result.detail.includes('wrong'), 'the password is never shown');
  });
});

test('given a Brewfather stream whose id file is missing, fail naming the loop and the file', async (t) => {
  const dir = tempDir(t);
  const config = validConfig(
    minimalSimConfigText({ loopExtra: `    brewfather: { streamIdFile: ${dir}/brewfather.id }` }),
  );
  const result = await checkAlerts(config);
  assert.equal(result.status, 'fail');
  assert.match(result.detail, /^loops\.room\.brewfather\.streamIdFile: cannot read .*brewfather\.id: ENOENT/);
  writeFileSync(path.join(dir, 'brewfather.id'), 'Ab12Cd34\n');
  const fixed = await checkAlerts(config);
  assert.equal(fixed.status, 'ok');
  assert.match(fixed.detail, /^brewfather\/room: secrets readable;/);
});
