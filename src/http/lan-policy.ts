import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { isLoopbackHost } from '../config/schema.js';

/**
 * What one device on the LAN may take of the API (docs/dashboard.md, "Security of the API"): its share of
 * the connection pool, and how many wrong tokens it may try. Pure functions of the state and
 * `nowMs`, on the monotonic clock (never the daemon's scaled `--speed` clock: these guard
 * against people and networks, whose pace is real time). src/http/guards.ts applies them to
 * sockets and requests. Defaults are in docs/http-limits.md, with why.
 */

/** Connections kept open at once, every address together (streams included). */
export const MAX_CONNECTIONS = 128;
/**
 * Connections from one address at once. A browser opens 6 per host, and a stream or two; a
 * script or Home Assistant one or two. A reverse proxy on the Pi and local tools connect from
 * loopback, which is exempt (it is every client behind the proxy): the pool rule below still
 * keeps it from holding every slot.
 */
export const MAX_CONNECTIONS_PER_PEER = 16;

/**
 * A connection's state, as far as eviction cares. `headers`: its request head is still coming;
 * `body`: the head came, the body is still coming (even after the answer was sent); `idle`:
 * kept alive between requests; `draining`: its answer is written but the client does not read
 * it; `active`: a handler is working on it, or it is a live stream (streams have pools of their
 * own, see EventStream): never evicted.
 */
export type ConnectionPhase = 'headers' | 'body' | 'idle' | 'draining' | 'active';

export interface ConnectionView {
  id: number;
  /** The remote address (see peerAddress). */
  peer: string;
  phase: ConnectionPhase;
  /** Monotonic ms since when it is in this phase (a request started, an answer finished). */
  sinceMs: number;
}

export interface ConnectionLimits {
  maxConnections: number;
  maxPerPeer: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: MAX_CONNECTIONS,
  maxPerPeer: MAX_CONNECTIONS_PER_PEER,
};

/** Admit a newcomer, closing `evict` first when given; or refuse it (close the newcomer). */
export type AdmitDecision = { admit: true; evict?: number } | { admit: false };

/**
 * Whether a new connection from `peer` comes in, given the open ones (`open`, the newcomer not
 * among them). An address at its own limit makes room from its own connections; a full pool
 * makes room from the busiest address (counting the newcomer): its slowest unfinished request
 * goes, or else its oldest idle connection (see EVICTION_RANK). So a newcomer from a quiet address always gets in while anyone holds an evictable
 * connection, and the busiest address pays for it. Nothing evictable: the newcomer is refused.
 */
export function admitConnection(
  open: readonly ConnectionView[],
  peer: string,
  limits: ConnectionLimits,
  peerCapExempt = false,
): AdmitDecision {
  const byPeer = new Map<string, ConnectionView[]>();
  for (const connection of open) {
    const list = byPeer.get(connection.peer);
    if (list) list.push(connection);
    else byPeer.set(connection.peer, [connection]);
  }
  const own = byPeer.get(peer) ?? [];
  if (!peerCapExempt && own.length >= limits.maxPerPeer) return evicting(longestWaiting(own));
  if (open.length < limits.maxConnections) return { admit: true };
  const ownCount = own.length + 1;
  // Busiest first; at a tie, the newcomer's own address (it is as busy as the other).
  const candidates = [...byPeer]
    .map(([address, list]) => ({ address, list, count: address === peer ? ownCount : list.length }))
    .filter((c) => c.count >= ownCount)
    .sort((a, b) => b.count - a.count || Number(b.address === peer) - Number(a.address === peer));
  for (const candidate of candidates) {
    const victim = longestWaiting(candidate.list);
    if (victim) return evicting(victim);
  }
  return { admit: false };
}

/**
 * Which evictable connections go first: an unfinished request (its head or body still coming:
 * what a slowloris holds) before an answer not read, before an idle keep-alive (a client that
 * finished a request has shown it is one: a burst of half-open connections from a client's own
 * address must not reset its kept-alive dashboard). Within a rank, the one waiting longest.
 */
const EVICTION_RANK: Partial<Record<ConnectionPhase, number>> = { headers: 0, body: 0, draining: 1, idle: 2 };

function longestWaiting(list: readonly ConnectionView[]): ConnectionView | undefined {
  let best: ConnectionView | undefined;
  for (const c of list) {
    const rank = EVICTION_RANK[c.phase];
    if (rank === undefined) continue;
    const bestRank = best ? EVICTION_RANK[best.phase]! : Number.POSITIVE_INFINITY;
    if (rank < bestRank || (rank === bestRank && c.sinceMs < best!.sinceMs)) best = c;
  }
  return best;
}

