import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { RealClock } from '../../src/runtime/real-clock.js';
import { ScaledClock } from '../../src/runtime/scaled-clock.js';

describe('ManualClock', () => {
  test('fires due timers in time order, each seeing its due time', async () => {
    const clock = new ManualClock(1_000);
    const fired: Array<[label: string, atMs: number]> = [];
    clock.setTimer(() => fired.push(['c', clock.nowMs()]), 300);
    clock.setTimer(() => fired.push(['a', clock.nowMs()]), 100);
    clock.setTimer(() => fired.push(['b', clock.nowMs()]), 100); // same due time: order of setting
    clock.setTimer(() => fired.push(['late', clock.nowMs()]), 1_000);

    await clock.advance(500);

    assert.deepEqual(fired, [
      ['a', 1_100],
      ['b', 1_100],
      ['c', 1_300],
    ]);
    assert.equal(clock.nowMs(), 1_500);
    assert.equal(clock.pendingTimers(), 1);
  });

  test('timers set by callbacks fire within the same advance; cleared timers never fire', async () => {
    const clock = new ManualClock();
    const fired: number[] = [];
    const cleared = clock.setTimer(() => fired.push(-1), 50);
    clock.setTimer(() => {
      fired.push(clock.nowMs());
      clock.setTimer(() => fired.push(clock.nowMs()), 0);
      clock.setTimer(() => fired.push(clock.nowMs()), 200);
    }, 100);
    clock.clearTimer(cleared);

    await clock.advance(250);

    assert.deepEqual(fired, [100, 100]);
    assert.equal(clock.pendingTimers(), 1);
  });

  test('async work started by a timer completes before the next timer fires', async () => {
    const clock = new ManualClock();
    const log: string[] = [];
    clock.setTimer(async () => {
      await Promise.resolve();
      await Promise.resolve();
      log.push('first done');
    }, 10);
    clock.setTimer(() => log.push('second'), 20);

    await clock.advance(20);

    assert.deepEqual(log, ['first done', 'second']);
  });
});

describe('ScaledClock', () => {
  test('time starts at the base time and runs `speed` times faster', async () => {
    const base = new ManualClock(1_000_000);
    const clock = new ScaledClock(60, base);
    assert.equal(clock.nowMs(), 1_000_000);

    await base.advance(1_000);

    assert.equal(clock.nowMs(), 1_000_000 + 60_000);
  });

  test('given a start, time starts there (a demo going on from its database) and runs `speed` times faster', async () => {
    const base = new ManualClock(1_000_000);
    const clock = new ScaledClock(60, base, 5_000_000);
    assert.equal(clock.nowMs(), 5_000_000);
    await base.advance(1_000);
    assert.equal(clock.nowMs(), 5_000_000 + 60_000);
  });

  test('a timer fires after delay/speed base ms', async () => {
    const base = new ManualClock();
    const clock = new ScaledClock(60, base);
    const firedAtMs: number[] = [];
    clock.setTimer(() => firedAtMs.push(clock.nowMs()), 60_000); // one simulated minute

    await base.advance(999);
    assert.deepEqual(firedAtMs, []);
    await base.advance(1);
    assert.deepEqual(firedAtMs, [60_000]);
  });

  test('clearTimer cancels through the base', async () => {
    const base = new ManualClock();
    const clock = new ScaledClock(10, base);
    let fired = false;
    clock.clearTimer(clock.setTimer(() => (fired = true), 100));

    await base.advance(1_000);

    assert.equal(fired, false);
    assert.equal(base.pendingTimers(), 0);
  });

  test('speed must be finite and > 0', () => {
    for (const speed of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => new ScaledClock(speed, new ManualClock()), RangeError, `speed=${speed}`);
    }
    assert.equal(new ScaledClock(0.5, new ManualClock(10)).nowMs(), 10);
  });
});

describe('RealClock', () => {
  test('reads Date.now and fires timers; a cleared timer does not fire', async () => {
    const clock = new RealClock();
    const before = Date.now();
    const nowMs = clock.nowMs();
    assert.ok(nowMs >= before && nowMs <= Date.now());

    const fired: string[] = [];
    clock.clearTimer(clock.setTimer(() => fired.push('cleared'), 0));
    await new Promise<void>((resolve) => clock.setTimer(resolve, 5));

    assert.deepEqual(fired, []);
  });
});
