import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ApiDeps } from './api-deps.js';
import { AuthThrottle, ConnectionGuard } from './guards.js';
import { MAX_CONNECTIONS, peerAddress, throttleKey } from './lan-policy.js';
import { HttpError, readBody, sendJson } from './respond.js';
import { matchRoute } from './router.js';
import { type ApiRoute, apiRoutes } from './routes.js';
import { type Access, checkAccess, checkHost, checkWrite, fromThisMachine, Sessions } from './security.js';
import type { HttpSettings } from './settings.js';
import { EventStream } from './sse.js';
import { DashboardAssets } from './static.js';
import { toEventView, toLoopView } from './views.js';

/**
 * Connections kept open at once (streams included), at most 16 from one address but loopback
 * (lan-policy.ts). A newcomer beyond a limit closes a connection of the busiest address (its
 * own, at its own limit): its slowest unfinished request, else an answer it does not read, else
 * its longest idle keep-alive. So no client, and no address, can keep a real one out.
 */
export { MAX_CONNECTIONS };

/** Whether the API is up, for the loops' ApiServing condition and the log. */
export type ServingState =
  | { serving: true; url: string }
  | { serving: false; reason: 'PortInUse' | 'NoPermission' | 'Failed'; message: string };

export interface HttpServerOptions {
  settings: HttpSettings;
  api: ApiDeps;
  logger: Logger;
  /** A listen that failed (port taken) is tried again this often, ms. Default 30 000. */
  retryEveryMs?: number;
  /** Told when the server starts serving or fails to (the node shows it on every loop). */
  onServing?: (state: ServingState) => void;
  /** The dashboard's files (tests pass a fixture folder). */
  assets?: DashboardAssets;
  /** The guards' monotonic clock (tests move it); default performance.now: never the scaled clock. */
  monotonicMs?: () => number;
}

/**
 * The local HTTP API, event stream, metrics and dashboard (docs/dashboard.md), on
 * node's own http module: a dozen routes need no framework, and nothing is added to what a Pi
 * loads (src/http/routes.ts has the table). It never stops regulation: a port that is taken is
 * logged, shown on every loop (ApiServing False) and retried; a handler that throws answers 500.
 */
export class HttpServer {
  private readonly server: Server;
  private readonly stream = new EventStream();
  private readonly sessions = new Sessions();
  /** Connections per address; wrong tokens per address (lan-policy.ts). */
  readonly connections: ConnectionGuard;
  readonly throttle: AuthThrottle;
  private readonly routes: ApiRoute[];
  private readonly unsubscribe: Array<() => void> = [];
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastFailure: string | undefined;

