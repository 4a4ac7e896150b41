/**
 * Where alerts go: ntfy, Telegram, email over SMTP, a webhook. Secrets are named by file, never
 * written here.
 */
import { z } from 'zod';

const httpUrl = (what: string) =>
  z
    .string()
    .min(1)
    .refine((text) => {
      try {
        const url = new URL(text);
        return url.protocol === 'http:' || url.protocol === 'https:';
      } catch {
        return false;
      }
    }, `${what} must be an http:// or https:// URL`);

const secretFile = (what: string) =>
  z.string().min(1).describe(`Path of a file holding ${what} (read at start, never logged or shown).`);

const NTFY_PRIORITIES = ['min', 'low', 'default', 'high', 'urgent'] as const;

const ntfySchema = z
  .strictObject({
    type: z.literal('ntfy').describe('ntfy: a push to phones.'),
    server: httpUrl('server')
      .default('https://ntfy.sh')
      .describe('The ntfy server: the public one or your own. Default https://ntfy.sh.'),
    topic: z
      .string()
      .regex(/^[-_A-Za-z0-9]{1,64}$/, { error: 'topic: 1–64 letters, digits, - and _' })
      .describe(
        'Topic to publish to (on the public server it is the password: pick one hard to guess). Required.',
      ),
    tokenFile: secretFile('an ntfy access token (tk_…)')
      .optional()
      .describe('Path of a file holding an ntfy access token, for a protected topic. Default: none.'),
    priority: z
      .enum(NTFY_PRIORITIES)
      .default('high')
      .describe(
        'Priority of a raised alert (min, low, default, high, urgent); a resolved one is sent at default. Default high.',
      ),
    tags: z
      .array(z.string().min(1))
      .default(['warning'])
      .describe('Tags (ntfy shows known ones as emojis) of a raised alert. Default [warning].'),
  })
  .describe('Push to phones through ntfy (https://ntfy.sh or a self-hosted server).');

const telegramSchema = z
  .strictObject({
    type: z.literal('telegram').describe('telegram: a message from your bot.'),
    botTokenFile: secretFile('the bot token from @BotFather').describe(
      'Path of a file holding the bot token from @BotFather (never logged). Required.',
    ),
    chatId: z
      .union([z.string().min(1), z.number().int()])
      .describe(
        'The chat (or group, or channel) the bot writes to: its numeric id or @channelname. Required.',
      ),
    apiUrl: httpUrl('apiUrl')
      .default('https://api.telegram.org')
      .describe('The Bot API server. Default https://api.telegram.org.'),
  })
  .describe('A Telegram message from your bot.');

const webhookSchema = z
  .strictObject({
    type: z.literal('webhook').describe('webhook: a JSON POST.'),
    url: httpUrl('url').describe('Where each alert is POSTed as JSON (Node-RED, n8n, your own). Required.'),
    secretFile: secretFile('the HMAC key')
      .optional()
      .describe(
        'Path of a file holding a key: each request is signed with HMAC-SHA256 of its body in the header ' +
          'X-Homeostat-Signature (sha256=<hex>). Default: unsigned.',
      ),
  })
  .describe('A JSON POST to any URL, with the alert id in X-Homeostat-Alert-Id for de-duplication.');

/** An SMTP connection's protection: STARTTLS on the submission port, TLS from the start, or none. */
export const SMTP_SECURITY = ['starttls', 'tls', 'none'] as const;
export type SmtpSecurity = (typeof SMTP_SECURITY)[number];

/** The port each protection is served on unless `port` says otherwise (RFC 6409, RFC 8314, RFC 5321). */
export const SMTP_DEFAULT_PORT: Record<SmtpSecurity, number> = { starttls: 587, tls: 465, none: 25 };

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

const mailAddress = (what: string) =>
  z.email({ error: `${what}: an e-mail address such as homeostat@example.org` });

const emailSchema = z
  .strictObject({
    type: z.literal('email').describe('email: a mail through your SMTP server.'),
    host: z
      .string()
      .regex(/^[A-Za-z0-9.:[\]-]{1,253}$/, { error: 'host: a host name or an IP address' })
      .describe("The SMTP server (your provider's, or a relay on this machine). Required."),
    port: z
      .number()
      .int()
      .min(1)
      .max(65_535)
      .optional()
      .describe('Its port. Default 587 with starttls, 465 with tls, 25 with none.'),
    security: z
      .enum(SMTP_SECURITY)
      .default('starttls')
      .describe(
        'starttls: plain connection upgraded to TLS, refused if the server cannot; tls: TLS from the start; ' +
          'none: no encryption (a relay on this machine only). Default starttls.',
      ),
    username: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe('Login, when the server asks for one. Default: none.'),
    passwordFile: secretFile('the SMTP password')
      .optional()
      .describe('Path of a file holding the password of username (never logged). Default: none.'),
    caFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Path of a PEM file of the certificate authority that signed a self-hosted server's certificate. " +
          "Default: the system's authorities.",
      ),
    from: mailAddress('from').describe('The sender address (one your server lets you send from). Required.'),
    to: z
      .union([mailAddress('to'), z.array(mailAddress('to')).min(1).max(20)])
      .transform((to) => (Array.isArray(to) ? to : [to]))
      .describe('One address, or a list of at most 20. Required.'),
  })
  .refine((mail) => (mail.username === undefined) === (mail.passwordFile === undefined), {
    error: 'give username and passwordFile together, or neither',
    path: ['passwordFile'],
  })
  .refine(
    (mail) => mail.security !== 'none' || mail.username === undefined || LOOPBACK_HOST.test(mail.host),
    {
      error:
        'security: none would send the password unencrypted; use starttls or tls (or a relay on localhost)',
      path: ['security'],
    },
  )
  .describe(
    'A mail through an SMTP server, with STARTTLS or TLS; a raised alert and its resolution share a thread.',
  );

export const alertChannelSchema = z.discriminatedUnion('type', [
  ntfySchema,
  telegramSchema,
  emailSchema,
  webhookSchema,
]);

export type AlertChannelConfig = z.output<typeof alertChannelSchema>;
