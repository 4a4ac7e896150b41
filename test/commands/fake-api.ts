/**
 * A stand-in for the daemon's HTTP API (shapes: src/operations/schemas.ts, served as GET /api/openapi.json)
 * for the CLI's tests: a node:http server on a free port (loopback, or a LAN address of this
 * machine) that records every request (method, path with query, headers, body) and answers what
 * the test's `answer` returns. GET /api/node (which the CLI asks first) answers a node id of the
 * test's. The canned bodies are checked against the API's schemas, so a test cannot pass on a
 * shape the real server would never send.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import {
  type EventView,
  eventView,
  type LoopView,
  loopView,
  type NodeResponse,
  nodeResponse,
} from '../../src/operations/schemas.js';
import type { HasAfter } from '../support/tmp.js';

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What to answer: a status and a JSON body, or `hang` (accept, never answer). */
export type FakeAnswer = { status: number; body: unknown } | 'hang';

export interface FakeApi {
  url: string;
  port: number;
  /** Every request but GET /api/node, in order. */
  requests: RecordedRequest[];
  /** The GET /api/node requests. */
  nodeRequests: RecordedRequest[];
}

export interface FakeApiOptions {
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /** GET /api/node: this node id (default `pi`, minimalSimConfigText's), or the test's answer. */
  node?: string | ((request: RecordedRequest) => FakeAnswer);
}

export async function fakeApi(
  t: HasAfter,
  answer: (request: RecordedRequest) => FakeAnswer,
  opts: FakeApiOptions = {},
): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const nodeRequests: RecordedRequest[] = [];
  const node = opts.node ?? 'pi';
  const answerNode = typeof node === 'string' ? () => ({ status: 200, body: sampleNode(node) }) : node;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const isNode = recorded.url.split('?')[0] === '/api/node';
      (isNode ? nodeRequests : requests).push(recorded);
      const reply = isNode ? answerNode(recorded) : answer(recorded);
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${hostInUrl}:${port}`, port, requests, nodeRequests };
}

/**
 * An IPv4 address of this machine off loopback (a LAN interface), to serve the fake API where
 * the CLI sends the token; undefined on a machine without one (those tests are skipped).
 */
export function lanAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    const found = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (found) return found.address;
  }
  return undefined;
}

/** GET /api/node's answer: node `id`, healthy. */
export function sampleNode(id: string): NodeResponse {
  const at = '2026-11-30T12:00:00.000Z';
  return nodeResponse.parse({
    node: { id, name: id, version: '0.0.0-test', startedAt: at, now: at, configGeneration: 1 },
    health: {
      ok: true,
      silentLoops: [],
      storage: { healthy: true, message: 'ok' },
      mqtt: { configured: false, connected: false },
    },
  });
}

/** A TCP listener standing in for the broker: it only records that someone connected. */
export async function recordingBroker(t: HasAfter): Promise<{ url: string; connections: number }> {
  const seen = { url: '', connections: 0 };
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    seen.connections++;
    sockets.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const address = server.address();
  seen.url = `mqtt://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return seen;
}

/** A Loop as GET /api/loops sends it: the room at 19.5 °C heating towards 21. */
export function sampleLoop(overrides: Partial<LoopView> = {}): LoopView {
  const at = '2026-11-30T12:00:00.000Z';
  return loopView.parse({
    loop: 'room',
    name: 'Living room',
    quantity: 'temperature',
    unit: '°C',
    limits: { min: 5, max: 30 },
    step: 0.5,
    modes: ['off', 'heat'],
    controller: 'pid',
    tuning: { active: 'config' },
    mode: 'heat',
    setpoint: 21,
    measured: 19.5,
    measuredAt: at,
    output: 0.43,
    action: 'heating',
    generation: 3,
    observedGeneration: 3,
    desired: { setpointSource: 'http', modeSource: 'file' },
    actuators: { room_heater: { wanted: 1, observed: 1 } },
    conditions: [
      {
        type: 'SensorHealthy',
        status: 'True',
        reason: 'Fresh',
        message: 'reading is fresh and plausible',
        lastTransitionAt: at,
        observedGeneration: 3,
      },
      {
        type: 'Converged',
        status: 'False',
        reason: 'Approaching',
        message: '1.5 below the setpoint',
        lastTransitionAt: at,
        observedGeneration: 3,
      },
    ],
    updatedAt: at,
    ...overrides,
  });
}

/** An Event as GET /api/events sends it. */
export function sampleEvent(overrides: Partial<EventView> = {}): EventView {
  return eventView.parse({
    at: '2026-11-30T11:59:00.000Z',
    loop: 'room',
    kind: 'setpoint-changed',
    source: 'http',
    message: 'setpoint 20 → 21',
    ...overrides,
  });
}

/** The query parameters of a recorded request. */
export function queryOf(request: RecordedRequest | undefined): Record<string, string> {
  assert.ok(request, 'a request was made');
  return Object.fromEntries(new URL(request.url, 'http://x').searchParams);
}
