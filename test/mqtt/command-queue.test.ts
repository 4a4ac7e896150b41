import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CommandQueue } from '../../src/mqtt/command-queue.js';

/** The bridge's command queue: off the receive path, in slices, bounded, first in first out. */

function queue(opts: { maxQueued?: number; sliceMs?: number; failOn?: number } = {}) {
  const handled: number[] = [];
  const overflowed: number[] = [];
  const errors: unknown[] = [];
  const q = new CommandQueue<number>({
    handle: (n) => {
      if (n === opts.failOn) throw new Error(`boom ${n}`);
      handled.push(n);
    },
    overflow: (n) => overflowed.push(n),
    onError: (error) => errors.push(error),
    ...(opts.maxQueued === undefined ? {} : { maxQueued: opts.maxQueued }),
    ...(opts.sliceMs === undefined ? {} : { sliceMs: opts.sliceMs }),
  });
  return { q, handled, overflowed, errors };
}

describe('CommandQueue', () => {
  test('given a burst pushed in one turn, then nothing is handled during the burst, all of it after, in order', async () => {
    const { q, handled } = queue();
    for (let i = 0; i < 500; i++) q.push(i);
    assert.deepEqual(handled, [], 'the receive path only queues');
    await q.idle();
    assert.deepEqual(
      handled,
      Array.from({ length: 500 }, (_, i) => i),
    );
  });

  test('given more than maxQueued waiting, then the extra ones go to overflow at once and the rest are still handled', async () => {
    const { q, handled, overflowed } = queue({ maxQueued: 100 });
    for (let i = 0; i < 250; i++) q.push(i);
    assert.deepEqual(
      overflowed,
      Array.from({ length: 150 }, (_, i) => 100 + i),
    );
    await q.idle();
    assert.equal(handled.length, 100);
    q.push(999);
    await q.idle();
    assert.equal(handled.at(-1), 999, 'room again once drained');
  });

  test('given a slice of 0 ms, then each item is its own turn of the event loop (other work can run in between)', async () => {
    const { q, handled } = queue({ sliceMs: 0 });
    let otherWorkSawHandled: number | undefined;
    for (let i = 0; i < 50; i++) q.push(i);
    // Queued after the first slice: it runs before the second only if the queue yields. (A 0 ms
    // timer was flaky here: 50 short turns can all finish within the timer's 1 ms.)
    setImmediate(() => {
      otherWorkSawHandled = handled.length;
    });
    await q.idle();
    assert.ok(
      otherWorkSawHandled !== undefined && otherWorkSawHandled < 50,
      `the other work ran after ${otherWorkSawHandled}`,
    );
  });

  test('given a handler that throws, then the error is reported and the next items are handled', async () => {
    const { q, handled, errors } = queue({ failOn: 3 });
    for (let i = 0; i < 6; i++) q.push(i);
    await q.idle();
    assert.deepEqual(handled, [0, 1, 2, 4, 5]);
    assert.match(String(errors[0]), /boom 3/);
  });

  test('whenRoom: at once below the high-water mark; above it, held until the queue has drained to half of it', async () => {
    const handled: number[] = [];
    const q = new CommandQueue<number>({
      handle: (n) => handled.push(n),
      overflow: () => assert.fail('no overflow'),
      onError: (error) => assert.fail(String(error)),
      highWater: 10,
      sliceMs: 0,
    });
    let resumed = 0;
    q.whenRoom(() => resumed++);
    assert.equal(resumed, 1, 'room: at once');
    for (let i = 0; i < 10; i++) q.push(i);
    q.whenRoom(() => resumed++);
    assert.equal(resumed, 1, 'full: held');
    await q.idle();
    assert.equal(resumed, 2, 'resumed once drained');
    assert.ok(handled.length === 10);
  });

  test('idle() resolves at once when nothing waits', async () => {
    const { q } = queue();
    await q.idle();
  });
});
