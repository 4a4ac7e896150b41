/**
 * A stand-in for the daemon's HTTP API (docs: /work/notes/API.md, shapes: src/http/schemas.ts)
 * for the CLI's tests: a node:http server on a free loopback port that records every request
 * (method, path with query, headers, body) and answers what the test's `answer` returns. The
 * canned bodies are checked against the API's schemas, so a test cannot pass on a shape the
 * real server would never send.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type EventView, eventView, type LoopView, loopView } from '../../src/http/schemas.js';
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
  requests: RecordedRequest[];
}

export async function fakeApi(
  t: HasAfter,
  answer: (request: RecordedRequest) => FakeAnswer,
): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
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
      requests.push(recorded);
      const reply = answer(recorded);
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, requests };
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
