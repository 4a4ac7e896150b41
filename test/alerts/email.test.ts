/**
 * The email channel against a real SMTP server (aiosmtpd, test/alerts/support/smtp.ts) on a
 * loopback port: STARTTLS required by default (RFC 3207), TLS from the first byte (RFC 8314),
 * a login (RFC 4954), and how the server's replies are read (RFC 5321 4.2.1: 4yz is a transient
 * failure, to retry; 5yz a permanent one, a refusal a person must fix).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { emailChannel } from '../../src/alerts/channels/email.js';
import { buildChannel } from '../../src/alerts/channels/index.js';
import { alertChannelSchema } from '../../src/config/schema/alert-channels.js';
import { freePort } from '../support/net.js';
import { type HasAfter, tempDir } from '../support/tmp.js';
import { RAISED, RESOLVED, thrown } from './notices.js';
import { type SmtpServer, smtpSkip, startSmtpServer } from './support/smtp.js';

const LOGIN = { user: 'cellar@example.org', password: 'correct horse' };

function passwordFile(t: HasAfter, password = LOGIN.password): string {
  const file = path.join(tempDir(t), 'smtp.password');
  writeFileSync(file, `${password}\n`);
  return file;
}

/** The channel of an `email` config (defaults applied as the config loader does). */
function emailChannelOf(config: Record<string, unknown>) {
  const parsed = alertChannelSchema.parse({
    type: 'email',
    host: '127.0.0.1',
    from: 'cellar@example.org',
    to: ['brewer@example.org', 'partner@example.org'],
    ...config,
  });
  const built = buildChannel('mail', parsed);
  assert.equal(built.problem, undefined);
  return built.channel;
}

const loggedIn = (t: HasAfter, server: SmtpServer, extra: Record<string, unknown> = {}) =>
  emailChannelOf({
    port: server.port,
    caFile: server.caPath,
    username: LOGIN.user,
    passwordFile: passwordFile(t),
    ...extra,
  });

const signal = () => AbortSignal.timeout(10_000);

describe('email over SMTP', { skip: smtpSkip }, () => {
  test('STARTTLS and a login: the alert is a mail to every address, its id the Message-ID', async (t) => {
    const server = await startSmtpServer(t, { mode: 'starttls', login: `${LOGIN.user}:${LOGIN.password}` });
    const channel = loggedIn(t, server);
    await channel.send(RAISED, signal());
    await server.received(1);
    const [mail] = server.mails;
    assert.equal(mail?.from, 'cellar@example.org');
    assert.deepEqual(mail?.to, ['brewer@example.org', 'partner@example.org']);
    assert.equal(mail?.headers.subject, RAISED.title);
    assert.equal(
      mail?.headers['message-id'],
      '<cellar/fermenter/faulted/1767225600000/raised@cellar.homeostat>',
    );
    assert.equal(mail?.headers['x-homeostat-alert-id'], RAISED.id);
    assert.equal(mail?.headers['x-priority'], '1 (Highest)');
    assert.match(mail?.headers.from ?? '', /homeostat.*<cellar@example\.org>/);
    assert.match(
      mail?.body ?? '',
      /reading stale for 26 s \(limit 25 s\), 18\.2 °C\r?\n\r?\ncellar, 2026-01-01T00:01:00\.000Z/,
    );
  });

  test('a resolution answers its raised alert (one thread), with the hourly cap’s count', async (t) => {
    const server = await startSmtpServer(t, { mode: 'starttls', login: `${LOGIN.user}:${LOGIN.password}` });
    const channel = loggedIn(t, server);
    await channel.send(RAISED, signal());
    await channel.send(RESOLVED, signal());
    await server.received(2);
    const [raised, resolved] = server.mails;
    assert.equal(resolved?.headers['in-reply-to'], raised?.headers['message-id']);
    assert.equal(resolved?.headers.references, raised?.headers['message-id']);
    assert.equal(resolved?.headers['x-priority'], undefined, 'a resolution is of normal priority');
    assert.match(resolved?.body ?? '', /2 more held back by the hourly cap/);
  });

  test('TLS from the first byte (security: tls) on its port', async (t) => {
    const server = await startSmtpServer(t, { mode: 'tls', login: `${LOGIN.user}:${LOGIN.password}` });
    const channel = loggedIn(t, server, { security: 'tls' });
    await channel.send(RAISED, signal());
    await server.received(1);
    assert.equal(server.mails[0]?.headers.subject, RAISED.title);
  });

  test('a line break in a loop name never reaches a header', async (t) => {
    const server = await startSmtpServer(t, { mode: 'starttls', login: `${LOGIN.user}:${LOGIN.password}` });
    const channel = loggedIn(t, server);
    await channel.send({ ...RAISED, title: 'Fermenter\r\nBcc: thief@example.org' }, signal());
    await server.received(1);
    const [mail] = server.mails;
    assert.equal(mail?.headers.bcc, undefined);
    assert.deepEqual(mail?.to, ['brewer@example.org', 'partner@example.org']);
    assert.equal(mail?.headers.subject, 'Fermenter Bcc: thief@example.org');
  });

  const refusals: Array<{
    given: string;
    server: Parameters<typeof startSmtpServer>[1];
    config?: Record<string, unknown>;
    password?: string;
    refused: boolean;
    message: RegExp;
  }> = [
    {
      given: 'a wrong password',
      server: { mode: 'starttls', login: `${LOGIN.user}:${LOGIN.password}` },
      password: 'wrong',
      refused: true,
      message: /email \(127\.0\.0\.1:\d+\) answered 535 .*check username and the password in passwordFile/,
    },
    {
      given: 'a server without STARTTLS while starttls is required',
      server: { mode: 'none', login: `${LOGIN.user}:${LOGIN.password}` },
      refused: true,
      message: /no STARTTLS on this port/,
    },
    {
      given: 'a permanent refusal of the mail (550)',
      server: {
        mode: 'starttls',
        login: `${LOGIN.user}:${LOGIN.password}`,
        replies: ['550 5.7.1 not from you'],
      },
      refused: true,
      message: /550 5\.7\.1 not from you/,
    },
    {
      given: 'a transient failure (451): retried, not a refusal',
      server: {
        mode: 'starttls',
        login: `${LOGIN.user}:${LOGIN.password}`,
        replies: ['451 4.3.0 try again later'],
      },
      refused: false,
      message: /451 4\.3\.0 try again later/,
    },
  ];
  for (const refusal of refusals) {
    test(`given ${refusal.given}: the error says what the server said (refused: ${refusal.refused})`, async (t) => {
      const server = await startSmtpServer(t, refusal.server);
      const channel = loggedIn(t, server, {
        passwordFile: passwordFile(t, refusal.password),
        ...refusal.config,
      });
      const error = await thrown(channel.send(RAISED, signal()));
      assert.match(error.message, refusal.message);
      assert.equal(error.details.refused ?? false, refusal.refused);
      assert.ok(!error.message.includes(LOGIN.password), 'the password is never in a message');
    });
  }

  test('a certificate from an unknown authority is not trusted without caFile', async (t) => {
    const server = await startSmtpServer(t, { mode: 'tls' });
    const channel = emailChannelOf({ port: server.port, security: 'tls' });
    const error = await thrown(channel.send(RAISED, signal()));
    assert.match(error.message, /certificate/i);
    assert.equal(server.mails.length, 0);
  });

  test('nothing listening: a network fault, retried', async () => {
    const channel = emailChannelOf({ port: await freePort() });
    const error = await thrown(channel.send(RAISED, signal()));
    assert.match(error.message, /ECONNECTION|ECONNREFUSED/);
    assert.equal(error.details.refused ?? false, false);
  });

  test('verify (doctor) logs in and sends nothing; a wrong password fails it', async (t) => {
    const server = await startSmtpServer(t, { mode: 'starttls', login: `${LOGIN.user}:${LOGIN.password}` });
    await loggedIn(t, server).verify?.();
    const wrong = loggedIn(t, server, { passwordFile: passwordFile(t, 'wrong') });
    await assert.rejects(async () => wrong.verify?.(), /answered 535/);
    assert.equal(server.mails.length, 0);
  });
});

