/**
 * PendingWrites with the periodic flush spread over turns of the event loop (daemon/timers.ts
 * flushInSlices): states are encoded a few at a time ahead of the flush; a state saved again
 * meanwhile must neither be lost nor hold the flush back.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import { type PendingState, PendingWrites } from '../../src/store/state-batch.js';

/** A state whose encoding names it, so a test can see which one a batch holds. */
function state(name: string, atMs: number): PendingState {
  return { memory: { name }, status: {} as LoopStatus, atMs };
}
const encode = (s: PendingState) => Buffer.from(String((s.memory as { name: string }).name));
/** What a batch would write per loop: the stored form and its time. */
function written(pending: PendingWrites, options: { encodedOnly?: boolean } = {}) {
  return pending
    .take(options)
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

  test('given a state saved again after it was encoded, the sliced flush writes the encoded one and keeps the newer one pending', () => {
    const pending = new PendingWrites();
    pending.saveState('a', state('a1', 1));
    pending.saveState('b', state('b1', 1));
    assert.equal(pending.encodeSome(10, encode), true);
    pending.saveState('a', state('a2', 2)); // a cycle ran while the flush was being sliced
    assert.deepEqual(written(pending, { encodedOnly: true }), [
      ['a', 'a1', 1],
      ['b', 'b1', 1],
    ]);
    assert.deepEqual(written(pending), [['a', 'a2', 2]], 'the newer state goes with the next flush');
  });

  test('given a state saved again after it was encoded, an immediate flush (a latched fault) writes the newest', () => {
    const pending = new PendingWrites();
    pending.saveState('a', state('a1', 1));
    pending.encodeSome(10, encode);
    pending.saveState('a', state('a2-latched', 2));
    assert.deepEqual(written(pending), [['a', 'a2-latched', 2]]);
    assert.equal(pending.dirty, false, 'nothing older is left to overwrite it later');
  });

  test('given a state never encoded, the sliced flush writes it as it is', () => {
    const pending = new PendingWrites();
    pending.saveState('a', state('a1', 1));
    assert.deepEqual(written(pending, { encodedOnly: true }), [['a', 'a1', 1]]);
  });

  test('given a failed sliced flush, the requeue keeps the newer state, not the earlier form', () => {
    const pending = new PendingWrites();
    pending.saveState('a', state('a1', 1));
    pending.encodeSome(10, encode);
    pending.saveState('a', state('a2', 2));
    const batch = pending.take({ encodedOnly: true });
    pending.requeue(batch); // the transaction failed (full disk)
    assert.deepEqual(written(pending), [['a', 'a2', 2]]);
  });
});
