import assert from 'node:assert/strict';
/**
 * Helpers of the HTTP API's integration tests (test/http/api*.test.ts): a real node (SQLite file
 * in a temp dir, simulated drivers, a ManualClock) serving the API on a free port, requests with
 * global fetch (node:http where fetch cannot: a Host header), a Server-Sent Events reader, zod
 * schemas made strict, and the Prometheus text parser. Not a test file itself.
 */
import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Node } from '../../src/node.js';
import type { ManualClock } from '../../src/runtime/manual-clock.js';
import { demoConfigText } from '../support/config.js';
import { startTestNode, type TestNode, type TestNodeOptions } from '../support/node.js';
import { type HasAfter, tempDir } from '../support/tmp.js';

export interface ApiTestNode extends TestNode {
  /** `http://127.0.0.1:<port>`: where the API answers. */
  base: string;
}

/**
 * Starts a node on `text` (default: the demo config, three simulated loops) with the API on a
 * free port of 127.0.0.1 unless `opts.http` says otherwise; stopped after the test.
 */
export async function startApiNode(
  t: HasAfter,
  opts: Omit<TestNodeOptions, 'clock'> & { text?: string; clock?: ManualClock } = {},
): Promise<ApiTestNode> {
  const dir = tempDir(t, 'homeostat-api-');
  const { text = demoConfigText(), ...rest } = opts;
  const node = await startTestNode<ManualClock>(text, path.join(dir, 'state.db'), {
    http: { port: 0 },
    ...rest,
  });
  t.after(() => node.stop());
  const url = await serving(node.node);
  // The listen address may be 0.0.0.0: connect through loopback.
  const base = `http://127.0.0.1:${new URL(url).port}`;
  return Object.assign(node, { base });
}

/** The node's API address once it listens (the node starts it without waiting). */
export function serving(node: Node): Promise<string> {
  return until(() => node.http?.url, 'the HTTP API to listen');
}

/**
 * Polls `probe` (every 5 ms of real time, at most 10 s) until it returns something other than
 * undefined or false; the wait is for I/O (a listen, a frame on a socket), never a timed
 * assertion.
 */
export async function until<T>(probe: () => T | undefined | false, what: string): Promise<T> {
  for (let tries = 0; tries < 2_000; tries++) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    await sleep(5);
  }
  throw new Error(`gave up waiting for ${what}`);
}

export interface JsonAnswer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** GET `path` (any method with `init`) and the JSON answer. */
export async function getJson<T = unknown>(
  base: string,
  pathAndQuery: string,
  init: RequestInit = {},
): Promise<JsonAnswer<T>> {
  const res = await fetch(base + pathAndQuery, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (text === '' ? undefined : JSON.parse(text)) as T,
  };
}

/** POST `body` (an object is sent as JSON, a string as is) with Content-Type application/json. */
export function postJson<T = unknown>(
  base: string,
  pathAndQuery: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer<T>> {
  return getJson<T>(base, pathAndQuery, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/**
 * A request with node:http, for what fetch will not send (it replaces a Host header with the
 * URL's): the status and the body's text.
 */
export function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** One Server-Sent Events frame: its `event:` name (`message` when none) and its `data:` text. */
export interface SseFrame {
  event: string;
  data: string;
}

/** GET /api/stream (or another SSE URL) read frame by frame from fetch's body stream. */
export class SseReader {
  readonly frames: SseFrame[] = [];
  /** The `retry:` value the server sent, ms. */
  retryMs: number | undefined;
  private ended = false;

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {}

  /** Opens the stream (`headers`: a cookie, a token); the answer's status is in `response`. */
  static async open(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const abort = new AbortController();
    const res = await fetch(url, {
      headers: { Accept: 'text/event-stream', ...headers },
      signal: abort.signal,
    });
    const reader = new SseReader(res, abort);
    if (res.ok && res.body) void reader.pump(res.body);
    return reader;
  }

  /** Whether the stream ended (the server closed it, or close() was called). */
  get done(): boolean {
    return this.ended;
  }

  /** Frames of `event` received so far, their data parsed as JSON. */
  json<T = unknown>(event: string): T[] {
    return this.frames.filter((f) => f.event === event).map((f) => JSON.parse(f.data) as T);
  }

  /** Waits until a frame of `event` whose parsed data satisfies `match` has arrived; returns it. */
  async next<T = unknown>(event: string, match: (data: T) => boolean = () => true): Promise<T> {
    return until(() => {
      const found = this.json<T>(event).find(match);
      if (found === undefined && this.ended) throw new Error(`stream ended before a matching ${event} frame`);
      return found;
    }, `an SSE ${event} frame`);
  }

  close(): void {
    this.abort.abort();
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
          this.frame(buffered.slice(0, end));
          buffered = buffered.slice(end + 2);
        }
      }
    } catch {
      // Aborted by close(), or the server ended the stream.
    } finally {
      this.ended = true;
    }
  }

  private frame(text: string): void {
    let event = 'message';
    const data: string[] = [];
    for (const line of text.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry') this.retryMs = Number(value);
    }
    if (data.length > 0) this.frames.push({ event, data: data.join('\n') });
  }
}

