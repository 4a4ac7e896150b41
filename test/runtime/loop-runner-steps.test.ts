/**
 * LoopRunner after a wall-clock step: its due times are monotonic, so nothing has to be told of
 * the step (there was a shiftTimes for it; without it, a trigger after a step forward was taken
 * for one later than the armed cycle and ignored for the size of the step).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LoopRunner } from '../../src/runtime/loop-runner.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { silentLogger } from '../support/logger.js';

const HOUR_MS = 3_600_000;

function runner(clock: ManualClock) {
  const callsAtMs: number[] = [];
  const loop = new LoopRunner({
    name: 'room',
    clock,
    // Every cycle asks to be woken 20 s later.
    cycle: async () => {
      callsAtMs.push(clock.nowMs());
      return { nextWakeMs: clock.nowMs() + 20_000 };
    },
    resyncMs: 30_000,
    backoff: { initialMs: 1_000, maxMs: 60_000 },
    logger: silentLogger,
  });
  return { loop, callsAtMs };
}

describe('LoopRunner after a wall-clock step', () => {
  test('given a cycle armed 20 s ahead and a step forward of 2 h, a trigger runs a cycle now', async () => {
    const clock = new ManualClock(1_000_000);
    const { loop, callsAtMs } = runner(clock);
    loop.start();
    await clock.advance(0);
    assert.equal(callsAtMs.length, 1);
    clock.stepWall(2 * HOUR_MS);
    await clock.advance(1_000);
    loop.trigger('reading');
    await clock.advance(0);
    assert.equal(callsAtMs.length, 2);
    await loop.stop();
  });

  test('given a failure streak, the retry comes after its backoff whichever way the wall clock steps', async () => {
    for (const stepMs of [2 * HOUR_MS, -2 * HOUR_MS]) {
      const clock = new ManualClock(1_000_000);
      const attemptsAtMs: number[] = [];
      const loop = new LoopRunner({
        name: 'room',
        clock,
        cycle: async () => {
          attemptsAtMs.push(clock.monotonicMs());
          throw new Error('sensor bus down');
        },
        resyncMs: 30_000,
        backoff: { initialMs: 1_000, maxMs: 60_000 },
        logger: silentLogger,
      });
      loop.start();
      await clock.advance(0);
      clock.stepWall(stepMs);
      loop.trigger('reading'); // during the backoff: waits it out
      await clock.advance(999);
      assert.equal(attemptsAtMs.length, 1, `step ${stepMs}: not before the backoff`);
      await clock.advance(1);
      assert.deepEqual(
        attemptsAtMs.map((t) => t - 1_000_000),
        [0, 1_000],
        `step ${stepMs}`,
      );
      await loop.stop();
    }
  });

  test('a step back: the armed cycle still comes after its 20 s, then on schedule', async () => {
    const clock = new ManualClock(1_000_000);
    const { loop, callsAtMs } = runner(clock);
    loop.start();
    await clock.advance(0);
    clock.stepWall(-2 * HOUR_MS);
    await clock.advance(40_000);
    assert.deepEqual(
      callsAtMs.map((t) => t - 1_000_000),
      [0, 20_000 - 2 * HOUR_MS, 40_000 - 2 * HOUR_MS],
    );
    await loop.stop();
  });
});
