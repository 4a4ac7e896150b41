import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { isLoopbackHost } from '../config/schema.js';
import type { HttpSettings } from './settings.js';

/**
 * Who may do what over HTTP. Pure functions of the request's headers and the settings, plus
 * the dashboard's sessions. The rules (docs/dashboard.md, "Security of the API"):
 * - On loopback only this machine connects: no token. Off loopback every write needs the
 *   token (Authorization: Bearer, or the session cookie the dashboard gets for it), and every
 *   read too unless http.publicReads — except from this machine itself (a loopback peer whose
 *   request was not forwarded by a proxy): a local user could read the database anyway, and
 *   the CLI then never sends the token to whatever listens on 127.0.0.1.
 * - The Host header must name this server (DNS rebinding: a web page on another name must not
 *   reach the API through the browser).
 * - Writes must be JSON and must not come from another site (CSRF): a browser sends a
 *   cross-site JSON POST only after a CORS preflight we never answer, and tells Origin and
 *   Sec-Fetch-Site, which are checked too.
 */

export type Verdict = { ok: true } | { ok: false; status: number; error: string };

const OK: Verdict = { ok: true };

/** The dashboard's session cookie (EventSource cannot send an Authorization header). */
export const SESSION_COOKIE = 'homeostat_session';
const SESSION_MAX_AGE_S = 30 * 24 * 3600;
const MAX_SESSIONS = 64;

/** Whether the Host header names this server: an IP literal, localhost, our name or an allowed one. */
export function checkHost(hostHeader: string | undefined, settings: HttpSettings): Verdict {
  if (!hostHeader) return { ok: false, status: 400, error: 'a Host header is required' };
  const name = hostName(hostHeader);
  // An IP literal cannot be rebound: DNS rebinding needs a name the attacker controls.
  if (isIP(name) !== 0 || isLoopbackHost(name)) return OK;
  const machine = hostname().toLowerCase();
  const allowed = [settings.host, 'localhost', machine, `${machine}.local`, ...settings.allowedHosts];
  if (allowed.some((entry) => entry.toLowerCase() === name)) return OK;
  return {
    ok: false,
    status: 403,
    error: `this server does not answer to the name "${name}": add it to http.allowedHosts if you reach homeostat through it`,
  };
}

/** The host name of a Host header, without its port and IPv6 brackets, lowercase. */
function hostName(hostHeader: string): string {
  const trimmed = hostHeader.trim().toLowerCase();
  if (trimmed.startsWith('[')) return trimmed.slice(1, trimmed.indexOf(']'));
  const colon = trimmed.lastIndexOf(':');
  return colon === -1 ? trimmed : trimmed.slice(0, colon);
}

/** A write must be JSON and come from this server's own pages or from no page at all. */
export function checkWrite(headers: IncomingHttpHeaders): Verdict {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return { ok: false, status: 403, error: `cross-site request refused (Sec-Fetch-Site: ${site})` };
  }
  const origin = headers.origin;
  if (origin !== undefined && origin !== 'null') {
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host.toLowerCase();
    } catch {
      originHost = undefined;
    }
    if (originHost !== headers.host?.toLowerCase()) {
      return { ok: false, status: 403, error: `cross-site request refused (Origin: ${origin})` };
    }
  } else if (origin === 'null') {
    return { ok: false, status: 403, error: 'cross-site request refused (Origin: null)' };
  }
  const type = headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    return { ok: false, status: 415, error: 'send writes as JSON (Content-Type: application/json)' };
  }
  return OK;
}

/** Tokens compared in constant time (hashes first: equal lengths whatever was sent). */
export function tokenMatches(sent: string, token: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(sent), digest(token));
}

/** The dashboard's logins: random ids in memory (a restart logs everyone out), newest kept. */
export class Sessions {
  private readonly expiries = new Map<string, number>();

  constructor(private readonly nowMs: () => number = Date.now) {}

  /** A new session id, and the Set-Cookie header that gives it to the browser. */
  open(): { id: string; cookie: string } {
    const id = randomBytes(24).toString('base64url');
    this.expiries.set(id, this.nowMs() + SESSION_MAX_AGE_S * 1000);
    while (this.expiries.size > MAX_SESSIONS) this.expiries.delete(this.expiries.keys().next().value!);
    return {
      id,
      cookie: `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_MAX_AGE_S}`,
    };
  }

