/**
 * GET /api/stream on a real node (demo config, ManualClock), read with fetch's body stream:
 * the snapshot of every loop on connect, then an `event` frame for each recorded event and a
 * `status` frame after each cycle that changed something; `?loop=` keeps one loop's frames.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { EventView, LoopView } from '../../src/operations/schemas.js';
import { type ApiTestNode, getJson, postJson, SseReader, startApiNode, until } from './support.js';

async function openStream(t: TestContext, node: ApiTestNode, query = ''): Promise<SseReader> {
  const stream = await SseReader.open(`${node.base}/api/stream${query}`);
  t.after(() => stream.close());
  assert.equal(stream.response.status, 200);
  return stream;
}

describe('given a node serving the API, and a client on /api/stream', () => {
  test('then the answer is an unbuffered event stream: retry 3000, then the status of every loop as GET /api/loops shows it', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const stream = await openStream(t, node);
    assert.equal(stream.response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(stream.response.headers.get('cache-control'), 'no-store');
    assert.equal(stream.response.headers.get('x-accel-buffering'), 'no');
    await stream.next<LoopView>('status', (loop) => loop.loop === 'greenhouse_humidity');
    assert.equal(stream.retryMs, 3000);
    const { body } = await getJson<{ loops: LoopView[] }>(node.base, '/api/loops');
    assert.deepEqual(stream.json('status'), body.loops);
  });

  test('when a setpoint is POSTed: an event frame setpoint-changed from http, then, in the cycle the write triggers, a status frame with the new setpoint reconciled', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const stream = await openStream(t, node);
    await stream.next<LoopView>('status', (loop) => loop.loop === 'greenhouse_humidity');
    const write = await postJson<{ generation: number }>(node.base, '/api/loops/room', { setpoint: 22 });
    assert.equal(write.status, 200);
    const event = await stream.next<EventView>('event', (e) => e.kind === 'setpoint-changed');
    assert.deepEqual(
      [event.loop, event.source, event.data],
      ['room', 'http', { from: 20, to: 22, generation: write.body.generation }],
    );
    // The write asked for a cycle now: it runs at this instant of the clock, no resync needed.
    await node.clock.advance(0);
    const status = await stream.next<LoopView>(
      'status',
      (loop) => loop.loop === 'room' && loop.setpoint === 22,
    );
    assert.deepEqual(
      [status.generation, status.observedGeneration, status.desired.setpointSource],
      [write.body.generation, write.body.generation, 'http'],
    );
    assert.equal(status.updatedAt, new Date(node.clock.nowMs()).toISOString());
  });

  test('given ?loop=room: the snapshot and the frames of room only', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const stream = await openStream(t, node, '?loop=room');
    await stream.next('status');
    assert.deepEqual(
      stream.json<LoopView>('status').map((l) => l.loop),
      ['room'],
    );
    // Frames arrive in order on one connection: once room's event is in, fermenter's (sent
    // before it) would be too.
    assert.equal((await postJson(node.base, '/api/loops/fermenter', { setpoint: 19 })).status, 200);
    assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 })).status, 200);
    await node.clock.advance(0);
    await stream.next<LoopView>('status', (loop) => loop.setpoint === 22);
    await stream.next<EventView>('event', (e) => e.kind === 'setpoint-changed');
    const loops = [
      ...stream.json<LoopView>('status').map((l) => l.loop),
      ...stream.json<EventView>('event').map((e) => e.loop),
    ];
    assert.deepEqual(new Set(loops), new Set(['room']));
  });

  test('given 40 HEAD requests on the stream (they send no body), then none takes a slot: a page still gets its stream', async (t) => {
    const node = await startApiNode(t);
    for (let i = 0; i < 40; i++) {
      const head = await fetch(`${node.base}/api/stream`, { method: 'HEAD' });
      assert.equal(head.status, 200);
    }
    await openStream(t, node);
  });

  test('when the node stops: the stream ends', async (t) => {
    const node = await startApiNode(t);
    const stream = await openStream(t, node);
    await stream.next('status');
    await node.stop();
    await until(() => stream.done, 'the end of the stream');
  });
});
