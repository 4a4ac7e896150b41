/**
 * A real SMTP server on a free loopback port for the email channel's tests: Debian's
 * python3-aiosmtpd (installed by .ci/run) run by smtp-server.py, with STARTTLS, TLS or neither,
 * an optional login, and scripted DATA replies. Not a test file itself.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { makeServerTls } from '../../integration/mosquitto.js';
import { freePort } from '../../support/net.js';
import { type HasAfter, tempDir } from '../../support/tmp.js';

const SCRIPT = fileURLToPath(new URL('./smtp-server.py', import.meta.url));

/** A python3 that has aiosmtpd (Debian's; a pyenv first on PATH may not), or undefined. */
export const smtpPython: string | undefined = ['/usr/bin/python3', 'python3'].find(
  (python) => spawnSync(python, ['-c', 'import aiosmtpd'], { stdio: 'ignore' }).status === 0,
);

/** Why the SMTP tests cannot run here, or false. */
export const smtpSkip: string | false = smtpPython
  ? false
  : 'python3-aiosmtpd not installed (.ci/run installs it)';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** Headers by lower-case name (the first of each), unfolded. */
  headers: Record<string, string>;
  body: string;
}

export interface SmtpServer {
  port: number;
  /** The CA that signed its certificate (for caFile); undefined with mode none. */
  caPath: string | undefined;
  mails: ReceivedMail[];
  /** Resolves once `count` mails arrived. */
  received(count: number): Promise<void>;
  stop(): Promise<void>;
}

export interface SmtpServerOptions {
  mode: 'starttls' | 'tls' | 'none';
  /** `user:password`: AUTH required. */
  login?: string;
  /** Replies to the first DATA commands, in order (`451 4.3.0 busy`), then 250. */
  replies?: string[];
  /** A port to listen on (one a config named before); default a free one. */
  port?: number;
}

/** A quoted-printable body (RFC 2045 6.7) as text: soft line breaks joined, =XX bytes decoded. */
function decodeQuotedPrintable(body: string): string {
  const joined = body.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const hex = joined[i] === '=' ? joined.slice(i + 1, i + 3) : '';
    if (/^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i] ?? '', 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseMail(line: string): ReceivedMail {
  const raw = JSON.parse(line) as { from: string; to: string[]; data: string };
  const [head = '', ...rest] = raw.data.split(/\r?\n\r?\n/);
  const headers: Record<string, string> = {};
  for (const field of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = field.indexOf(':');
    const name = field.slice(0, colon).trim().toLowerCase();
    if (colon > 0 && !(name in headers)) headers[name] = field.slice(colon + 1).trim();
  }
  const body = rest.join('\n\n');
  const quoted = headers['content-transfer-encoding'] === 'quoted-printable';
  return { from: raw.from, to: raw.to, headers, body: quoted ? decodeQuotedPrintable(body) : body };
}

export async function startSmtpServer(t: HasAfter, options: SmtpServerOptions): Promise<SmtpServer> {
  if (!smtpPython) throw new Error('no python3 with aiosmtpd');
  const port = options.port ?? (await freePort());
  const tls = options.mode === 'none' ? undefined : makeServerTls(tempDir(t));
  const args = [SCRIPT, String(port), options.mode];
  if (tls) args.push('--cert', tls.certPath, '--key', tls.keyPath);
  if (options.login) args.push('--login', options.login);
  if (options.replies?.length) args.push('--replies', options.replies.join('|'));
  const child: ChildProcess = spawn(smtpPython, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const mails: ReceivedMail[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const ready = new Promise<void>((resolve, reject) => {
    let pending = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        if (line === 'ready') resolve();
        else if (line.startsWith('{')) mails.push(parseMail(line));
      }
      for (const waiter of waiters.filter((w) => mails.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`smtp-server.py exited ${code}: ${stderr}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end();
    child.kill('SIGTERM');
    await exited;
  };
  t.after(stop);
  await ready;
  return {
    port,
    caPath: tls?.caPath,
    mails,
    received: (count) =>
      mails.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    stop,
  };
}
