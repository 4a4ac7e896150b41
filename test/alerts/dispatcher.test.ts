/**
 * Delivery: per channel, one attempt at a time, oldest first, the next only after the one before
 * was taken; a failure waits (backoff, the server's Retry-After, the longest wait for a refusal)
 * and tries the same alert again; a send that hangs is cut at the timeout. On a manual clock.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { type AlertChannel, DeliveryError } from '../../src/alerts/channels/index.js';
import { AlertDispatcher } from '../../src/alerts/dispatcher.js';
import type { AlertNotice } from '../../src/alerts/notice.js';
import { AlertOutbox } from '../../src/alerts/outbox.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { AlertOutboxTable } from '../../src/store/alert-outbox.js';
import { closeStore, openStore } from '../../src/store/database.js';
import { silentLogger } from '../support/logger.js';
import { type HasAfter, tempDir } from '../support/tmp.js';

type Answer = 'ok' | 'hang' | Error;

/** A channel that answers as scripted (then 'ok') and records every attempt. */
function scriptedChannel(id: string, answers: Answer[] = []) {
  const attempts: Array<{ title: string; signal: AbortSignal }> = [];
  const channel: AlertChannel = {
    id,
    type: 'webhook',
    send(notice, signal) {
      attempts.push({ title: notice.title, signal });
      const answer = answers.shift() ?? 'ok';
      if (answer === 'ok') return Promise.resolve();
      if (answer === 'hang') return new Promise<void>(() => undefined);
      return Promise.reject(answer);
    },
  };
  return { channel, attempts, titles: () => attempts.map((a) => a.title) };
}

function notice(n: number): AlertNotice {
  return {
    id: `n/${n}`,
    node: 'n',
    kind: 'faulted',
    phase: 'raised',
    severity: 'critical',
    title: `alert ${n}`,
    message: 'm',
    atMs: n,
  };
}

