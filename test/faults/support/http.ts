import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { CliProcess } from '../../integration/helpers.js';

/**
 * The HTTP side of the fault scenarios (http.fault.ts): where the daemon's API listens, a raw
 * TCP client that sends exactly the bytes it is given (malformed requests no HTTP library
 * would send) and tells whether the server answered, closed or left it hanging, a plain
 * poller for the "normal client", and a database seeded with history as a year of running
 * leaves it (as test/bench/http/history.ts does).
 */

/** The API's base URL, from the daemon's `dashboard and API at …` line (it runs on port 0). */
export async function apiBase(run: CliProcess): Promise<{ base: string; port: number }> {
  const line = await run.waitForLine(/^dashboard and API at /, 30_000);
  const base = String(line.url).replace(/\/$/, '');
  return { base, port: Number(new URL(base).port) };
}

export interface RawOutcome {
  /** answered: a status line came; closed: the server closed without one; hung: neither in time. */
  outcome: 'answered' | 'closed' | 'hung';
  status?: number;
  /** Up to 16 KiB of the answer (status line, headers, body start). */
  head: string;
  ms: number;
}

export interface RawRequest {
  /** Written in order; a function is called with the socket once the chunks are written. */
  chunks: Array<string | Buffer>;
  /** Keep the socket open after the chunks (a body that never finishes). */
  thenWait?: boolean;
  timeoutMs?: number;
  /** The request was HEAD: an answer ends with its headers. */
  head?: boolean;
}

/**
 * Sends raw bytes to 127.0.0.1:`port` and resolves once a complete answer has come (then the
 * socket is destroyed: the request may have asked for keep-alive), the server closed the
 * connection, or `timeoutMs` passed (hung: the socket is destroyed by us).
 */
export function rawRequest(port: number, req: RawRequest): Promise<RawOutcome> {
  const startedAtMs = Date.now();
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (outcome: RawOutcome['outcome']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const head = received.subarray(0, 16_384).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
      resolve({
        outcome: status === undefined && outcome === 'answered' ? 'closed' : outcome,
        ...(status === undefined ? {} : { status: Number(status) }),
        head,
        ms: Date.now() - startedAtMs,
      });
    };
    const timer = setTimeout(
      () => finish(received.length > 0 ? 'answered' : 'hung'),
      req.timeoutMs ?? 15_000,
    );
    socket.on('data', (chunk: Buffer) => {
      if (received.length < 1 << 20) received = Buffer.concat([received, chunk]);
      if (complete(received, req.head === true)) finish('answered');
    });
    socket.on('close', () => finish(received.length > 0 ? 'answered' : 'closed'));
    // EPIPE / ECONNRESET while still writing a large body: the server answered or closed.
    socket.on('error', () => finish(received.length > 0 ? 'answered' : 'closed'));
    socket.on('connect', () => {
      for (const chunk of req.chunks) socket.write(chunk);
      if (!req.thenWait) socket.end();
    });
  });
}

/** Whether `bytes` hold a whole HTTP answer (headers, and the body its framing announces). */
function complete(bytes: Buffer, head: boolean): boolean {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const headers = bytes.subarray(0, end).toString('latin1');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(headers)?.[1] ?? 0);
  if (head || status === 204 || status === 304 || (status >= 100 && status < 200)) return true;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(headers)?.[1];
  if (length !== undefined) return bytes.length - end - 4 >= Number(length);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(headers)) return bytes.subarray(end).includes('\r\n0\r\n\r\n');
  return false; // read to the close
}

export interface PollResult {
  atMs: number;
  ok: boolean;
  /** Status, or the error code (ECONNRESET, timeout…). */
  what: string;
  ms: number;
}

/**
 * GET `url` every `everyMs` until stopped (each waits for the previous): a fresh connection per
 * request (`fresh`, as a new page or the CLI) or one kept alive (an open dashboard).
 */
export function poll(url: string, everyMs: number, fresh: boolean) {
  const results: PollResult[] = [];
  let running = true;
  const one = () =>
    new Promise<PollResult>((resolve) => {
      const atMs = Date.now();
      const done = (ok: boolean, what: string) => resolve({ atMs, ok, what, ms: Date.now() - atMs });
      const req = httpRequest(url, { agent: fresh ? false : keepAlive, timeout: 2_000 }, (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode === 200, String(res.statusCode)));
        res.on('error', () => done(false, 'aborted'));
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
      req.on('error', (error: NodeJS.ErrnoException) => done(false, error.code ?? error.message));
      req.end();
    });
  const loop = (async () => {
    while (running) {
      const startedAtMs = Date.now();
      results.push(await one());
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (Date.now() - startedAtMs))));
    }
  })();
  return {
    results,
    async stop(): Promise<PollResult[]> {
      running = false;
      await loop;
      return results;
    },
  };
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** One GET, its status and JSON body (undefined when not JSON), on a fresh connection. */
export function getJson(
  url: string,
  timeoutMs = 10_000,
): Promise<{ status: number; body: unknown; headers: Record<string, unknown>; ms: number }> {
  const startedAtMs = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers, ms: Date.now() - startedAtMs });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** One POST of a JSON body with the headers a well-behaved local client sends. */
export function postJson(base: string, path: string, body: unknown) {
  return rawRequest(Number(new URL(base).port), {
    chunks: [requestText('POST', path, { port: Number(new URL(base).port), body: JSON.stringify(body) })],
  });
}

/** A request's text: `Host: 127.0.0.1:<port>`, `Connection: close`, the headers given, the body. */
export function requestText(
  method: string,
  path: string,
  opts: { port: number; headers?: Record<string, string>; body?: string; host?: string | null },
): string {
  const headers: Record<string, string> = {
    ...(opts.host === null ? {} : { Host: opts.host ?? `127.0.0.1:${opts.port}` }),
    Connection: 'close',
    ...(opts.body === undefined
      ? {}
      : { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(opts.body)) }),
    ...opts.headers,
  };
  const lines = Object.entries(headers)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${opts.body ?? ''}`;
}
