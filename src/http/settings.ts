import { readFileSync } from 'node:fs';
import { type HttpConfig, isLoopbackHost } from '../config/schema.js';

/** What the server needs of the config's http block, the token read from its file. */
export interface HttpSettings {
  host: string;
  port: number;
  /** Off loopback: the secret every write (and every read unless publicReads) must carry. */
  token: string | undefined;
  /** Listening on loopback only: nobody else can connect, no token is asked for. */
  loopbackOnly: boolean;
  publicReads: boolean;
  /** Host header names answered besides the listen address, localhost and loopback addresses. */
  allowedHosts: readonly string[];
}

/** The http block could not be turned into settings (an unreadable token file). */
export class HttpSettingsError extends Error {}

/**
 * Settings from the config's http block (`override`: tests and `run --http-port` pick another
 * address). Throws HttpSettingsError when the token file cannot be read or is empty: a server
 * off loopback without its token must not start.
 */
export function httpSettings(
  http: HttpConfig,
  override: { host?: string; port?: number } = {},
): HttpSettings {
  const host = override.host ?? http.host;
  return {
    host,
    port: override.port ?? http.port,
    token: http.token ?? (http.tokenFile === undefined ? undefined : readToken(http.tokenFile)),
    loopbackOnly: isLoopbackHost(host),
    publicReads: http.publicReads,
    allowedHosts: http.allowedHosts,
  };
}

function readToken(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new HttpSettingsError(`cannot read http.tokenFile ${path} (${code}): the API stays off`);
  }
  const token = text.trim();
  if (token.length < 16) {
    throw new HttpSettingsError(
      `http.tokenFile ${path} holds ${token.length === 0 ? 'nothing' : 'fewer than 16 characters'}: write a long random token into it (openssl rand -hex 24 > ${path}); the API stays off`,
    );
  }
  return token;
}