/**
 * `schema` with every object in it strict (z.strictObject: a key it does not list fails the
 * parse), through arrays, records, optional, nullable and unions. Any other container throws:
 * the helper never lets a nested object through unchecked.
 */
export function strictly(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(
      Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, inner]) => [key, strictly(inner)]),
    );
    return z.strictObject(shape);
  }
  if (schema instanceof z.ZodArray) return z.array(strictly(schema.element as z.ZodType));
  if (schema instanceof z.ZodOptional) return strictly(schema.unwrap() as z.ZodType).optional();
  if (schema instanceof z.ZodNullable) return strictly(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodRecord) {
    return z.record(schema.keyType as z.ZodString, strictly(schema.valueType as z.ZodType));
  }
  if (schema instanceof z.ZodUnion) {
    const options = (schema.options as z.ZodType[]).map(strictly);
    return z.union(options as [z.ZodType, z.ZodType, ...z.ZodType[]]);
  }
  const leaves = ['string', 'number', 'boolean', 'enum', 'literal', 'null', 'unknown', 'any'];
  const type = (schema as unknown as { def: { type: string } }).def.type;
  if (!leaves.includes(type)) throw new Error(`strictly(): no rule for zod type "${type}"`);
  return schema;
}

/** Parses `value` with `schema` made strict; throws with zod's issues (paths included). */
export function parseStrictly(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = strictly(schema).safeParse(value);
  if (!parsed.success) {
    throw new Error(`${what} does not match its schema:\n${z.prettifyError(parsed.error)}`);
  }
}

/** parse-prometheus-text-format is CommonJS without types: its output as prom2json shapes it. */
export interface PromSample {
  value?: string;
  labels?: Record<string, string>;
}
export interface PromFamily {
  name: string;
  help: string;
  type: string;
  metrics: PromSample[];
}
export const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => PromFamily[];

/** The samples of `name` whose labels include `labels`. */
export function promSamples(
  families: PromFamily[],
  name: string,
  labels: Record<string, string> = {},
): PromSample[] {
  return (families.find((f) => f.name === name)?.metrics ?? []).filter((sample) =>
    Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value),
  );
}

/** Debian's Chromium, which the browser test and the screenshot script drive (`.ci/run` installs it). */
export const CHROMIUM = '/usr/bin/chromium';
/** As root in a sandbox: no sandbox, no GPU; no background connections (the network is closed). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** What a browser test needs of a Playwright page (playwright-core's Page). */
interface PageLike {
  locator(selector: string): {
    locator(
      selector: string,
      options?: { hasText?: RegExp | string },
    ): {
      fill(value: string): Promise<void>;
      click(): Promise<void>;
      waitFor(): Promise<void>;
      textContent(): Promise<string | null>;
    };
  };
}

/**
 * Types `value` into `loop`'s setpoint field on the dashboard, submits it and waits for the
 * card's message; asserts it says accepted.
 */
export async function setSetpointThroughPage(page: PageLike, loop: string, value: string): Promise<void> {
  const card = page.locator(`[data-loop="${loop}"]`);
  await card.locator('[data-role="setpoint-input"]').fill(value);
  await card.locator('[data-role="setpoint-submit"]').click();
  await card.locator('[data-role="message"][data-state="ok"]').waitFor();
  const message = (await card.locator('[data-role="message"]').textContent()) ?? '';
  assert.match(message, new RegExp(`Setpoint ${value.replace('.', '\\.')}: accepted`));
}
