import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { EventStream, type EventStreamOptions } from '../../src/http/sse.js';
import { toLoopView } from '../../src/http/views.js';
import type { EventView, LoopView } from '../../src/operations/schemas.js';
import { minimalSimConfig } from '../support/config.js';

/** A ServerResponse that records what is written; `writableLength` is set by the test. */
class FakeResponse extends EventEmitter {
  status: number | undefined;
  headers: Record<string, string> = {};
  writes: string[] = [];
  ended = false;
  destroyed = false;
  writableLength = 0;

  writeHead(status: number, headers: Record<string, string>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  write(text: string): boolean {
    this.writes.push(text);
    return true;
  }
  end(): this {
    this.ended = true;
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    return this;
  }
  /** The `event: status` frames written, as the loop views they carry. */
  statuses(): LoopView[] {
    return this.frames('status') as LoopView[];
  }
  frames(event: string): unknown[] {
    const prefix = `event: ${event}\ndata: `;
    return this.writes.filter((w) => w.startsWith(prefix)).map((w) => JSON.parse(w.slice(prefix.length)));
  }
}

const asRes = (fake: FakeResponse) => fake as unknown as ServerResponse;
const ROOM = minimalSimConfig().loops.room!;
const view = (loop: string, fields: Partial<LoopView> = {}): LoopView => ({
  ...toLoopView(loop, ROOM, undefined, undefined),
  updatedAt: '2026-11-30T12:00:00.000Z',
  ...fields,
});
const event = (loop: string | null): EventView => ({
  at: '2026-11-30T12:00:00.000Z',
  loop,
  kind: 'setpoint-changed',
  source: 'http',
  message: 'setpoint 22',
});

/** A stream on a clock the test moves, closed when the test ends. */
function stream(t: { after(fn: () => void): void }, opts: EventStreamOptions = {}) {
  const clock = { nowMs: 0 };
  const events = new EventStream({ unchangedEveryMs: 10_000, nowMs: () => clock.nowMs, ...opts });
  t.after(() => events.close());
  return { events, clock };
}

describe('EventStream', () => {
  test('given a stream opened, then 200 text/event-stream unbuffered, retry 3000, then a status per loop', (t) => {
    const { events } = stream(t);
    const res = new FakeResponse();
    assert.equal(events.open(asRes(res), undefined, [view('a'), view('b')]), true);
    assert.equal(res.status, 200);
    assert.equal(res.headers['Content-Type'], 'text/event-stream; charset=utf-8');
    assert.equal(res.headers['Cache-Control'], 'no-store');
    assert.equal(res.headers['X-Accel-Buffering'], 'no');
    assert.equal(res.writes[0], 'retry: 3000\n\n');
    assert.deepEqual(res.statuses(), [view('a'), view('b')]);
    assert.equal(events.size, 1);
  });

  test('given a stream of one loop, then the snapshot holds that loop only', (t) => {
    const { events } = stream(t);
    const res = new FakeResponse();
    events.open(asRes(res), 'b', [view('a'), view('b'), view('c')]);
    assert.deepEqual(
      res.statuses().map((v) => v.loop),
      ['b'],
    );
  });

  test('given a status changed since the last one sent, then it is sent', (t) => {
    const { events, clock } = stream(t);
    const res = new FakeResponse();
    events.open(asRes(res), undefined, []);
    events.status(view('a', { setpoint: 20 }));
    clock.nowMs += 1;
    events.status(view('a', { setpoint: 21 }));
    assert.deepEqual(
      res.statuses().map((v) => v.setpoint),
      [20, 21],
    );
  });

  test('given an unchanged status (only updatedAt moved), then not resent within unchangedEveryMs, resent after', (t) => {
    const { events, clock } = stream(t);
    const res = new FakeResponse();
    events.open(asRes(res), undefined, []);
    events.status(view('a', { updatedAt: '2026-11-30T12:00:00.000Z' }));
    clock.nowMs = 9_999;
    events.status(view('a', { updatedAt: '2026-11-30T12:00:09.999Z' }));
    assert.equal(res.statuses().length, 1);
    clock.nowMs = 10_000;
    events.status(view('a', { updatedAt: '2026-11-30T12:00:10.000Z' }));
    assert.deepEqual(
      res.statuses().map((v) => v.updatedAt),
      ['2026-11-30T12:00:00.000Z', '2026-11-30T12:00:10.000Z'],
    );
  });

  test('given two loops with identical statuses, then each is paced on its own', (t) => {
    const { events } = stream(t);
    const res = new FakeResponse();
    events.open(asRes(res), undefined, []);
    events.status(view('a'));
    events.status(view('b'));
    assert.deepEqual(
      res.statuses().map((v) => v.loop),
      ['a', 'b'],
    );
  });

  test('given a loop forgotten, then its next status is sent even if unchanged', (t) => {
    const { events } = stream(t);
    const res = new FakeResponse();
    events.open(asRes(res), undefined, []);
    events.status(view('a'));
    events.forget('a');
    events.status(view('a'));
    assert.equal(res.statuses().length, 2);
  });

  test('given streams of loop a, of loop b and of every loop, then statuses and events reach the right ones; node-wide events reach all', (t) => {
    const { events } = stream(t);
    const [onlyA, onlyB, all] = [new FakeResponse(), new FakeResponse(), new FakeResponse()];
    events.open(asRes(onlyA), 'a', []);
    events.open(asRes(onlyB), 'b', []);
    events.open(asRes(all), undefined, []);
    events.status(view('a'));
    events.event(event('a'));
    events.event(event(null));
    const seen = (res: FakeResponse) => ({
      statuses: res.statuses().map((v) => v.loop),
      events: res.frames('event').map((e) => (e as EventView).loop),
    });
    assert.deepEqual(seen(onlyA), { statuses: ['a'], events: ['a', null] });
    assert.deepEqual(seen(onlyB), { statuses: [], events: [null] });
    assert.deepEqual(seen(all), { statuses: ['a'], events: ['a', null] });
  });

  test('given maxClients streams open, when one more asks, then open returns false and writes nothing to it', (t) => {
    const { events } = stream(t, { maxClients: 2 });
    assert.equal(events.open(asRes(new FakeResponse()), undefined, []), true);
    assert.equal(events.open(asRes(new FakeResponse()), undefined, []), true);
    const refused = new FakeResponse();
    assert.equal(events.open(asRes(refused), undefined, [view('a')]), false);
    assert.equal(refused.status, undefined);
    assert.deepEqual(refused.writes, []);
    assert.equal(events.size, 2);
  });

  test('given maxClientsPerPeer streams open from one address, when it asks for one more, then refused, while another address still gets one', (t) => {
    const { events } = stream(t, { maxClients: 10, maxClientsPerPeer: 2 });
    assert.equal(events.open(asRes(new FakeResponse()), undefined, [], '192.0.2.7'), true);
    assert.equal(events.open(asRes(new FakeResponse()), undefined, [], '192.0.2.7'), true);
    assert.equal(events.open(asRes(new FakeResponse()), undefined, [], '192.0.2.7'), false);
    assert.equal(events.open(asRes(new FakeResponse()), undefined, [], '192.0.2.8'), true);
    assert.equal(events.size, 3);
  });

  test('given public streams (publicReads, no token) filling their pool from four addresses, when a trusted client asks, then it gets one: the pools are apart', (t) => {
    const { events } = stream(t, {
      maxClients: 3,
      maxClientsPerPeer: 2,
      maxPublicClients: 4,
      maxPublicClientsPerPeer: 1,
    });
    const open = (peer: string, pool: 'trusted' | 'public') =>
      events.open(asRes(new FakeResponse()), undefined, [], peer, pool);
    const publicOnes = ['192.0.2.1', '192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5'].map(
      (p) => open(p, 'public'),
    );
    assert.deepEqual(publicOnes, [true, false, true, true, true, false], 'one per address, four in all');
    assert.equal(open('192.0.2.9', 'trusted'), true);
    assert.equal(
      open('192.0.2.1', 'trusted'),
      true,
      'an address at its public limit still has its trusted slots',
    );
    assert.equal(open('192.0.2.1', 'trusted'), true);
    assert.equal(open('192.0.2.8', 'trusted'), false, 'the trusted pool has its own limit');
  });

  test('given the defaults, then 32 trusted (8 per address) and 8 public (2 per address) streams', (t) => {
    const { events } = stream(t, {});
    const count = (peers: string[], pool: 'trusted' | 'public') =>
      peers.filter((peer) => events.open(asRes(new FakeResponse()), undefined, [], peer, pool)).length;
    const many = (peer: string, n: number) => Array.from({ length: n }, () => peer);
    assert.equal(count(many('192.0.2.1', 5), 'public'), 2);
    assert.equal(
      count(
        ['192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5', '192.0.2.6', '192.0.2.7', '192.0.2.8'],
        'public',
      ),
      6,
    );
    assert.equal(count(many('192.0.2.1', 10), 'trusted'), 8);
    assert.equal(
      count(
        [2, 3, 4, 5].flatMap((n) => many(`192.0.2.${n}`, 8)),
        'trusted',
      ),
      24,
    );
  });

  test('given a stream closed by the client, then it leaves the count and a new one fits', (t) => {
    const { events } = stream(t, { maxClients: 1 });
    const gone = new FakeResponse();
    events.open(asRes(gone), undefined, []);
    gone.emit('close');
    assert.equal(events.size, 0);
    assert.equal(events.open(asRes(new FakeResponse()), undefined, []), true);
  });

  test('given a client whose unread bytes exceed maxBufferedBytes, then it is destroyed and dropped, the others still served', (t) => {
    const { events } = stream(t, { maxBufferedBytes: 1_000 });
    const [stalled, healthy] = [new FakeResponse(), new FakeResponse()];
    events.open(asRes(stalled), undefined, []);
    events.open(asRes(healthy), undefined, []);
    stalled.writableLength = 1_001;
    events.event(event('a'));
    assert.equal(stalled.destroyed, true);
    assert.equal(stalled.frames('event').length, 0);
    assert.equal(healthy.frames('event').length, 1);
    assert.equal(events.size, 1);
    events.event(event('a'));
    assert.equal(stalled.frames('event').length, 0);
  });

  test('given a client at exactly maxBufferedBytes, then it is still served', (t) => {
    const { events } = stream(t, { maxBufferedBytes: 1_000 });
    const res = new FakeResponse();
    events.open(asRes(res), undefined, []);
    res.writableLength = 1_000;
    events.event(event('a'));
    assert.equal(res.frames('event').length, 1);
  });

  test('when closed, then every stream is ended and none is left', (t) => {
    const { events } = stream(t);
    const streams = [new FakeResponse(), new FakeResponse()];
    for (const res of streams) events.open(asRes(res), undefined, []);
    events.close();
    assert.deepEqual(
      streams.map((res) => res.ended),
      [true, true],
    );
    assert.equal(events.size, 0);
  });

  test('given a ping period, when it passes, then every stream gets a ": ping" comment', (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const { events } = stream(t, { pingEveryMs: 15_000 });
    const res = new FakeResponse();
    events.open(asRes(res), 'a', []);
    t.mock.timers.tick(15_000);
    assert.deepEqual(res.writes.slice(1), [': ping\n\n']);
  });
});
