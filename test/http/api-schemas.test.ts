/**
 * The OpenAPI document stays true: every route of the table with a documented response
 * (`doc.response`) is called on a running node and its JSON answer parsed with that zod schema
 * made strict (every object strict), so a field added to an answer without adding it to
 * src/operations/schemas.ts fails here. The event stream's frames likewise: `status` as Loop, `event`
 * as Event.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { z } from 'zod';
import type { ApiDeps } from '../../src/http/api-deps.js';
import { type ApiRoute, apiRoutes } from '../../src/http/routes.js';
import { Sessions } from '../../src/http/security.js';
import { EventStream } from '../../src/http/sse.js';
import { DashboardAssets } from '../../src/http/static.js';
import { eventView, type LoopView, loopView, streamEvents } from '../../src/operations/schemas.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { tempDir } from '../support/tmp.js';
import {
  type ApiTestNode,
  getJson,
  type JsonAnswer,
  parseStrictly,
  postJson,
  SseReader,
  startApiNode,
  strictly,
} from './support.js';

/** The route table as the server builds it (only its shapes are read: the deps are never called). */
function routeTable(): ApiRoute[] {
  const stream = new EventStream();
  after(() => stream.close());
  return apiRoutes({
    api: {} as ApiDeps,
    stream,
    assets: new DashboardAssets(tempDir({ after })),
    sessions: new Sessions(),
    token: undefined,
  });
}

const documented = routeTable().filter(
  (route): route is ApiRoute & { doc: { response: z.ZodType } } => route.doc?.response !== undefined,
);

/** Requests that make each documented route answer, with the statuses expected. */
const calls: Record<string, Array<{ call: (node: ApiTestNode) => Promise<JsonAnswer>; status: number }>> = {
  'GET /api/node': [{ call: (n) => getJson(n.base, '/api/node'), status: 200 }],
  'GET /api/health': [{ call: (n) => getJson(n.base, '/api/health'), status: 200 }],
  'GET /api/loops': [{ call: (n) => getJson(n.base, '/api/loops'), status: 200 }],
  'GET /api/loops/:loop': ['room', 'fermenter', 'greenhouse_humidity'].map((loop) => ({
    call: (n: ApiTestNode) => getJson(n.base, `/api/loops/${loop}`),
    status: 200,
  })),
  'GET /api/loops/:loop/history': [
    { call: (n) => getJson(n.base, '/api/loops/room/history'), status: 200 },
    { call: (n) => getJson(n.base, '/api/loops/room/history?maxPoints=3'), status: 200 },
  ],
  'GET /api/events': [{ call: (n) => getJson(n.base, '/api/events?limit=1000'), status: 200 }],
  // Needs alert channels (the demo has none: 404): parsed strictly in test/http/api-alerts.test.ts.
  'GET /api/alerts': [],
  // Needs a broker (this node has none: 404): parsed strictly in test/http/fleet.test.ts.
  'GET /api/fleet': [],
  'POST /api/loops/:loop': [
    {
      call: (n) => postJson(n.base, '/api/loops/room', { setpoint: 23, requestId: 'schema-1' }),
      status: 200,
    },
    {
      call: (n) => postJson(n.base, '/api/loops/room', { setpoint: 99, requestId: 'schema-2' }),
      status: 422,
    },
  ],
  // Nothing is latched on the demo's loops: the refusal is the answer there is to parse.
  'POST /api/loops/:loop/fault-reset': [
    { call: (n) => postJson(n.base, '/api/loops/room/fault-reset', ''), status: 422 },
  ],
  'POST /api/loops/:loop/autotune': [
    { call: (n) => postJson(n.base, '/api/loops/room/autotune', { requestId: 'schema-3' }), status: 200 },
    { call: (n) => postJson(n.base, '/api/loops/fermenter/autotune', {}), status: 422 },
  ],
  'POST /api/loops/:loop/tuning': [
    {
      call: (n) => {
        proposeTuning(n);
        return postJson(n.base, '/api/loops/room/tuning', { version: 'latest', requestId: 'schema-4' });
      },
      status: 200,
    },
    { call: (n) => postJson(n.base, '/api/loops/room/tuning', { version: 99 }), status: 422 },
  ],
  // The demo's loops have no presets or profiles: the refusals are the answers to parse here;
  // accepted ones in test/http/api-schedule.test.ts.
  'POST /api/loops/:loop/preset': [
    { call: (n) => postJson(n.base, '/api/loops/room/preset', { preset: 'eco' }), status: 422 },
    { call: (n) => postJson(n.base, '/api/loops/nowhere/preset', { preset: 'eco' }), status: 404 },
  ],
  'POST /api/loops/:loop/profile': [
    {
      call: (n) => postJson(n.base, '/api/loops/room/profile', { action: 'start', name: 'ale' }),
      status: 422,
    },
  ],
  // Needs alert channels (the demo has none: 404): parsed strictly in
  // test/alerts/alert-test-command.test.ts.
  'POST /api/alerts/test': [],
  'GET /api/loops/:loop/tunings': [
    { call: (n) => getJson(n.base, '/api/loops/fermenter/tunings'), status: 200 },
    {
      call: (n) => {
        proposeTuning(n);
        return getJson(n.base, '/api/loops/room/tunings');
      },
      status: 200,
    },
  ],
};

