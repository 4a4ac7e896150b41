/**
 * Each channel's request as the service documents it, and how its answers are read, against a
 * loopback server that answers as the service would:
 * - ntfy, JSON publishing: POST to the server's root with topic, title, message, priority 1–5
 *   and tags; a token as `Authorization: Bearer` (https://docs.ntfy.sh/publish/#publish-as-json,
 *   #access-tokens);
 * - Telegram's Bot API: POST /bot<token>/sendMessage with chat_id and text; a 429's wait in
 *   parameters.retry_after (https://core.telegram.org/bots/api#sendmessage, #responseparameters);
 * - a webhook: the alert as JSON, its id in X-Homeostat-Alert-Id, an HMAC-SHA256 of the body in
 *   X-Homeostat-Signature.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { buildChannel } from '../../src/alerts/channels/index.js';
import { freePort } from '../support/net.js';
import { tempDir } from '../support/tmp.js';
import { startFakeService } from './fake-services.js';
import { RAISED, RESOLVED, thrown } from './notices.js';

const signal = () => AbortSignal.timeout(5_000);

function secretFile(t: Parameters<typeof tempDir>[0], content: string): string {
  const file = path.join(tempDir(t), 'secret');
  writeFileSync(file, content);
  return file;
}

describe('ntfy', () => {
  test('a raised alert: JSON to the root with the topic, priority and tags; the token as a bearer', async (t) => {
    const server = await startFakeService();
    t.after(() => server.close());
    const { channel, problem } = buildChannel('phone', {
      type: 'ntfy',
      server: `${server.url}/`,
      topic: 'cellar-x7',
      tokenFile: secretFile(t, 'tk_secret\n'),
      priority: 'urgent',
      tags: ['warning', 'beer'],
    });
    assert.equal(problem, undefined);
    await channel.send(RAISED, signal());
    await channel.send(RESOLVED, signal());
    const [raised, resolved] = server.requests;
    assert.equal(raised?.method, 'POST');
    assert.equal(raised?.url, '/');
    assert.equal(raised?.headers.authorization, 'Bearer tk_secret');
    assert.deepEqual(JSON.parse(raised?.body ?? ''), {
      topic: 'cellar-x7',
      title: RAISED.title,
      message: RAISED.message,
      priority: 5,
      tags: ['warning', 'beer'],
    });
    const second = JSON.parse(resolved?.body ?? '');
    assert.equal(second.priority, 3, 'a resolution at default priority');
    assert.deepEqual(second.tags, ['white_check_mark']);
    assert.match(second.message, /\(2 more held back by the hourly cap\)$/);
  });

  test('answers: 401 is a refusal naming the server; 503 with Retry-After is retried after it; no server is retried', async (t) => {
    const server = await startFakeService();
    t.after(() => server.close());
    const config = {
      type: 'ntfy' as const,
      server: server.url,
      topic: 't',
      priority: 'high' as const,
      tags: [],
    };
    const { channel } = buildChannel('phone', config);
    server.script.push(
      { status: 401, body: '{"code":40101,"http":401,"error":"unauthorized"}' },
      { status: 503, headers: { 'retry-after': '120' } },
    );
    const refused = await thrown(channel.send(RAISED, signal()));
    assert.equal(refused.details.refused, true);
    assert.match(refused.message, /^ntfy \(127\.0\.0\.1:\d+\) answered HTTP 401: .*unauthorized/);
    const busy = await thrown(channel.send(RAISED, signal()));
    assert.equal(busy.details.refused, false);
    assert.equal(busy.details.retryAfterMs, 120_000);
    const closed = buildChannel('phone', {
      ...config,
      server: `http://127.0.0.1:${await freePort()}`,
    }).channel;
    const unreachable = await thrown(closed.send(RAISED, signal()));
    assert.equal(unreachable.details.refused, undefined);
    assert.match(unreachable.message, /ECONNREFUSED/);
  });
});

describe('Telegram', () => {
  test('sendMessage with the chat id and the text; a 429 waits retry_after; the token is in no error', async (t) => {
    const server = await startFakeService('{"ok":true,"result":{"message_id":7}}');
    t.after(() => server.close());
    const token = '123456:ABC-secret-token';
    const { channel } = buildChannel('tg', {
      type: 'telegram',
      botTokenFile: secretFile(t, `${token}\n`),
      chatId: -100123,
      apiUrl: server.url,
    });
    await channel.send(RAISED, signal());
    assert.equal(server.requests[0]?.url, `/bot${token}/sendMessage`);
    const body = JSON.parse(server.requests[0]?.body ?? '');
    assert.equal(body.chat_id, -100123);
    assert.equal(body.text, `${RAISED.title}\n${RAISED.message}`);
    server.script.push({
      status: 429,
      body: '{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}',
    });
    const limited = await thrown(channel.send(RAISED, signal()));
    assert.equal(limited.details.retryAfterMs, 7_000);
    assert.doesNotMatch(limited.message, /secret-token/);
  });
});

describe('webhook', () => {
  test('the alert as JSON, its id in a header, signed with HMAC-SHA256 of the body', async (t) => {
    const server = await startFakeService('');
    t.after(() => server.close());
    const { channel } = buildChannel('hook', {
      type: 'webhook',
      url: `${server.url}/homeostat`,
      secretFile: secretFile(t, 'hmac-key'),
    });
    await channel.send(RAISED, signal());
    const request = server.requests[0];
    assert.equal(request?.url, '/homeostat');
    assert.deepEqual(JSON.parse(request?.body ?? ''), RAISED);
    assert.equal(request?.headers['x-homeostat-alert-id'], RAISED.id);
    const expected = createHmac('sha256', 'hmac-key')
      .update(request?.body ?? '')
      .digest('hex');
    assert.equal(request?.headers['x-homeostat-signature'], `sha256=${expected}`);
  });
});

describe('buildChannel with a secret file that cannot be read', () => {
  const cases: Array<[name: string, file: (t: Parameters<typeof tempDir>[0]) => string, why: RegExp]> = [
    ['missing', (t) => path.join(tempDir(t), 'none'), /ENOENT/],
    ['empty', (t) => secretFile(t, '\n'), /is empty/],
    ['a device', () => '/dev/zero', /not a regular file/],
  ];
  for (const [name, file, why] of cases) {
    test(`${name}: the channel is built broken, naming the key and the file, and every send is refused`, async (t) => {
      const tokenFile = file(t);
      const { channel, problem } = buildChannel('phone', {
        type: 'ntfy',
        server: 'http://127.0.0.1:1',
        topic: 't',
        tokenFile,
        priority: 'high',
        tags: [],
      });
      assert.match(problem ?? '', /^alerts\.channels\.phone\.tokenFile: /);
      assert.ok(problem?.includes(tokenFile));
      assert.match(problem ?? '', why);
      const refused = await thrown(channel.send(RAISED, signal()));
      assert.equal(refused.details.refused, true);
    });
  }
});
