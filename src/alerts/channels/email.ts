/**
 * The email channel: one mail per alert through an SMTP server, by nodemailer (STARTTLS required
 * by default, or TLS from the start). The alert's id is the mail's Message-ID, so a server or
 * a mail client that sees a retried mail twice can tell; a resolution answers its raised alert
 * (In-Reply-To), so the two read as one thread. The server's answer is classified as the HTTP
 * channels' is: a 4xx reply or a network fault is retried, a 5xx reply (a wrong password, a
 * refused sender) is a refusal, retried slowly.
 */
import { createTransport } from 'nodemailer';
import type { AlertChannelConfig } from '../../config/schema/alert-channels.js';
import { SMTP_DEFAULT_PORT } from '../../config/schema/alert-channels.js';
import type { AlertNotice } from '../notice.js';
import { noticeBody } from '../notice.js';
import { DeliveryError } from './http.js';
import type { AlertChannel } from './services.js';

type EmailConfig = Extract<AlertChannelConfig, { type: 'email' }>;

/** SMTP timeouts, ms: inside the dispatcher's 15 s per attempt, so a dead server ends its socket. */
const CONNECT_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 14_000;
/** What of a server's reply goes into the error, at most. */
const MAX_REPLY_CHARS = 200;

export interface EmailSecrets {
  password?: string | undefined;
  /** PEM text of caFile. */
  ca?: string | undefined;
}

/** The channel, and `verify` (connect, STARTTLS, log in, send nothing) for `homeostat doctor`. */
export function emailChannel(
  id: string,
  config: EmailConfig,
  secrets: EmailSecrets,
): AlertChannel & { verify(): Promise<void>; service: string } {
  const port = config.port ?? SMTP_DEFAULT_PORT[config.security];
  const service = `email (${config.host}:${port})`;
  const transport = createTransport({
    host: config.host,
    port,
    secure: config.security === 'tls',
    requireTLS: config.security === 'starttls',
    ignoreTLS: config.security === 'none',
    ...(config.username === undefined
      ? {}
      : { auth: { user: config.username, pass: secrets.password ?? '' } }),
    ...(secrets.ca === undefined ? {} : { tls: { ca: secrets.ca } }),
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  });
  return {
    id,
    type: 'email',
    service,
    async send(notice) {
      try {
        await transport.sendMail(mailOf(notice, config));
      } catch (error) {
        throw smtpError(service, error);
      }
    },
    async verify() {
      try {
        await transport.verify();
      } catch (error) {
        throw smtpError(service, error);
      }
    },
  };
}

/** The mail of a notice: subject the title, the body and when, threaded by the streak. */
export function mailOf(notice: AlertNotice, config: Pick<EmailConfig, 'from' | 'to'>) {
  const raisedId =
    notice.streakId === undefined ? undefined : messageId(`${notice.streakId}/raised`, notice.node);
  const threaded = notice.phase === 'resolved' && raisedId !== undefined;
  return {
    from: { name: 'homeostat', address: config.from },
    to: config.to,
    // Titles hold people's names for loops: no line break may reach a header.
    subject: oneLine(notice.title),
    text: `${noticeBody(notice)}\n\n${notice.node}, ${new Date(notice.atMs).toISOString()}\n`,
    messageId: messageId(notice.id, notice.node),
    ...(threaded ? { inReplyTo: raisedId, references: [raisedId] } : {}),
    headers: { 'X-Homeostat-Alert-Id': notice.id },
    priority:
      notice.severity === 'critical' && notice.phase === 'raised' ? ('high' as const) : ('normal' as const),
  };
}

/** `<id@node.homeostat>`, the id's characters outside a Message-ID's kept set replaced. */
function messageId(id: string, node: string): string {
  return `<${id.replace(/[^A-Za-z0-9._/=+-]/g, '_')}@${node.replace(/[^a-z0-9-]/g, '-')}.homeostat>`;
}

function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/** What a person can do about the faults a config causes. */
const HINTS: Record<string, string> = {
  ETLS: ' (no STARTTLS on this port: the submission port 587 has it; for port 465 set security: tls)',
  EAUTH: ' (check username and the password in passwordFile)',
};

/**
 * Nodemailer's error as a DeliveryError: a 5xx reply, a failed login or a server without
 * STARTTLS is a refusal (a person must change something); a 4xx reply or a network fault is not.
 */
function smtpError(service: string, error: unknown): DeliveryError {
  const fault = (error ?? {}) as {
    code?: string;
    responseCode?: number;
    response?: string;
    message?: string;
  };
  const refused =
    (fault.responseCode !== undefined && fault.responseCode >= 500) ||
    fault.code === 'EAUTH' ||
    fault.code === 'ETLS';
  const said = oneLine(
    fault.response === undefined
      ? `${fault.code ?? 'failed'}: ${fault.message ?? String(error)}`
      : `answered ${fault.response}`,
  ).slice(0, MAX_REPLY_CHARS);
  return new DeliveryError(`${service} ${said}${HINTS[fault.code ?? ''] ?? ''}`, { refused });
}
