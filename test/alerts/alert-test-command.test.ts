/**
 * `homeostat alert test [CHANNEL]` against a running node (HTTP API on a free port): a test alert
 * through each channel at once, not through the outbox, and what each answered; exit 0 only when
 * every channel took it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { alertTestResponse } from '../../src/operations/alert-schemas.js';
import { parseStrictly, postJson, serving } from '../http/support.js';
import { runCliHere } from '../support/cli.js';
import { minimalSimConfigText } from '../support/config.js';
import { startTestNode } from '../support/node.js';
import { type HasAfter, tempDir } from '../support/tmp.js';
import { type FakeService, startFakeService } from './fake-services.js';

function alertsConfig(hook: FakeService, ntfy: FakeService, port = 0): string {
  return minimalSimConfigText({
    extra: `
http: { port: ${port} }
alerts:
  channels:
    phone: { type: ntfy, server: "${ntfy.url}", topic: shed-x7 }
    hook: { type: webhook, url: "${hook.url}/alerts" }
`,
  });
}

async function setUp(t: HasAfter) {
  const hook = await startFakeService('');
  const ntfy = await startFakeService();
  t.after(async () => {
    await Promise.all([hook.close(), ntfy.close()]);
  });
  const dir = tempDir(t);
  const node = await startTestNode(alertsConfig(hook, ntfy), path.join(dir, 'h.db'), { http: { port: 0 } });
  t.after(() => node.stop());
  const port = Number(new URL(await serving(node.node)).port);
  const configPath = path.join(dir, 'config.yaml');
  writeFileSync(configPath, alertsConfig(hook, ntfy, port));
  return { hook, ntfy, node, configPath, port };
}

test('given a node whose ntfy server refuses, when alert test runs, then each channel says what it answered; exit 1', {
  timeout: 30_000,
}, async (t) => {
  const { hook, ntfy, node, configPath } = await setUp(t);
  ntfy.script.push({ status: 401, body: '{"code":40101,"http":401,"error":"unauthorized"}' });
  const result = await runCliHere(['alert', 'test', '--config', configPath]);
  assert.equal(result.code, 1, result.stderr);
  const lines = result.stdout.trimEnd().split('\n').sort();
  assert.equal(lines.length, 2, result.stdout);
  assert.match(lines[0] ?? '', /^hook \(webhook\): delivered in \d+ ms$/);
  assert.match(
    lines[1] ?? '',
    /^phone \(ntfy\): failed after \d+ ms: ntfy \(127\.0\.0\.1:\d+\) answered HTTP 401: .*unauthorized/,
  );
  const sent = JSON.parse(hook.requests[0]?.body ?? '{}');
  assert.equal(sent.phase, 'test');
  assert.equal(sent.title, 'pi: test alert');
  assert.equal(JSON.parse(ntfy.requests[0]?.body ?? '{}').topic, 'shed-x7');
  assert.deepEqual(node.node.alerts.outbox.backlog(), {}, 'a test never enters the outbox');
});

test('POST /api/alerts/test answers each result in the documented shape, strictly', {
  timeout: 30_000,
}, async (t) => {
  const { port } = await setUp(t);
  const answer = await postJson(`http://127.0.0.1:${port}`, '/api/alerts/test', { channel: 'hook' });
  assert.equal(answer.status, 200);
  parseStrictly(alertTestResponse, answer.body, 'POST /api/alerts/test');
  const bad = await postJson(`http://127.0.0.1:${port}`, '/api/alerts/test', { channel: 7 });
  assert.equal(bad.status, 400);
});

test('alert test CHANNEL sends through that one only; an unknown channel or action is refused', {
  timeout: 30_000,
}, async (t) => {
  const { hook, ntfy, configPath } = await setUp(t);
  const one = await runCliHere(['alert', 'test', 'hook', '--config', configPath]);
  assert.equal(one.code, 0, one.stderr);
  assert.match(one.stdout, /^hook \(webhook\): delivered in \d+ ms\n$/);
  assert.equal(hook.requests.length, 1);
  assert.equal(ntfy.requests.length, 0);

  const unknown = await runCliHere(['alert', 'test', 'pager', '--config', configPath]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stdout, /no alert channel "pager" \(channels: phone, hook\)/);
  const wrong = await runCliHere(['alert', 'send', '--config', configPath]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /homeostat alert: say test, and a channel or none \(got "send"\)/);
});