/** Lets pending promise chains run (no time passes: the manual clock does not move). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function setUp(t: HasAfter, channels: AlertChannel[], extra: { timeoutMs?: number } = {}) {
  const db = openStore({ path: path.join(tempDir(t), 'h.db'), logger: silentLogger, nowMs: () => 0 }).db;
  t.after(() => closeStore(db));
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const outbox = new AlertOutbox(new AlertOutboxTable(() => db), 100, silentLogger);
  const errors: Array<[string, string | undefined]> = [];
  const dispatcher = new AlertDispatcher({
    outbox,
    channels: new Map(channels.map((c) => [c.id, c])),
    clock,
    logger: silentLogger,
    backoff: { initialMs: 5_000, maxMs: 600_000 },
    ...extra,
    onAttempt: (channel, error) => errors.push([channel, error]),
  });
  return { clock, outbox, dispatcher, errors };
}

describe('AlertDispatcher', () => {
  test('given three alerts, when kicked, then each is sent once, in order, and leaves the outbox', async (t) => {
    const phone = scriptedChannel('phone');
    const { outbox, dispatcher } = setUp(t, [phone.channel]);
    for (const n of [1, 2, 3]) outbox.add('phone', notice(n), n);
    dispatcher.kick();
    await settle();
    assert.deepEqual(phone.titles(), ['alert 1', 'alert 2', 'alert 3']);
    assert.deepEqual(outbox.backlog(), {});
    assert.deepEqual(dispatcher.counts(), { phone: { sent: 3, failed: 0 } });
  });

  test('a failure: the same alert again after the backoff, the next never before it; other channels go on', async (t) => {
    const phone = scriptedChannel('phone', [new DeliveryError('HTTP 503'), new DeliveryError('HTTP 503')]);
    const hook = scriptedChannel('hook');
    const { clock, outbox, dispatcher, errors } = setUp(t, [phone.channel, hook.channel]);
    outbox.add('phone', notice(1), 1);
    outbox.add('phone', notice(2), 2);
    outbox.add('hook', notice(3), 3);
    dispatcher.kick();
    await settle();
    assert.deepEqual(phone.titles(), ['alert 1']);
    assert.deepEqual(hook.titles(), ['alert 3'], 'a failing channel holds no other back');
    await clock.advance(4_999);
    assert.deepEqual(phone.titles(), ['alert 1'], 'not before 5 s');
    await clock.advance(1);
    await settle();
    assert.deepEqual(phone.titles(), ['alert 1', 'alert 1'], 'then the same one');
    await clock.advance(9_999);
    assert.equal(phone.attempts.length, 2, 'the second wait is 10 s');
    await clock.advance(1);
    await settle();
    assert.deepEqual(phone.titles(), ['alert 1', 'alert 1', 'alert 1', 'alert 2']);
    assert.equal(outbox.head('phone'), undefined);
    assert.deepEqual(
      errors.filter(([c]) => c === 'phone'),
      [
        ['phone', 'HTTP 503'],
        ['phone', 'HTTP 503'],
        ['phone', undefined],
        ['phone', undefined],
      ],
    );
  });

  test("the server's Retry-After is waited for; a refusal (a wrong token) waits the longest", async (t) => {
    const phone = scriptedChannel('phone', [new DeliveryError('HTTP 429', { retryAfterMs: 30_000 })]);
    const hook = scriptedChannel('hook', [new DeliveryError('HTTP 401', { refused: true })]);
    const { clock, outbox, dispatcher } = setUp(t, [phone.channel, hook.channel]);
    outbox.add('phone', notice(1), 1);
    outbox.add('hook', notice(2), 2);
    dispatcher.kick();
    await settle();
    await clock.advance(29_999);
    assert.equal(phone.attempts.length, 1);
    await clock.advance(1);
    await settle();
    assert.equal(phone.attempts.length, 2, 'after 30 s, not after 5');
    await clock.advance(600_000 - 30_001);
    assert.equal(hook.attempts.length, 1);
    await clock.advance(1);
    await settle();
    assert.equal(hook.attempts.length, 2, 'after the 10 min maximum');
  });

  test('a send that never answers is aborted at the timeout and tried again', async (t) => {
    const phone = scriptedChannel('phone', ['hang']);
    const { clock, outbox, dispatcher, errors } = setUp(t, [phone.channel], { timeoutMs: 15_000 });
    outbox.add('phone', notice(1), 1);
    dispatcher.kick();
    await settle();
    await clock.advance(15_000);
    await settle();
    assert.equal(phone.attempts[0]?.signal.aborted, true, 'its request is aborted');
    assert.match(errors[0]?.[1] ?? '', /no answer in 15 s/);
    await clock.advance(5_000);
    await settle();
    assert.equal(phone.attempts.length, 2);
    assert.equal(outbox.head('phone'), undefined, 'the retry went through');
  });

  test('stop: the attempt in flight is aborted and the alert stays in the outbox; nothing is tried after', async (t) => {
    const phone = scriptedChannel('phone', ['hang']);
    const { clock, outbox, dispatcher } = setUp(t, [phone.channel]);
    outbox.add('phone', notice(1), 1);
    dispatcher.kick();
    await settle();
    await dispatcher.stop();
    assert.equal(phone.attempts[0]?.signal.aborted, true);
    assert.equal(outbox.head('phone')?.notice.title, 'alert 1');
    dispatcher.kick();
    await clock.advance(3_600_000);
    assert.equal(phone.attempts.length, 1);
  });

  test('retryNow: a channel waiting out its backoff (the broker is back) is tried at once', async (t) => {
    const mqtt = scriptedChannel('mqtt', [new Error('MQTT not connected')]);
    const { outbox, dispatcher } = setUp(t, [mqtt.channel]);
    outbox.add('mqtt', notice(1), 1);
    dispatcher.kick();
    await settle();
    dispatcher.retryNow('mqtt');
    await settle();
    assert.equal(mqtt.attempts.length, 2);
    assert.equal(outbox.head('mqtt'), undefined);
  });
});