function evicting(victim: ConnectionView | undefined): AdmitDecision {
  return victim ? { admit: true, evict: victim.id } : { admit: false };
}

/** A socket's remote address as one key: an IPv4-mapped IPv6 address is its IPv4 address. */
export function peerAddress(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined) return '';
  return remoteAddress.startsWith('::ffff:') ? remoteAddress.slice('::ffff:'.length) : remoteAddress;
}

/** Whether the address is this machine's (loopback): exempt from the per-address connection cap. */
export function isLoopbackPeer(peer: string): boolean {
  return peer !== 'localhost' && isLoopbackHost(peer);
}

/**
 * Whose wrong tokens a request counts as: its socket's address, or, when a reverse proxy on
 * this machine forwarded it (a loopback peer with X-Real-IP, X-Forwarded-For or Forwarded), the
 * client address the proxy names: locking the proxy's own address out would lock out everyone
 * behind it. Only a proxy on this machine is believed (anyone else could write those headers).
 */
export function throttleKey(remoteAddress: string | undefined, headers: IncomingHttpHeaders): string {
  const peer = peerAddress(remoteAddress);
  if (!isLoopbackPeer(peer)) return peer;
  const real = single(headers['x-real-ip']);
  const forwardedFor = single(headers['x-forwarded-for'])?.split(',').at(-1);
  const forwarded = /for="?\[?([^\]";,]+)/i.exec(single(headers.forwarded)?.split(',').at(-1) ?? '')?.[1];
  const named = [real, forwardedFor, forwarded].map((a) => a?.trim()).find((a) => a && isIP(a) !== 0);
  return named === undefined ? peer : `${peerAddress(named)} via ${peer}`;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.at(-1) : value;
}

/**
 * The wrong-token throttle: `freeFailures` wrong tokens from an address are answered 401 as
 * usual; each one after them locks the address out for `baseLockoutMs`, doubling per further
 * wrong token up to `maxLockoutMs`. While locked out, no token from it is even compared (429,
 * Retry-After). A right token ends the streak; so does `forgetAfterMs` without a wrong one. At
 * the caps below one address tries about 300 tokens a day, against a token of ≥ 16 random
 * characters; a person who mistyped waits a second.
 */
export interface ThrottlePolicy {
  freeFailures: number;
  baseLockoutMs: number;
  maxLockoutMs: number;
  forgetAfterMs: number;
  /** Addresses remembered at most (the least recent are forgotten first): bounded memory. */
  maxTracked: number;
}

export const DEFAULT_THROTTLE_POLICY: ThrottlePolicy = {
  freeFailures: 5,
  baseLockoutMs: 1_000,
  maxLockoutMs: 5 * 60_000,
  forgetAfterMs: 15 * 60_000,
  maxTracked: 1_024,
};

/** One address's streak of wrong tokens. */
export interface ThrottleEntry {
  failures: number;
  /** Monotonic ms until which it is locked out (0: never was in this streak). */
  lockedUntilMs: number;
  lastFailureMs: number;
}

/** How long the address is still locked out, ms (0: it may try a token). */
export function lockedForMs(entry: ThrottleEntry | undefined, nowMs: number): number {
  return entry ? Math.max(0, entry.lockedUntilMs - nowMs) : 0;
}

/** Whether the streak is over (forgotten): nothing wrong for `forgetAfterMs`, and not locked. */
export function expired(entry: ThrottleEntry, nowMs: number, policy: ThrottlePolicy): boolean {
  return lockedForMs(entry, nowMs) === 0 && nowMs - entry.lastFailureMs >= policy.forgetAfterMs;
}

/**
 * The streak after one more wrong token (only counted while not locked out: refused ones are
 * never compared). `lockedMs` is the lockout it starts (0: still free); `firstLockout` says
 * this streak's first one (the moment to log, once).
 */
export function afterFailure(
  entry: ThrottleEntry | undefined,
  nowMs: number,
  policy: ThrottlePolicy,
): { entry: ThrottleEntry; lockedMs: number; firstLockout: boolean } {
  const current = entry && !expired(entry, nowMs, policy) ? entry : undefined;
  const failures = (current?.failures ?? 0) + 1;
  const over = failures - policy.freeFailures;
  const lockedMs = over <= 0 ? 0 : Math.min(policy.maxLockoutMs, policy.baseLockoutMs * 2 ** (over - 1));
  return {
    entry: { failures, lockedUntilMs: lockedMs > 0 ? nowMs + lockedMs : 0, lastFailureMs: nowMs },
    lockedMs,
    firstLockout: over === 1,
  };
}
