/**
 * The LAN policy (src/http/lan-policy.ts) as tables: which connection goes when the pool or an
 * address is full, the wrong-token throttle's lockouts as a function of the streak and the
 * time, and whose wrong tokens a request counts as.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type AdmitDecision,
  admitConnection,
  afterFailure,
  type ConnectionPhase,
  type ConnectionView,
  DEFAULT_THROTTLE_POLICY,
  expired,
  lockedForMs,
  peerAddress,
  type ThrottleEntry,
  throttleKey,
} from '../../src/http/lan-policy.js';

const LIMITS = { maxConnections: 6, maxPerPeer: 3 };
const A = '192.0.2.1';
const B = '192.0.2.2';
const C = '192.0.2.3';

let nextId = 1;
/** A connection of `peer` in `phase` since `sinceMs`. */
const conn = (peer: string, phase: ConnectionPhase, sinceMs: number): ConnectionView => ({
  id: nextId++,
  peer,
  phase,
  sinceMs,
});

describe('admitConnection: who goes when a newcomer finds its address or the pool full', () => {
  const cases: Array<{
    name: string;
    open: ConnectionView[];
    peer: string;
    exempt?: boolean;
    expect: (open: ConnectionView[]) => AdmitDecision;
  }> = [
    {
      name: 'room in the pool and under its address limit: admitted, nobody closed',
      open: [conn(A, 'idle', 1), conn(B, 'idle', 2)],
      peer: A,
      expect: () => ({ admit: true }),
    },
    {
      name: 'its address at its limit: its own longest-waiting connection goes, not another address’s older one',
      open: [conn(B, 'idle', 0), conn(A, 'idle', 5), conn(A, 'headers', 3), conn(A, 'body', 4)],
      peer: A,
      expect: (o) => ({ admit: true, evict: o[2]!.id }),
    },
    {
      name: 'an unfinished request goes before an older idle keep-alive, an unread answer between them',
      open: [conn(A, 'idle', 0), conn(A, 'draining', 1), conn(A, 'headers', 9)],
      peer: A,
      expect: (o) => ({ admit: true, evict: o[2]!.id }),
    },
    {
      name: 'no unfinished request: the unread answer before the idle keep-alive',
      open: [conn(A, 'idle', 0), conn(A, 'draining', 8), conn(A, 'active', 1)],
      peer: A,
      expect: (o) => ({ admit: true, evict: o[1]!.id }),
    },
    {
      name: 'its address at its limit with nothing evictable (streams, handlers at work): refused',
      open: [conn(A, 'active', 1), conn(A, 'active', 2), conn(A, 'active', 3)],
      peer: A,
      expect: () => ({ admit: false }),
    },
    {
      name: 'a full pool, newcomer from a quiet address: the busiest address’s oldest idle goes',
      open: [
        conn(A, 'idle', 9),
        conn(A, 'idle', 7),
        conn(A, 'active', 1),
        conn(B, 'idle', 0),
        conn(B, 'idle', 2),
        conn(C, 'headers', 8),
      ],
      peer: '192.0.2.99',
      expect: (o) => ({ admit: true, evict: o[1]!.id }),
    },
    {
      name: 'a full pool whose busiest address holds only active ones: the next busiest pays (not the quieter one with an older idle)',
      open: [
        conn(A, 'active', 1),
        conn(A, 'active', 2),
        conn(A, 'active', 3),
        conn(B, 'draining', 6),
        conn(B, 'body', 4),
        conn(C, 'idle', 0),
      ],
      peer: '192.0.2.99',
      expect: (o) => ({ admit: true, evict: o[4]!.id }),
    },
    {
      name: 'a full pool, the newcomer’s address the busiest: its own longest waiting goes (tie: its own)',
      open: [
        conn(A, 'idle', 1),
        conn(A, 'idle', 3),
        conn(B, 'idle', 0),
        conn(B, 'idle', 0),
        conn(B, 'idle', 0),
        conn(C, 'idle', 0),
      ],
      peer: A,
      expect: (o) => ({ admit: true, evict: o[0]!.id }),
    },
    {
      name: 'a full pool, nothing evictable at an address as busy as the newcomer’s: refused',
      open: [
        conn(A, 'active', 1),
        conn(A, 'active', 1),
        conn(B, 'active', 1),
        conn(B, 'active', 1),
        conn(C, 'active', 1),
        conn(C, 'idle', 0),
      ],
      peer: A,
      expect: () => ({ admit: false }),
    },
    {
      name: 'loopback (a proxy, local tools) over the address limit is admitted while the pool has room',
      open: [conn('127.0.0.1', 'idle', 1), conn('127.0.0.1', 'idle', 2), conn('127.0.0.1', 'idle', 3)],
      peer: '127.0.0.1',
      exempt: true,
      expect: () => ({ admit: true }),
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(admitConnection(c.open, c.peer, LIMITS, c.exempt), c.expect(c.open));
    });
  }
});

