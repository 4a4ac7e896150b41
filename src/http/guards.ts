import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  admitConnection,
  afterFailure,
  type ConnectionLimits,
  type ConnectionPhase,
  type ConnectionView,
  DEFAULT_CONNECTION_LIMITS,
  DEFAULT_THROTTLE_POLICY,
  expired,
  isLoopbackPeer,
  lockedForMs,
  peerAddress,
  type ThrottleEntry,
  type ThrottlePolicy,
} from './lan-policy.js';

/** The monotonic clock of the guards (real time whatever `--speed` says). */
export const monotonicMs = (): number => performance.now();

interface Tracked {
  id: number;
  socket: Socket;
  peer: string;
  sinceMs: number;
  req?: IncomingMessage;
  res?: ServerResponse;
}

/**
 * The connection pool of the HTTP server, per remote address (lan-policy.ts admitConnection
 * decides; this keeps the sockets and what each is doing). Nothing per request but a few
 * fields: the state is read only when a newcomer finds the pool or its address full.
 */
export class ConnectionGuard {
  private readonly tracked = new Map<Socket, Tracked>();
  private nextId = 1;
  /** Connections closed to make room for a newcomer, and newcomers refused, since start. */
  evicted = 0;
  refused = 0;

  constructor(
    private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
    private readonly nowMs: () => number = monotonicMs,
  ) {}

  get size(): number {
    return this.tracked.size;
  }

  /** A new connection: admitted (closing another first if the policy says so) or closed. */
  admit(socket: Socket): void {
    const peer = peerAddress(socket.remoteAddress);
    const open = this.tracked.size;
    const own = this.countFrom(peer, open < this.limits.maxConnections);
    if (open < this.limits.maxConnections && (own < this.limits.maxPerPeer || isLoopbackPeer(peer))) {
      this.track(socket, peer);
      return;
    }
    const decision = admitConnection(this.views(), peer, this.limits, isLoopbackPeer(peer));
    if (!decision.admit) {
      this.refused++;
      socket.destroy();
      return;
    }
    if (decision.evict !== undefined) {
      for (const t of this.tracked.values()) {
        if (t.id !== decision.evict) continue;
        this.evicted++;
        this.tracked.delete(t.socket);
        t.socket.destroy();
        break;
      }
    }
    this.track(socket, peer);
  }

  /** A request came on a tracked connection (its head is in). */
  request(req: IncomingMessage, res: ServerResponse): void {
    const t = this.tracked.get(req.socket);
    if (!t) return;
    Object.assign(t, { req, res, sinceMs: this.nowMs() });
    res.once('finish', () => {
      if (t.res === res) t.sinceMs = this.nowMs();
    });
  }

  /** Every tracked connection as the policy sees it. */
  views(): ConnectionView[] {
    return [...this.tracked.values()].map((t) => ({
      id: t.id,
      peer: t.peer,
      phase: phaseOf(t),
      sinceMs: t.sinceMs,
    }));
  }

  private track(socket: Socket, peer: string): void {
    const t: Tracked = { id: this.nextId++, socket, peer, sinceMs: this.nowMs() };
    this.tracked.set(socket, t);
    socket.once('close', () => {
      if (this.tracked.get(socket) === t) this.tracked.delete(socket);
    });
  }

  /** Connections from `peer`; not counted (0) when it cannot matter (a full pool is decided anyway, loopback has no cap). */
  private countFrom(peer: string, needed: boolean): number {
    if (!needed || isLoopbackPeer(peer)) return 0;
    let count = 0;
    for (const t of this.tracked.values()) if (t.peer === peer) count++;
    return count;
  }
}

function phaseOf(t: Tracked): ConnectionPhase {
  const { req, res } = t;
  if (!req || !res) return 'headers';
  if (!req.complete) return 'body';
  if (res.writableFinished) return 'idle';
  if (res.writableEnded) return 'draining';
  return 'active';
}

/**
 * The wrong-token throttle of lan-policy.ts over a map of addresses (bounded: the least recent
 * are forgotten first), with the figures /metrics shows. Refusing costs a map lookup: no
 * timer, no socket held, nothing an attacker can multiply.
 */
export class AuthThrottle {
  private readonly entries = new Map<string, ThrottleEntry>();
  /** Wrong tokens since start (counted ones: those compared and refused 401). */
  failures = 0;
  /** Requests refused 429 because their address was locked out, since start (counted by who answers). */
  throttled = 0;

  constructor(
    private readonly onFirstLockout: (key: string, failures: number, lockedMs: number) => void = () => {},
    private readonly policy: ThrottlePolicy = DEFAULT_THROTTLE_POLICY,
    private readonly nowMs: () => number = monotonicMs,
  ) {}

  /** How long `key` is still locked out, ms (0: its token may be compared). */
  lockedForMs(key: string): number {
    return lockedForMs(this.entries.get(key), this.nowMs());
  }

  /** A wrong token from `key`; returns the lockout it starts, ms (0: none yet). */
  failure(key: string): number {
    const nowMs = this.nowMs();
    const next = afterFailure(this.entries.get(key), nowMs, this.policy);
    this.failures++;
    // Re-inserted: the map's order is then least recent first.
    this.entries.delete(key);
    this.entries.set(key, next.entry);
    this.prune(nowMs);
    if (next.firstLockout) this.onFirstLockout(key, next.entry.failures, next.lockedMs);
    return next.lockedMs;
  }

  /** The right token from `key`: its streak ends. */
  success(key: string): void {
    this.entries.delete(key);
  }

  /** Addresses locked out now. */
  lockedOut(): number {
    const nowMs = this.nowMs();
    let count = 0;
    for (const entry of this.entries.values()) if (lockedForMs(entry, nowMs) > 0) count++;
    return count;
  }

  /** Over the bound, streaks that are over go first, then the least recent. */
  private prune(nowMs: number): void {
    if (this.entries.size <= this.policy.maxTracked) return;
    for (const [key, entry] of this.entries) if (expired(entry, nowMs, this.policy)) this.entries.delete(key);
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.policy.maxTracked) break;
      this.entries.delete(key);
    }
  }
}
