/**
 * The floor under the API's read figures: a bare node:http server in the same process that
 * answers each path with the exact bytes the API answered once (captured beforehand), with no
 * routing, checks, views or serialization. Timed in alternation with the API (A, B, A, B…) on
 * its own kept-alive connection, so both see the same machine load and the same event-loop
 * stalls of the regulation; the difference is what the API's own work costs.
 */
import { createServer } from 'node:http';

export interface BareServer {
  url: string;
  /** Serves `body` (with `type`) at `path` from now on. */
  set(path: string, type: string, body: Buffer): void;
  close(): Promise<void>;
}

export function startBareServer(): Promise<BareServer> {
  const bodies = new Map<string, { type: string; body: Buffer }>();
  const server = createServer((req, res) => {
    const found = bodies.get(req.url ?? '');
    if (!found) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': found.type, 'Content-Length': String(found.body.byteLength) });
    res.end(found.body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        set: (path, type, body) => void bodies.set(path, { type, body }),
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