describe('the wrong-token throttle: lockouts from the streak and the monotonic time', () => {
  const policy = DEFAULT_THROTTLE_POLICY;
  /** The streak after `n` wrong tokens, each sent as soon as the address may try again. */
  function streak(n: number): {
    entry: ThrottleEntry | undefined;
    lockouts: number[];
    firsts: number;
    nowMs: number;
  } {
    let entry: ThrottleEntry | undefined;
    let nowMs = 1_000;
    const lockouts: number[] = [];
    let firsts = 0;
    for (let i = 0; i < n; i++) {
      nowMs += lockedForMs(entry, nowMs);
      const next = afterFailure(entry, nowMs, policy);
      entry = next.entry;
      lockouts.push(next.lockedMs);
      if (next.firstLockout) firsts++;
    }
    return { entry, lockouts, firsts, nowMs };
  }

  test('the first five are free, then 1 s doubling per wrong token, capped at 5 min; the first lockout is told once', () => {
    const { lockouts, firsts } = streak(16);
    assert.deepEqual(
      lockouts,
      [0, 0, 0, 0, 0, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000],
    );
    assert.equal(firsts, 1);
  });

  const at = [
    { afterMs: 0, locked: 1_000 },
    { afterMs: 999, locked: 1 },
    { afterMs: 1_000, locked: 0 },
  ];
  for (const { afterMs, locked } of at) {
    test(`locked out ${locked} ms, ${afterMs} ms after the sixth wrong token`, () => {
      const { entry, nowMs } = streak(6);
      assert.equal(lockedForMs(entry, nowMs + afterMs), locked);
    });
  }

  test('a streak is forgotten 15 min after its last wrong token (then five are free again), not before', () => {
    const { entry, nowMs } = streak(7);
    assert.equal(expired(entry!, nowMs + policy.forgetAfterMs - 1, policy), false);
    assert.equal(expired(entry!, nowMs + policy.forgetAfterMs, policy), true);
    const again = afterFailure(entry, nowMs + policy.forgetAfterMs, policy);
    assert.deepEqual([again.entry.failures, again.lockedMs, again.firstLockout], [1, 0, false]);
  });

  test('a locked-out streak is never forgotten while the lockout lasts', () => {
    const { entry, nowMs } = streak(20);
    assert.equal(lockedForMs(entry, nowMs), 300_000);
    assert.equal(expired(entry!, nowMs + 299_999, { ...policy, forgetAfterMs: 1 }), false);
  });
});

describe('whose wrong tokens a request counts as', () => {
  const cases: Array<[string, string | undefined, Record<string, string>, string]> = [
    ['a LAN device: its address', '192.0.2.7', {}, '192.0.2.7'],
    ['an IPv4-mapped address: the IPv4 one', '::ffff:192.0.2.7', {}, '192.0.2.7'],
    [
      'a LAN device cannot pick its key with a header',
      '192.0.2.7',
      { 'x-forwarded-for': '10.0.0.1' },
      '192.0.2.7',
    ],
    ['this machine, no proxy header: loopback', '127.0.0.1', {}, '127.0.0.1'],
    [
      'a proxy on this machine: the client it names (X-Real-IP)',
      '127.0.0.1',
      { 'x-real-ip': '192.0.2.9' },
      '192.0.2.9 via 127.0.0.1',
    ],
    [
      'a proxy on this machine: the last X-Forwarded-For entry (the one it added)',
      '::1',
      { 'x-forwarded-for': '6.6.6.6, 192.0.2.9' },
      '192.0.2.9 via ::1',
    ],
    [
      'a proxy on this machine: Forwarded for=',
      '127.0.0.1',
      { forwarded: 'for="[2001:db8::7]";proto=http' },
      '2001:db8::7 via 127.0.0.1',
    ],
    [
      'a proxy header that is no address: the proxy itself',
      '127.0.0.1',
      { 'x-real-ip': 'junk' },
      '127.0.0.1',
    ],
  ];
  for (const [name, remote, headers, key] of cases) {
    test(name, () => assert.equal(throttleKey(remote, headers), key));
  }
  test('peerAddress of no address is the empty key', () => assert.equal(peerAddress(undefined), ''));
});
