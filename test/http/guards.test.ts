/**
 * The guards (src/http/guards.ts) over fakes: sockets that record being destroyed, requests and
 * answers whose state the test sets, and a monotonic clock the test moves.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { AuthThrottle, ConnectionGuard } from '../../src/http/guards.js';
import { DEFAULT_THROTTLE_POLICY } from '../../src/http/lan-policy.js';

class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}

const clock = () => {
  const c = { nowMs: 0, read: () => c.nowMs };
  return c;
};

function guard(limits = { maxConnections: 4, maxPerPeer: 2 }) {
  const time = clock();
  const g = new ConnectionGuard(limits, time.read);
  const open = (address: string) => {
    const socket = new FakeSocket(address);
    g.admit(socket as unknown as Socket);
    return socket;
  };
  /** A request on `socket` whose answer is `finished` (or being worked on) and body `complete`. */
  const request = (socket: FakeSocket, state: { complete: boolean; finished: boolean }) => {
    const res = Object.assign(new EventEmitter(), {
      writableFinished: state.finished,
      writableEnded: state.finished,
    });
    const req = { socket, complete: state.complete } as unknown as IncomingMessage;
    g.request(req, res as unknown as ServerResponse);
  };
  return { g, time, open, request };
}

describe('ConnectionGuard', () => {
  test('given an address at its limit, when it connects again, then its longest-waiting connection is closed, and another address still comes in', () => {
    const { g, time, open } = guard();
    const first = open('192.0.2.1');
    time.nowMs = 10;
    const second = open('192.0.2.1');
    const third = open('192.0.2.1');
    assert.deepEqual([first.destroyed, second.destroyed, third.destroyed], [true, false, false]);
    const other = open('192.0.2.2');
    assert.equal(other.destroyed, false);
    assert.deepEqual([g.size, g.evicted, g.refused], [3, 1, 0]);
  });

  test('given an address whose connections are all at work (a handler running, a stream), when it connects again, then the newcomer is refused', () => {
    const { g, open, request } = guard();
    const held = [open('192.0.2.1'), open('192.0.2.1')];
    for (const socket of held) request(socket, { complete: true, finished: false });
    const newcomer = open('192.0.2.1');
    assert.equal(newcomer.destroyed, true);
    assert.equal(
      held.some((s) => s.destroyed),
      false,
    );
    assert.deepEqual([g.evicted, g.refused], [0, 1]);
  });

  test('given a full pool, when a quiet address connects, then the busiest address loses its oldest idle keep-alive, the quiet ones keep theirs', () => {
    const { g, time, open, request } = guard({ maxConnections: 4, maxPerPeer: 3 });
    const quiet = open('192.0.2.9');
    time.nowMs = 5;
    const busy = [open('192.0.2.1'), open('192.0.2.1'), open('192.0.2.1')];
    time.nowMs = 8;
    request(busy[2]!, { complete: true, finished: true }); // idle since 8
    request(busy[1]!, { complete: false, finished: true }); // a body still coming, since 8
    time.nowMs = 20;
    const newcomer = open('192.0.2.50');
    assert.deepEqual(
      [quiet, ...busy, newcomer].map((s) => s.destroyed),
      [false, true, false, false, false],
      'the never-finished request head of 5 went first',
    );
    assert.equal(g.size, 4);
  });

  test('given loopback (a proxy on the Pi, local tools), then it has no per-address limit, only the pool', () => {
    const { g, open } = guard();
    const local = [open('127.0.0.1'), open('::ffff:127.0.0.1'), open('::1'), open('127.0.0.1')];
    assert.equal(
      local.some((s) => s.destroyed),
      false,
    );
    assert.equal(g.size, 4);
  });

  test('given a connection closed by its client, then it leaves the count', () => {
    const { g, open } = guard();
    const socket = open('192.0.2.1');
    socket.emit('close');
    assert.equal(g.size, 0);
  });
});

describe('AuthThrottle', () => {
  function throttle(policy = DEFAULT_THROTTLE_POLICY) {
    const time = clock();
    const told: Array<[string, number, number]> = [];
    const t = new AuthThrottle(
      (key, failures, lockedMs) => told.push([key, failures, lockedMs]),
      policy,
      time.read,
    );
    return { t, time, told };
  }

  test('given five wrong tokens, then the sixth locks the address out 1 s, told once; others are not locked out', () => {
    const { t, told } = throttle();
    for (let i = 0; i < 5; i++) assert.equal(t.failure('192.0.2.1'), 0);
    assert.equal(t.lockedForMs('192.0.2.1'), 0);
    assert.equal(t.failure('192.0.2.1'), 1_000);
    assert.equal(t.lockedForMs('192.0.2.1'), 1_000);
    assert.equal(t.lockedForMs('192.0.2.2'), 0);
    assert.deepEqual(told, [['192.0.2.1', 6, 1_000]]);
    assert.deepEqual([t.failures, t.lockedOut()], [6, 1]);
  });

  test('given a lockout, when it has passed, then the next wrong token doubles it, and it is not told again in the same streak', () => {
    const { t, time, told } = throttle();
    for (let i = 0; i < 6; i++) t.failure('192.0.2.1');
    time.nowMs = 1_000;
    assert.equal(t.lockedOut(), 0);
    assert.equal(t.failure('192.0.2.1'), 2_000);
    assert.equal(told.length, 1);
  });

  test('given a right token after wrong ones, then the streak is over: five free again, and the next lockout told again', () => {
    const { t, told } = throttle();
    for (let i = 0; i < 5; i++) t.failure('192.0.2.1');
    t.success('192.0.2.1');
    for (let i = 0; i < 5; i++) assert.equal(t.failure('192.0.2.1'), 0);
    t.failure('192.0.2.1');
    t.success('192.0.2.1');
    for (let i = 0; i < 6; i++) t.failure('192.0.2.1');
    assert.equal(told.length, 2);
  });

  test('given more addresses than it tracks, then the least recent are forgotten (memory bounded), the newest kept', () => {
    const { t } = throttle({ ...DEFAULT_THROTTLE_POLICY, maxTracked: 3, freeFailures: 0 });
    for (const n of [1, 2, 3, 4, 5]) t.failure(`192.0.2.${n}`);
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => t.lockedForMs(`192.0.2.${n}`) > 0),
      [false, false, true, true, true],
    );
  });
});
