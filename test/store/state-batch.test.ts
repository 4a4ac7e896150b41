/**
 * PendingWrites with the periodic flush spread over turns of the event loop (daemon/timers.ts
 * flushInSlices): states are encoded a few at a time ahead of the flush; a state saved again
 * meanwhile is the one written, never an older encoding.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import { type PendingState, PendingWrites } from '../../src/store/state-batch.js';

/** A state whose encoding names it, so a test can see which one a batch holds. */
function state(name: string, atMs: number): PendingState {
  return { memory: { name }, status: {} as LoopStatus, atMs };
}
const encodings: string[] = [];
const encode = (s: PendingState) => {
  const name = String((s.memory as { name: string }).name);
  encodings.push(name);
  return Buffer.from(name);
};
/** What a batch would write per loop: the stored form and its time (as StateStore.writeBatch). */
function written(pending: PendingWrites) {
  return pending
    .take()
    .states.map(([loop, s]) => [loop, (s.encoded ?? encode(s)).toString(), s.atMs] as const);
}

describe('PendingWrites: encoding ahead of a sliced flush', () => {
  test('given 5 pending states, encodeSome(2) encodes two per call and says when none is left', () => {
    const pending = new PendingWrites();
    for (const loop of ['a', 'b', 'c', 'd', 'e']) pending.saveState(loop, state(`${loop}1`, 1));
    assert.deepEqual(
      [1, 2, 3].map(() => pending.encodeSome(2, encode)),
      [false, false, true],
      'two, two, then the last one: done',
    );
  });

  test('given states encoded ahead, the flush writes those encodings without encoding again', () => {
    const pending = new PendingWrites();
    pending.saveState('a', state('a1', 1));
    pending.saveState('b', state('b1', 1));
    pending.encodeSome(10, encode);
    encodings.length = 0;
    assert.deepEqual(written(pending), [
      ['a', 'a1', 1],
      ['b', 'b1', 1],
    ]);
    assert.deepEqual(encodings, [], 'encoded once');
  });

  test('given a state saved again after it was encoded (a cycle ran, a fault latched), the newer one is written', () => {
    const pending = new PendingWrites();
    pending.saveState('a', state('a1', 1));
    pending.encodeSome(10, encode);
    pending.saveState('a', state('a2-latched', 2));
    assert.equal(pending.encodeSome(10, encode), true, 'the newer state is encoded in its turn');
    assert.deepEqual(written(pending), [['a', 'a2-latched', 2]]);
    assert.equal(pending.dirty, false, 'nothing older is left to overwrite it later');
  });

  test('given a state never encoded ahead, the flush encodes it', () => {
    const pending = new PendingWrites();
    pending.saveState('a', state('a1', 1));
    assert.deepEqual(written(pending), [['a', 'a1', 1]]);
  });
});