  constructor(private readonly opts: HttpServerOptions) {
    const { api, settings } = opts;
    this.connections = new ConnectionGuard(undefined, opts.monotonicMs);
    this.throttle = new AuthThrottle(
      (key, failures, lockedMs) =>
        opts.logger.warn(
          { peer: key, failures },
          `${failures} wrong API tokens from ${key}: its token checks are refused (429) for ${lockedMs / 1000} s, doubling with each further wrong one; logged once per streak, counted in /metrics`,
        ),
      undefined,
      opts.monotonicMs,
    );
    this.routes = apiRoutes({
      api,
      stream: this.stream,
      assets: opts.assets ?? new DashboardAssets(),
      sessions: this.sessions,
      token: settings.token,
      throttle: this.throttle,
    });
    // Timeouts are enforced every connectionsCheckingInterval (default 30 s): 1 s keeps a
    // slow client from holding a socket for long; a cap keeps many from holding memory.
    this.server = createServer(
      { connectionsCheckingInterval: 1_000 },
      (req, res) => void this.handle(req, res),
    );
    this.server.requestTimeout = 10_000;
    this.server.headersTimeout = 5_000;
    this.server.keepAliveTimeout = 5_000;
    this.server.maxHeadersCount = 50;
    // A hard bound above the soft one: the guard closes the excess.
    this.server.maxConnections = 2 * MAX_CONNECTIONS;
    this.server.on('connection', (socket) => this.connections.admit(socket));
    // First, so the guard sees the request before its handler can answer it.
    this.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) =>
      this.connections.request(req, res),
    );
    this.server.on('clientError', (_error, socket) => socket.destroy());
  }

  /** Where it listens, once it does (the port is the one given, or the one picked for port 0). */
  get url(): string | undefined {
    const address = this.server.address();
    if (!address || typeof address === 'string') return undefined;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** Listens; resolves with the outcome, never rejects (a failure is retried in the background). */
  async start(): Promise<ServingState> {
    const { api } = this.opts;
    this.unsubscribe.push(
      api.onStatus((status) => {
        if (this.stream.size === 0) return;
        const loop = api.config().loops[status.loop];
        const desired = api.desired().find((row) => row.loop === status.loop);
        if (loop) this.stream.status(toLoopView(status.loop, loop, status, desired));
      }),
      api.onEvent((event) => {
        if (this.stream.size > 0) this.stream.event(toEventView(event));
      }),
    );
    return this.listen();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.stream.close();
    // A listen still in progress (a host name being looked up) is not waited for: the loops'
    // safe state comes next. It closes itself as soon as it completes (see listen).
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private listen(): Promise<ServingState> {
    const { settings, logger } = this.opts;
    return new Promise((resolve) => {
      const onError = (error: NodeJS.ErrnoException) => {
        this.server.off('listening', onListening);
        const state = failure(error, settings);
        const retryS = (this.opts.retryEveryMs ?? 30_000) / 1000;
        // Once per kind of failure, not every retry.
        if (this.lastFailure !== state.message) {
          logger.error(
            { code: error.code },
            `${state.message}; regulation goes on; retrying every ${retryS} s`,
          );
        }
        this.lastFailure = state.message;
        this.opts.onServing?.(state);
        if (!this.stopped) {
          this.retry = setTimeout(() => void this.listen(), this.opts.retryEveryMs ?? 30_000);
          this.retry.unref();
        }
        resolve(state);
      };
      const onListening = () => {
        this.server.off('error', onError);
        if (this.stopped) {
          // Stopped while this listen was in progress: nothing must listen after a stop.
          this.server.close();
          resolve({ serving: false, reason: 'Failed', message: 'HTTP API stopped' });
          return;
        }
        this.server.on('error', (error) => logger.error({ err: error }, 'HTTP server error'));
        const state: ServingState = { serving: true, url: this.url ?? '' };
        this.lastFailure = undefined;
        logger.info({ url: state.url }, `dashboard and API at ${state.url}`);
        this.opts.onServing?.(state);
        resolve(state);
      };
      this.server.once('error', onError);
      this.server.once('listening', onListening);
      this.server.listen(settings.port, settings.host);
    });
  }

  /**
   * Whether the request may go on (else throws 401, or 429 while its address is locked out by
   * the wrong-token throttle), and whether it proved who it is. A wrong token is counted
   * against its address; a right one ends the address's streak. This machine needs no token,
   * so it is never counted nor locked out.
   */
  private access(req: IncomingMessage, route: ApiRoute, key: string, local: boolean): boolean {
    const { settings } = this.opts;
    const needsCheck = !(settings.loopbackOnly || local);
    const lockedMs = needsCheck ? this.throttle.lockedForMs(key) : 0;
    const access = route.write ? 'write' : 'read';
    const verdict = checkAccess(req.headers, settings, this.sessions, access, local, lockedMs);
    if (verdict.wrongToken) this.throttle.failure(key);
    else if (verdict.ok && verdict.trusted && needsCheck && lockedMs === 0) this.throttle.success(key);
    if (!verdict.ok && verdict.status === 429) this.throttle.throttled++;
    if (!verdict.ok) throw refusal(verdict);
    return verdict.trusted;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.route(req, res);
    } catch (error) {
      if (error instanceof HttpError) {
        if (!res.headersSent) sendJson(res, error.status, { error: error.message }, error.headers);
        else res.end();
        return;
      }
      this.opts.logger.error({ err: error, url: req.url?.slice(0, 200) }, 'HTTP handler failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error (logged)' });
      else res.destroy();
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { settings } = this.opts;
    const host = checkHost(req.headers.host, settings);
    if (!host.ok) throw new HttpError(host.status, host.error);
    const url = new URL(req.url ?? '/', 'http://homeostat.invalid');
    const match = matchRoute(this.routes, req.method ?? 'GET', url.pathname);
    if (!match.found) {
      const allow = match.status === 405 ? { Allow: match.allowed.join(', ') } : undefined;
      throw new HttpError(match.status, match.status === 405 ? 'method not allowed' : 'not found', allow);
    }
    const { route, params } = match;
    const peer = peerAddress(req.socket.remoteAddress);
    const key = throttleKey(req.socket.remoteAddress, req.headers);
    const local = fromThisMachine(req.socket.remoteAddress, req.headers);
    const trusted = route.open ? local || settings.loopbackOnly : this.access(req, route, key, local);
    if (route.write) {
      const write = checkWrite(req.headers);
      if (!write.ok) throw new HttpError(write.status, write.error);
    }
    const body = route.write ? await readBody(req) : Buffer.alloc(0);
    const answer = await route.handle({ req, res, url, params, body, peer, throttleKey: key, trusted });
    if (answer === 'handled') return;
    if (answer.body === undefined) {
      res.writeHead(answer.status ?? 204, { 'Cache-Control': 'no-store', ...answer.headers });
      res.end();
      return;
    }
    sendJson(res, answer.status ?? 200, answer.body, answer.headers);
  }
}

/** A refused request as its answer: 401 asks for the token, 429 says when to try again. */
function refusal(verdict: Extract<Access, { ok: false }>): HttpError {
  const headers: Record<string, string> =
    verdict.retryAfterS === undefined
      ? { 'WWW-Authenticate': 'Bearer' }
      : { 'Retry-After': String(verdict.retryAfterS) };
  return new HttpError(verdict.status, verdict.error, headers);
}

function failure(
  error: NodeJS.ErrnoException,
  settings: HttpSettings,
): Extract<ServingState, { serving: false }> {
  const where = `${settings.host}:${settings.port}`;
  if (error.code === 'EADDRINUSE') {
    return {
      serving: false,
      reason: 'PortInUse',
      message: `HTTP API not started: ${where} is already in use (EADDRINUSE): another program (or homeostat) listens there; set http.port to a free port`,
    };
  }
  if (error.code === 'EACCES') {
    return {
      serving: false,
      reason: 'NoPermission',
      message: `HTTP API not started: no permission to listen on ${where} (EACCES): use a port above 1023`,
    };
  }
  return {
    serving: false,
    reason: 'Failed',
    message: `HTTP API not started on ${where}: ${error.message}`,
  };
}