/** A stored autotune result on room, with a model whose unknown standard error is NaN, and details. */
function proposeTuning(node: ApiTestNode): void {
  node.store.desired.recordTuning(
    'room',
    {
      gains: { kp: 0.7, tiS: 900, tdS: 30 },
      model: {
        gain: 20,
        timeConstantS: 3600,
        deadTimeS: 120,
        ambient: 10,
        standardError: { gain: 0.4, timeConstantS: Number.NaN, deadTimeS: 8 },
        rmsResidual: 0.03,
      },
      details: { cycles: 3, modulation: { band: 0.2 } },
    },
    { apply: false, source: 'autotune' },
  );
}

/** A node with something in every list: cycles, a write from HTTP, events with data. */
async function busyNode(t: { after(fn: () => void | Promise<void>): void }): Promise<ApiTestNode> {
  const node = await startApiNode(t);
  await node.clock.advance(60_000);
  assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 })).status, 200);
  await node.clock.advance(60_000);
  return node;
}

describe('given a running node, every documented answer parses with its schema made strict', () => {
  test('then every route with a documented response has requests here (a new route must be added)', () => {
    assert.deepEqual(
      documented.map((route) => `${route.method} ${route.path}`).sort(),
      Object.keys(calls).sort(),
    );
  });

  for (const route of documented) {
    const key = `${route.method} ${route.path}`;
    test(`${key}: the answer has exactly the documented fields`, async (t) => {
      const node = await busyNode(t);
      for (const [i, { call, status }] of (calls[key] ?? []).entries()) {
        const answer = await call(node);
        assert.equal(answer.status, status, `${key} call ${i + 1}: ${JSON.stringify(answer.body)}`);
        parseStrictly(route.doc.response, answer.body, `${key} call ${i + 1}`);
      }
    });
  }

  test('GET /api/health while loops are silent (503): the body is still a strict Health, silentLoops filled', async (t) => {
    const gateClock = new ManualClock(Date.UTC(2026, 0, 1));
    const node = await startApiNode(t, { gateClock });
    await gateClock.advance(100_000);
    const answer = await getJson<{ silentLoops: unknown[] }>(node.base, '/api/health');
    assert.equal(answer.status, 503);
    assert.equal(answer.body.silentLoops.length, 3);
    const health = documented.find((r) => r.path === '/api/health')!;
    parseStrictly(health.doc.response, answer.body, 'GET /api/health (503)');
  });

  test('then a field the schema does not list fails the strict parse, at any depth (and the plain parse lets it through)', async (t) => {
    const node = await busyNode(t);
    const { body } = await getJson<LoopView>(node.base, '/api/loops/room');
    const added: Array<[string, (copy: LoopView) => void]> = [
      ['top level', (c) => Object.assign(c, { extra: 1 })],
      ['limits', (c) => Object.assign(c.limits, { extra: 1 })],
      ['desired', (c) => Object.assign(c.desired, { extra: 1 })],
      ['an actuator', (c) => Object.assign(Object.values(c.actuators)[0]!, { extra: 1 })],
      ['a condition', (c) => Object.assign(c.conditions[0]!, { extra: 1 })],
    ];
    for (const [where, add] of added) {
      const copy = structuredClone(body);
      add(copy);
      assert.equal(loopView.safeParse(copy).success, true, `plain parse, ${where}`);
      assert.equal(strictly(loopView).safeParse(copy).success, false, `strict parse, ${where}`);
    }
    parseStrictly(loopView, body, 'the answer itself');
  });

  test('GET /api/stream: every status frame is a strict Loop, every event frame a strict Event', async (t) => {
    const node = await busyNode(t);
    const stream = await SseReader.open(`${node.base}/api/stream`);
    t.after(() => stream.close());
    assert.equal(stream.response.status, 200);
    await stream.next('status', (loop: { loop: string }) => loop.loop === 'greenhouse_humidity');
    assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 24 })).status, 200);
    await node.clock.advance(60_000);
    await stream.next('event', (event: { kind: string }) => event.kind === 'setpoint-changed');
    await stream.next('status', (loop: { setpoint: number }) => loop.setpoint === 24);
    assert.deepEqual(Object.keys(streamEvents).sort(), ['event', 'status']);
    const statuses = stream.json('status');
    const events = stream.json('event');
    assert.ok(
      statuses.length >= 4 && events.length >= 1,
      `${statuses.length} statuses, ${events.length} events`,
    );
    for (const [i, frame] of statuses.entries()) parseStrictly(loopView, frame, `status frame ${i + 1}`);
    for (const [i, frame] of events.entries()) parseStrictly(eventView, frame, `event frame ${i + 1}`);
  });
});
