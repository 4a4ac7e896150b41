import type { ServerResponse } from 'node:http';
import type { EventView, LoopView } from '../operations/schemas.js';
import { BASE_HEADERS } from './respond.js';

/**
 * Which slots a stream takes: `trusted` (this machine, the token or a session) or `public` (an
 * unauthenticated read that http.publicReads lets through). Public streams have a smaller pool
 * of their own, so anyone on the LAN can never take the owner's.
 */
export type StreamPool = 'trusted' | 'public';

export interface EventStreamOptions {
  /** Trusted streams open at once, at most; more are refused (503). Default 32. */
  maxClients?: number;
  /** Trusted streams open at once from one address, at most: one client cannot take every slot. Default 8. */
  maxClientsPerPeer?: number;
  /** Public streams (publicReads, no token) open at once, at most. Default 8. */
  maxPublicClients?: number;
  /** Public streams open at once from one address, at most. Default 2. */
  maxPublicClientsPerPeer?: number;
  /** A comment line this often keeps proxies and the browser from closing an idle stream, ms. */
  pingEveryMs?: number;
  /** A client that lets this much pile up unread is dropped, bytes (a stalled reader must not hold memory). */
  maxBufferedBytes?: number;
  /** An unchanged loop status is sent again this often, ms (a page sees the daemon is alive). */
  unchangedEveryMs?: number;
  /** Wall time for the pacing above (the daemon's clock may be simulated). */
  nowMs?: () => number;
}

interface Client {
  res: ServerResponse;
  loop: string | undefined;
  /** The remote address (counted against the per-address limit of its pool). */
  peer: string;
  pool: StreamPool;
}

/**
 * GET /api/stream: Server-Sent Events of loop statuses (`event: status`, a Loop) and recorded
 * events (`event: event`, an Event). A status is sent when it changed since the last one sent
 * for that loop (the time of the cycle aside), else once every `unchangedEveryMs`: 200 loops
 * cycling every second would otherwise stream 200 identical statuses a second.
 */
export class EventStream {
  private readonly clients = new Set<Client>();
  private readonly lastSent = new Map<string, { fingerprint: string; atMs: number }>();
  private readonly ping: NodeJS.Timeout;
  private readonly limits: Record<StreamPool, { total: number; perPeer: number }>;
  private readonly maxBufferedBytes: number;
  private readonly unchangedEveryMs: number;
  private readonly nowMs: () => number;

  constructor(opts: EventStreamOptions = {}) {
    this.limits = {
      trusted: { total: opts.maxClients ?? 32, perPeer: opts.maxClientsPerPeer ?? 8 },
      public: { total: opts.maxPublicClients ?? 8, perPeer: opts.maxPublicClientsPerPeer ?? 2 },
    };
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 1 << 20;
    this.unchangedEveryMs = opts.unchangedEveryMs ?? 10_000;
    this.nowMs = opts.nowMs ?? Date.now;
    this.ping = setInterval(() => this.broadcast(': ping\n\n', undefined), opts.pingEveryMs ?? 15_000);
    this.ping.unref();
  }

  get size(): number {
    return this.clients.size;
  }

  /**
   * Starts a stream on `res` with the loops' current statuses; false when every slot of its
   * pool, or every slot of `peer` (its remote address) in it, is taken (answer 503).
   */
  open(
    res: ServerResponse,
    loop: string | undefined,
    snapshot: readonly LoopView[],
    peer = '',
    pool: StreamPool = 'trusted',
  ): boolean {
    let inPool = 0;
    let fromPeer = 0;
    for (const client of this.clients) {
      if (client.pool !== pool) continue;
      inPool++;
      if (client.peer === peer) fromPeer++;
    }
    if (inPool >= this.limits[pool].total || fromPeer >= this.limits[pool].perPeer) return false;
    res.writeHead(200, {
      ...BASE_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    const client: Client = { res, loop, peer, pool };
    this.clients.add(client);
    res.on('close', () => this.clients.delete(client));
    this.send(client, 'retry: 3000\n\n');
    for (const view of snapshot) if (!loop || view.loop === loop) this.send(client, frame('status', view));
    return true;
  }

  /** A loop's status after a cycle: streamed when it changed (see the class comment). */
  status(view: LoopView): void {
    const { updatedAt: _updatedAt, ...rest } = view;
    const fingerprint = JSON.stringify(rest);
    const nowMs = this.nowMs();
    const last = this.lastSent.get(view.loop);
    if (last && last.fingerprint === fingerprint && nowMs - last.atMs < this.unchangedEveryMs) return;
    this.lastSent.set(view.loop, { fingerprint, atMs: nowMs });
    this.broadcast(frame('status', view), view.loop);
  }

  event(view: EventView): void {
    this.broadcast(frame('event', view), view.loop ?? undefined);
  }

  /** A removed loop: its pacing is forgotten. */
  forget(loop: string): void {
    this.lastSent.delete(loop);
  }

  /** Ends every stream (the server stops). */
  close(): void {
    clearInterval(this.ping);
    for (const client of this.clients) client.res.end();
    this.clients.clear();
  }

  private broadcast(text: string, loop: string | undefined): void {
    for (const client of this.clients) {
      // A loop's frames go to streams of every loop or of that loop; node-wide ones to all.
      if (client.loop && loop && client.loop !== loop) continue;
      this.send(client, text);
    }
  }

  private send(client: Client, text: string): void {
    if (client.res.writableLength > this.maxBufferedBytes) {
      this.clients.delete(client);
      client.res.destroy();
      return;
    }
    client.res.write(text);
  }
}

/** One SSE frame: JSON has no raw newlines, so `data:` is one line. */
function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
