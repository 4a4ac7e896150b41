/**
 * A loopback HTTP server that answers as a notification service would (ntfy, Telegram's Bot API,
 * a webhook receiver): it records every request and answers from a script, then 200. Not a test
 * file itself.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedAnswer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Never answer (a server that hangs). */
  hang?: boolean;
}

export interface FakeService {
  url: string;
  requests: RecordedRequest[];
  /** Answers for the next requests, in order (then 200 `okBody`). */
  script: ScriptedAnswer[];
  /** Resolves once `count` requests arrived. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

/** `port`: a fixed one (a config names it before the server runs); default a free one. */
export async function startFakeService(okBody = '{"ok":true}', port = 0): Promise<FakeService> {
  const requests: RecordedRequest[] = [];
  const script: ScriptedAnswer[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const answer = script.shift() ?? { status: 200, body: okBody };
      if (answer.hang) return;
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const listening = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${listening}`,
    requests,
    script,
    received: (count) =>
      requests.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