describe('email config', () => {
  const cases: Array<{ given: Record<string, unknown>; error: RegExp | undefined }> = [
    { given: {}, error: undefined },
    { given: { to: 'one@example.org' }, error: undefined },
    { given: { username: 'me' }, error: /username and passwordFile together/ },
    { given: { passwordFile: '/etc/homeostat/smtp.password' }, error: /username and passwordFile together/ },
    {
      given: { host: 'smtp.example.org', security: 'none', username: 'me', passwordFile: '/p' },
      error: /unencrypted/,
    },
    { given: { host: 'localhost', security: 'none', username: 'me', passwordFile: '/p' }, error: undefined },
    { given: { from: 'not an address' }, error: /from: an e-mail address/ },
    { given: { to: ['brewer@example.org\r\nBcc: thief@example.org'] }, error: /to: an e-mail address/ },
    { given: { to: [] }, error: /too_small|at least|>=1/i },
    { given: { host: 'smtp.example.org\r\nX' }, error: /host: a host name/ },
  ];
  for (const { given, error } of cases) {
    test(`${JSON.stringify(given)} → ${error ?? 'accepted'}`, () => {
      const result = alertChannelSchema.safeParse({
        type: 'email',
        host: '127.0.0.1',
        from: 'cellar@example.org',
        to: 'brewer@example.org',
        ...given,
      });
      if (error === undefined) assert.ok(result.success, JSON.stringify(result.error?.issues));
      else assert.match(JSON.stringify(result.error?.issues ?? 'accepted'), error);
    });
  }

  test('port defaults to the protection’s: 587 starttls, 465 tls, 25 none', () => {
    for (const [security, port] of [
      ['starttls', 587],
      ['tls', 465],
      ['none', 25],
    ] as const) {
      const config = alertChannelSchema.parse({
        type: 'email',
        host: 'smtp.example.org',
        security,
        from: 'a@b.org',
        to: 'c@d.org',
      });
      assert.ok(config.type === 'email');
      assert.equal(emailChannel('mail', config, {}).service, `email (smtp.example.org:${port})`);
    }
  });

  test('a passwordFile that cannot be read: the channel is built broken, the problem names the file', async () => {
    const built = buildChannel(
      'mail',
      alertChannelSchema.parse({
        type: 'email',
        host: '127.0.0.1',
        from: 'a@b.org',
        to: 'c@d.org',
        username: 'me',
        passwordFile: '/nonexistent/smtp.password',
      }),
    );
    assert.match(
      built.problem ?? '',
      /alerts\.channels\.mail\.passwordFile: cannot read.*\/nonexistent\/smtp\.password/,
    );
    const error = await thrown(built.channel.send(RAISED, signal()));
    assert.equal(error.details.refused, true);
  });
});
