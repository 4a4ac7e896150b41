/** LoopRunner.shiftTimes: the armed cycle's due time follows a wall-clock step. */
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
  for (const shifted of [true, false]) {
    test(`given a cycle armed 20 s ahead and a step forward of 2 h${shifted ? ' passed to shiftTimes' : ' (not passed on)'}, a trigger ${shifted ? 'runs a cycle now' : 'is ignored until the armed time'}`, async () => {
      const clock = new ManualClock(1_000_000);
      const { loop, callsAtMs } = runner(clock);
      loop.start();
      await clock.advance(0);
      assert.equal(callsAtMs.length, 1);
      clock.stepWall(2 * HOUR_MS);
      if (shifted) loop.shiftTimes(2 * HOUR_MS);
      await clock.advance(1_000);
      loop.trigger('reading');
      await clock.advance(0);
      assert.equal(callsAtMs.length, shifted ? 2 : 1);
      await loop.stop();
    });
  }

  test('a step back: the armed cycle still comes after its 20 s, then on schedule', async () => {
    const clock = new ManualClock(1_000_000);
    const { loop, callsAtMs } = runner(clock);
    loop.start();
    await clock.advance(0);
    clock.stepWall(-2 * HOUR_MS);
    loop.shiftTimes(-2 * HOUR_MS);
    await clock.advance(40_000);
    assert.deepEqual(
      callsAtMs.map((t) => t - 1_000_000),
      [0, 20_000 - 2 * HOUR_MS, 40_000 - 2 * HOUR_MS],
    );
    await loop.stop();
  });
});