  close(cookieHeader: string | undefined): string {
    const id = sessionId(cookieHeader);
    if (id !== undefined) this.expiries.delete(id);
    return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
  }

  valid(cookieHeader: string | undefined): boolean {
    const id = sessionId(cookieHeader);
    if (id === undefined) return false;
    const expiresAtMs = this.expiries.get(id);
    if (expiresAtMs === undefined) return false;
    if (expiresAtMs < this.nowMs()) {
      this.expiries.delete(id);
      return false;
    }
    return true;
  }
}

function sessionId(cookieHeader: string | undefined): string | undefined {
  for (const part of cookieHeader?.split(';') ?? []) {
    const [name, value] = part.trim().split('=', 2);
    if (name === SESSION_COOKIE && value) return value;
  }
  return undefined;
}

/** Headers a reverse proxy adds: a request carrying one came from elsewhere, whatever its socket says. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const;

/**
 * Whether the request comes from this machine itself: a loopback socket address (127.0.0.0/8,
 * ::1, or IPv4-mapped ::ffff:127.x) and no proxy header. A reverse proxy on the Pi connects
 * from loopback too: one that adds none of these headers must do its own authentication.
 */
export function fromThisMachine(remoteAddress: string | undefined, headers: IncomingHttpHeaders): boolean {
  if (remoteAddress === undefined) return false;
  const address = remoteAddress.startsWith('::ffff:') ? remoteAddress.slice('::ffff:'.length) : remoteAddress;
  if (!isLoopbackHost(address) || address === 'localhost') return false;
  return FORWARDING_HEADERS.every((name) => headers[name] === undefined);
}

/** Whether a request may read (`write` false) or change something; `local`: from this machine. */
export function authorize(
  headers: IncomingHttpHeaders,
  settings: HttpSettings,
  sessions: Sessions,
  access: 'read' | 'write',
  local = false,
): Verdict {
  const verdict = checkAccess(headers, settings, sessions, access, local);
  return verdict.ok ? OK : { ok: false, status: verdict.status, error: verdict.error };
}

/**
 * {@link authorize}, telling more: whether the client proved who it is (`trusted`: this machine,
 * the token or a session; a public read is not), whether it sent a wrong token (a guess the
 * throttle counts), and, while its address is locked out (`lockedForMs` > 0, from the
 * throttle), 429 without comparing its token at all: a guess while locked out is never tried.
 * A valid session passes even then (its id cannot be guessed), and so does this machine, which
 * needs no token (loopback is never throttled).
 */
export function checkAccess(
  headers: IncomingHttpHeaders,
  settings: HttpSettings,
  sessions: Sessions,
  access: 'read' | 'write',
  local = false,
  lockedForMs = 0,
): Access {
  if (settings.loopbackOnly || local || sessions.valid(headers.cookie)) return TRUSTED;
  const auth = headers.authorization;
  // The scheme is case-insensitive (RFC 9110 §11.1).
  const bearer = /^bearer\s+(.+)$/i.exec(auth ?? '')?.[1]?.trim();
  const sentToken = bearer !== undefined && settings.token !== undefined && lockedForMs === 0;
  const right = sentToken && tokenMatches(bearer, settings.token!);
  const wrongToken = sentToken && !right;
  if (access === 'read' && settings.publicReads) return { ok: true, trusted: right, wrongToken };
  if (settings.token === undefined) {
    return {
      ok: false,
      status: 401,
      error: 'no API token is configured (http.tokenFile): nothing is allowed off loopback',
    };
  }
  if (lockedForMs > 0) {
    const retryAfterS = Math.ceil(lockedForMs / 1000);
    return {
      ok: false,
      status: 429,
      error: lockedOutMessage(retryAfterS),
      retryAfterS,
    };
  }
  if (right) return TRUSTED;
  return {
    ok: false,
    status: 401,
    wrongToken,
    error:
      auth === undefined
        ? `this request needs the API token (Authorization: Bearer <token>, from http.tokenFile)`
        : 'wrong API token',
  };
}

export function lockedOutMessage(retryAfterS: number): string {
  return `too many wrong API tokens from this address: try again in ${retryAfterS} s`;
}

/** What {@link checkAccess} found. */
export type Access =
  | { ok: true; trusted: boolean; wrongToken?: boolean }
  | { ok: false; status: number; error: string; wrongToken?: boolean; retryAfterS?: number };

const TRUSTED: Access = { ok: true, trusted: true };
