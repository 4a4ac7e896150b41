/**
 * Secrets out of everything homeostat prints or stores. The broker password belongs in
 * `mqtt.passwordFile` or HOMEOSTAT_MQTT_PASSWORD; a password written into the broker URL
 * (`mqtt://user:secret@host`) still works, but is replaced by `***` in logs, in the config
 * text kept in the database, in events and in every command's output.
 */

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
  return redactSecretsInText(text);
}

/** Replaces the password part of every `scheme://user:password@` in `text`. */
function redactSecretsInText(text: string): string {
  return text.replace(URL_USERINFO, (_match, head: string) => `${head}${REDACTED}@`);
}
