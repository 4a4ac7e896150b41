/**
 * The Brewfather streams' cadence and delivery on an injected clock, against a loopback server
 * answering as Brewfather's log does (`{"result":"success"}`, or a refusal): the first post a
 * minute after the start, then one every everyS; a failed post retried with backoff until the
 * next reading replaces it (readings are not queued: Brewfather stamps a post on arrival and
 * ignores a device posting more often than every 15 minutes); a refusal waits for the next
 * reading; a server that never answers is given up after 15 s.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { BrewfatherBody } from '../../src/alerts/brewfather.js';
import { BrewfatherStreams } from '../../src/alerts/brewfather-streams.js';
import { brewfatherSchema } from '../../src/config/schema/brewfather.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { nextTurn } from '../support/assert.js';
import { silentLogger } from '../support/logger.js';
import type { HasAfter } from '../support/tmp.js';
import { type FakeService, startFakeService } from './fake-services.js';

const MIN = 60_000;
/** A test waiting for an attempt that never comes fails instead of hanging. */
const WAIT = { timeout: 10_000 };

async function setUp(
  t: HasAfter,
  url?: (server: FakeService) => string | undefined,
  extra: { timeoutMs?: number } = {},
) {
  const server = await startFakeService('{"result":"success"}');
  t.after(() => server.close());
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let reading = 0;
  const attempts: Array<string | undefined> = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const streams = new BrewfatherStreams({
    streams: [
      {
        loop: 'fermenter',
        config: brewfatherSchema.parse({ streamIdFile: '/unused' }),
        url: url ? url(server) : `${server.url}/stream?id=abc`,
      },
    ],
    clock,
    sample: (): BrewfatherBody => ({ name: 'fermenter', temp: 18 + reading++ / 10 }),
    logger: silentLogger,
    backoff: { initialMs: 10_000, maxMs: 300_000 },
    ...extra,
    onAttempt: (_loop, error) => {
      attempts.push(error);
      for (const waiter of waiters.filter((w) => attempts.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
  });
  t.after(() => streams.stop());
  const attempted = (count: number) =>
    attempts.length >= count
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiters.push({ count, resolve }));
  const temps = () => server.requests.map((r) => (JSON.parse(r.body) as BrewfatherBody).temp);
  streams.start();
  return { server, clock, streams, attempts, attempted, temps };
}

test('given a stream, the first post a minute after the start, then one every 15 min', WAIT, async (t) => {
  const { server, clock, attempted, temps, streams } = await setUp(t);
  await clock.advance(MIN - 1);
  assert.equal(server.requests.length, 0);
  await clock.advance(1);
  await attempted(1);
  assert.equal(server.requests[0]?.method, 'POST');
  assert.equal(server.requests[0]?.url, '/stream?id=abc');
  assert.equal(server.requests[0]?.headers['content-type'], 'application/json');
  await clock.advance(15 * MIN - 1);
  assert.equal(server.requests.length, 1, 'not sooner than everyS');
  await clock.advance(1);
  await attempted(2);
  assert.deepEqual(temps(), [18, 18.1]);
  assert.deepEqual(streams.figures(), [
    { channel: 'brewfather/fermenter', sent: 2, failed: 0, dropped: 0, undelivered: 0 },
  ]);
});

test(
  'given the server failing, the post is retried with backoff; the next reading replaces it',
  WAIT,
  async (t) => {
    const { server, clock, attempts, attempted, temps, streams } = await setUp(t);
    server.script.push(...Array.from({ length: 8 }, () => ({ status: 503 })));
    await clock.advance(MIN);
    await attempted(1);
    for (const [waitMs, count] of [
      [10_000, 2],
      [20_000, 3],
      [40_000, 4],
      [80_000, 5],
      [160_000, 6],
    ] as const) {
      await clock.advance(waitMs);
      await attempted(count);
    }
    assert.deepEqual(temps(), [18, 18, 18, 18, 18, 18], 'the same reading, retried');
    assert.match(attempts[0] ?? '', /^Brewfather answered HTTP 503/);
    // The backoff is capped at 5 min: once more at 11 min 10 s, then the next reading at 16 min goes at once.
    await clock.advance(300_000);
    await attempted(7);
    assert.equal(temps().at(-1), 18);
    await clock.advance(16 * MIN - 670_000);
    await attempted(8);
    assert.equal(temps().at(-1), 18.1, 'the newer reading, at once');
    assert.deepEqual(streams.figures()[0], {
      channel: 'brewfather/fermenter',
      sent: 0,
      failed: 8,
      dropped: 1,
      undelivered: 1,
    });
    server.script.length = 0;
    await clock.advance(300_000);
    await attempted(9);
    assert.equal(attempts.at(-1), undefined, 'taken');
    assert.equal(streams.figures()[0]?.undelivered, 0);
  },
);

test('given a refusal (a wrong id), nothing more until the next reading', WAIT, async (t) => {
  const { server, clock, attempted, attempts } = await setUp(t);
  server.script.push({ status: 401, body: 'invalid id' });
  await clock.advance(MIN);
  await attempted(1);
  assert.match(attempts[0] ?? '', /HTTP 401: invalid id/);
  await clock.advance(15 * MIN - 1);
  assert.equal(server.requests.length, 1);
  await clock.advance(1);
  await attempted(2);
  assert.equal(attempts[1], undefined);
});

test('given a server that never answers, the post is given up after 15 s and retried', WAIT, async (t) => {
  const { server, clock, attempted, attempts } = await setUp(t);
  server.script.push({ status: 200, hang: true });
  await clock.advance(MIN);
  await server.received(1);
  await clock.advance(15_000);
  await attempted(1);
  assert.equal(attempts[0], 'Brewfather: no answer in 15 s');
  await clock.advance(10_000);
  await attempted(2);
  assert.equal(attempts[1], undefined);
});

test('given no URL (the id file unreadable), nothing is posted', WAIT, async (t) => {
  const { server, clock, streams } = await setUp(t, () => undefined);
  await clock.advance(30 * MIN);
  assert.equal(server.requests.length, 0);
  assert.equal(streams.figures()[0]?.sent, 0);
});

test(
  'given a post still in flight when the next reading is due, that reading is not posted right after it',
  WAIT,
  async (t) => {
    // A log server that answers only when the test says: the first post is slow, past the next tick.
    const held: ServerResponse[] = [];
    const slow = createServer((req, res) => {
      req.resume();
      req.on('end', () => held.push(res));
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => slow.close(() => resolve())));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/stream?id=abc`;
    const { clock, attempted, streams } = await setUp(t, () => url, { timeoutMs: 60 * MIN });
    await clock.advance(MIN);
    while (held.length < 1) await nextTurn();
    await clock.advance(15 * MIN);
    assert.equal(held.length, 1, 'the next reading waits for the post in flight');
    held[0]?.end('{"result":"success"}');
    await attempted(1);
    await clock.advance(15 * MIN - 1);
    assert.equal(held.length, 1, 'no post right after a success: the newer reading was dropped');
    assert.deepEqual(streams.figures()[0], {
      channel: 'brewfather/fermenter',
      sent: 1,
      failed: 0,
      dropped: 1,
      undelivered: 0,
    });
    await clock.advance(1);
    while (held.length < 2) await nextTurn();
    held[1]?.end('{"result":"success"}');
    await attempted(2);
  },
);
