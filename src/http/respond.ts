import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';

/** Request bodies larger than this are refused (413): every valid write is far smaller. */
export const MAX_BODY_BYTES = 4096;

/** An answer the handler chose to give instead of a result (an HTTP error with its reason). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Headers every answer carries: no sniffing, no framing (clickjacking), no referrer leaks. */
export const BASE_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

/** JSON answers at least this long are gzipped when the client takes it (history, all loops). */
const GZIP_MIN_BYTES = 1024;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = Buffer.from(JSON.stringify(body));
  // A phone on Wi-Fi loads a 6-hour history of three loops: ~300 kB of JSON, ~40 kB gzipped.
  const gzip = text.byteLength >= GZIP_MIN_BYTES && acceptsGzip(res.req?.headers['accept-encoding']);
  const sent = gzip ? gzipSync(text) : text;
  res.writeHead(status, {
    ...BASE_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': sent.byteLength,
    'Cache-Control': 'no-store',
    Vary: 'Accept-Encoding',
    ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
    ...headers,
  });
  res.end(sent);
}
/** Whether Accept-Encoding takes gzip (named with a q above 0: `gzip;q=0` refuses it). */
export function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((entry) => {
    const [coding, ...params] = entry.trim().split(';');
    const q = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    return coding?.trim().toLowerCase() === 'gzip' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** The request body, at most MAX_BODY_BYTES (else HttpError 413, the rest unread). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    // A client gone before its body ended (or a connection closed to make room for another
    // address's: src/http/guards.ts) is no handler failure: answered (to nobody) 400, not logged.
    const aborted = () => reject(new HttpError(400, 'the request ended before its body did'));
    req.on('error', aborted);
    req.on('close', () => {
      if (!req.complete) aborted();
    });
  });
}

function tooLarge(): HttpError {
  return new HttpError(413, `request body larger than ${MAX_BODY_BYTES} bytes`);
}
