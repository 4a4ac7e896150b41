import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { queryCount, queryText, queryTimeMs } from '../../src/http/query.js';
import { HttpError } from '../../src/http/respond.js';

const NOW_MS = Date.parse('2026-11-30T12:00:00.000Z');
const FALLBACK_MS = 42;
const url = (query: string) => new URL(`http://pi.local/api/x?${query}`);

/** The HttpError `fn` throws: status 400, message naming the parameter. */
function badRequest(fn: () => unknown, name: string): HttpError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  assert.ok(thrown instanceof HttpError, `expected an HttpError, got ${String(thrown)}`);
  assert.equal(thrown.status, 400);
  assert.ok(thrown.message.startsWith(`${name}: `), thrown.message);
  return thrown;
}

describe('queryTimeMs: ISO time or a duration back from now', () => {
  const cases: Array<{ query: string; ms: number }> = [
    { query: '', ms: FALLBACK_MS },
    { query: 'since=', ms: FALLBACK_MS },
    { query: 'since=90s', ms: NOW_MS - 90_000 },
    { query: 'since=30m', ms: NOW_MS - 1_800_000 },
    { query: 'since=6h', ms: NOW_MS - 6 * 3_600_000 },
    { query: 'since=7d', ms: NOW_MS - 7 * 86_400_000 },
    { query: 'since=1.5h', ms: NOW_MS - 5_400_000 },
    { query: 'since=0h', ms: NOW_MS },
    { query: 'since=2026-11-30T10:00:00Z', ms: Date.parse('2026-11-30T10:00:00Z') },
    { query: 'since=2026-11-30T10:00:00.250Z', ms: Date.parse('2026-11-30T10:00:00.250Z') },
    { query: 'since=2026-11-30T12:00:00%2B02:00', ms: Date.parse('2026-11-30T10:00:00Z') },
    { query: 'since=2026-11-29', ms: Date.parse('2026-11-29T00:00:00Z') },
  ];
  for (const { query, ms } of cases) {
    test(`given ?${query}, then ${new Date(ms).toISOString()}`, () => {
      assert.equal(queryTimeMs(url(query), 'since', NOW_MS, FALLBACK_MS), ms);
    });
  }

  const garbage = [
    'yesterday',
    '6 hours',
    '-6h',
    '6x',
    '12345',
    '2026-13-45T00:00:00Z',
    'Mon, 30 Nov 2026 10:00:00 GMT',
  ];
  for (const text of garbage) {
    test(`given ?until=${text}, then HttpError 400 naming until`, () => {
      const error = badRequest(
        () => queryTimeMs(url(`until=${encodeURIComponent(text)}`), 'until', NOW_MS, FALLBACK_MS),
        'until',
      );
      assert.match(error.message, /neither an ISO time nor a duration/);
    });
  }

  const outOfBounds: Array<{ text: string; reason: RegExp }> = [
    { text: '99999999999d', reason: /is before 1970$/ },
    { text: `${'9'.repeat(400)}d`, reason: /is before 1970$/ },
    { text: '1969-12-31T23:59:59Z', reason: /is before 1970$/ },
    { text: '9999-12-31T00:00:00Z', reason: /is more than 366 days from now$/ },
    { text: new Date(NOW_MS + 367 * 86_400_000).toISOString(), reason: /is more than 366 days from now$/ },
  ];
  for (const { text, reason } of outOfBounds) {
    test(`given ?since=${text.slice(0, 20)}…, then HttpError 400 naming since: ${reason.source}`, () => {
      const error = badRequest(
        () => queryTimeMs(url(`since=${text}`), 'since', NOW_MS, FALLBACK_MS),
        'since',
      );
      assert.match(error.message, reason);
    });
  }

  test('given 1970-01-01 and a time 366 days from now, then both are taken (the bounds are included)', () => {
    assert.equal(queryTimeMs(url('until=1970-01-01T00:00:00Z'), 'until', NOW_MS, FALLBACK_MS), 0);
    const future = new Date(NOW_MS + 366 * 86_400_000).toISOString();
    assert.equal(
      queryTimeMs(url(`until=${future}`), 'until', NOW_MS, FALLBACK_MS),
      NOW_MS + 366 * 86_400_000,
    );
  });

  test('given a very long garbage value, then the message quotes at most 64 characters of it', () => {
    const error = badRequest(() => queryTimeMs(url(`since=${'x'.repeat(500)}`), 'since', NOW_MS, 0), 'since');
    assert.ok(error.message.includes(`"${'x'.repeat(64)}"`));
    assert.ok(!error.message.includes('x'.repeat(65)));
  });
});

describe('queryCount: a whole number from 1 to max', () => {
  const ok: Array<{ query: string; count: number }> = [
    { query: '', count: 500 },
    { query: 'maxPoints=', count: 500 },
    { query: 'maxPoints=1', count: 1 },
    { query: 'maxPoints=250', count: 250 },
    { query: 'maxPoints=5000', count: 5000 },
  ];
  for (const { query, count } of ok) {
    test(`given ?${query}, then ${count}`, () => {
      assert.equal(queryCount(url(query), 'maxPoints', 500, 5000), count);
    });
  }

  for (const text of ['0', '5001', '-1', '1.5', '1e3', 'ten', '99999999999999999999']) {
    test(`given ?maxPoints=${text}, then HttpError 400 naming maxPoints and the bounds`, () => {
      const error = badRequest(
        () => queryCount(url(`maxPoints=${text}`), 'maxPoints', 500, 5000),
        'maxPoints',
      );
      assert.match(error.message, /from 1 to 5000/);
    });
  }
});

describe('queryText: an optional text of at most 64 characters', () => {
  test('given absent or empty, then undefined; given a value, then the value decoded', () => {
    assert.equal(queryText(url(''), 'loop'), undefined);
    assert.equal(queryText(url('loop='), 'loop'), undefined);
    assert.equal(queryText(url('loop=living%20room'), 'loop'), 'living room');
    assert.equal(queryText(url(`loop=${'a'.repeat(64)}`), 'loop'), 'a'.repeat(64));
  });

  test('given 65 characters, then HttpError 400 naming the parameter', () => {
    badRequest(() => queryText(url(`kind=${'a'.repeat(65)}`), 'kind'), 'kind');
  });
});
