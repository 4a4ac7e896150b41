/** `homeostat doctor`'s alert-channel check: secrets readable, or which file and how to fix it. */
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { checkAlerts } from '../../src/commands/doctor.js';
import { minimalSimConfigText, validConfig } from '../support/config.js';
import { tempDir } from '../support/tmp.js';

const configWith = (channels: string) =>
  validConfig(minimalSimConfigText({ extra: channels ? `alerts:\n  channels:\n${channels}` : '' }));

test('without alert channels the check is skipped', () => {
  assert.equal(checkAlerts(configWith('')).status, 'skip');
});

test('given readable secrets, ok, naming each channel and the test command', (t) => {
  const token = path.join(tempDir(t), 'token');
  writeFileSync(token, 'tk_abc\n');
  chmodSync(token, 0o640);
  const result = checkAlerts(
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

test('given a missing bot token and an empty key, one line for each and the fix', (t) => {
  const dir = tempDir(t);
  const empty = path.join(dir, 'key');
  writeFileSync(empty, '');
  const result = checkAlerts(
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
