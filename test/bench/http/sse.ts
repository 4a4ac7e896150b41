/**
 * A minimal Server-Sent Events client for the benchmark (node:http, no EventSource): opens
 * GET /api/stream, splits the body into frames and hands each `status`/`event` frame, parsed,
 * to the listener with the process.hrtime at which its last chunk arrived.
 */
import { type ClientRequest, type IncomingMessage, request } from 'node:http';

export interface SseFrame {
  event: string;
  data: unknown;
  atNs: bigint;
}

export class SseClient {
  private buffer = '';
  private req: ClientRequest | undefined;
  private res: IncomingMessage | undefined;
  /** Frames (status and event) received so far. */
  frames = 0;

  constructor(
    private readonly url: string,
    private readonly onFrame: (frame: SseFrame) => void = () => {},
  ) {}

  /** Resolves once the server answered 200 and sent its `retry:` line (the stream is registered). */
  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = request(this.url, { headers: { Accept: 'text/event-stream' } }, (res) => {
        this.res = res;
        if (res.statusCode !== 200) {
          reject(new Error(`GET ${this.url}: HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        res.setEncoding('utf8');
        let opened = false;
        res.on('data', (chunk: string) => {
          const atNs = process.hrtime.bigint();
          this.buffer += chunk;
          if (!opened && this.buffer.includes('retry:')) {
            opened = true;
            resolve();
          }
          this.drain(atNs);
        });
        res.on('error', () => {});
      });
      req.on('error', reject);
      req.end();
      this.req = req;
    });
  }

  close(): void {
    this.res?.destroy();
    this.req?.destroy();
  }

  private drain(atNs: bigint): void {
    let end = this.buffer.indexOf('\n\n');
    while (end !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      end = this.buffer.indexOf('\n\n');
      let event = 'message';
      let data: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (data === undefined) continue;
      this.frames++;
      this.onFrame({ event, data: JSON.parse(data), atNs });
    }
  }
}
