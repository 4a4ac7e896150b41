/**
 * Secrets out of everything homeostat prints or stores. The broker password belongs in
 * `mqtt.passwordFile` or HOMEOSTAT_MQTT_PASSWORD; a password written into the broker URL
 * (`mqtt://user:secret@host`) still works, but is replaced by `***` in logs, in the config
 * text kept in the database, in events and in every command's output. So is an API token
 * written as `http.token` (it belongs in `http.tokenFile`).
 */

import { isScalar, parseDocument } from 'yaml';

/** What a redacted password reads as. */
export const REDACTED = '***';

/**
 * `scheme://user:password@` anywhere in a text. The password ends at the first `@`, `/`,
 * whitespace or quote: in a valid URL an `@` or `/` inside the password must be percent-encoded,
 * so the first `@` after the colon ends it.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/@:'"]*:)([^\s/@'"]+)@/gi;

/**
 * `mqtt://user:secret@host:1883` → `mqtt://user:***@host:1883`. A URL without a password is
 * returned unchanged (byte for byte: no normalisation), and so is anything that is not a URL
 * except for a `scheme://user:password@` part in it.
 */
export function redactUrl(url: string): string {
  return redactSecretsInText(url);
}

/**
 * A config file's text (YAML) with every URL password replaced by `***`; everything else,
 * comments and layout included, unchanged. For the copy of the config kept in the database
 * and for anything that prints config text.
 */
export function redactConfigText(text: string): string {
  return redactTokenValue(text.replace(URL_USERINFO, (_match, head: string) => `${head}${REDACTED}@`));
}

/**
 * The `http.token` value replaced where the YAML parser found it (plain, quoted, block scalar,
 * quoted key, flow mapping: whatever the spelling), the rest of the text byte for byte. A text
 * that does not parse keeps the pattern-based redaction (TOKEN_VALUE) only.
 */
function redactTokenValue(text: string): string {
  // Most texts (event messages, configs without a token) need no parse.
  if (!text.includes('token')) return text;
  const byPattern = () => text.replace(TOKEN_VALUE, (_match, head: string) => `${head}"${REDACTED_TOKEN}"`);
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text);
  } catch {
    return byPattern();
  }
  if (doc.errors.length > 0) return byPattern();
  const node = doc.getIn(['http', 'token'], true);
  if (!isScalar(node) || !node.range) return text;
  const [start, valueEnd] = node.range;
  // A block scalar's range ends after its line break: keep that, so the next key stays on its line.
  const trailing = /\s*$/.exec(text.slice(start, valueEnd))?.[0] ?? '';
  return `${text.slice(0, start)}"${REDACTED_TOKEN}"${trailing}${text.slice(valueEnd)}`;
}

/**
 * What a redacted `http.token` reads as: long enough to stay a valid token, so a redacted
 * config text still parses (plan compares with it).
 */
export const REDACTED_TOKEN = '(redacted: see the config file)';

/**
 * The value of a `token:` key, block or flow style, on the key's line: a plain, single- or
 * double-quoted scalar. A key named token whose value is a mapping or a list (a loop or sensor
 * id, say) is left alone: its value starts with `{`, `[` or on the next line. Used where the
 * text is not valid YAML (redactTokenValue finds the value by parsing otherwise) and in log text.
 */
const TOKEN_VALUE =
  /(\btoken[ \t]*:[ \t]*)("(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|[^\s{}[\],#'"|>](?:[^\n,}#]*[^\s,}#])?)/g;

/** Replaces every URL password and the value of every `token:` key in `text`. */
function redactSecretsInText(text: string): string {
  return text
    .replace(URL_USERINFO, (_match, head: string) => `${head}${REDACTED}@`)
    .replace(TOKEN_VALUE, (_match, head: string) => `${head}"${REDACTED_TOKEN}"`);
}
