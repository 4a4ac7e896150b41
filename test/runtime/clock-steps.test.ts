/**
 * Wall-clock steps (NTP correcting a Pi without a real-time clock, `date -s`): every clock
 * tells its listeners by how much wall time jumped, and its timers are not moved by it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { RealClock } from '../../src/runtime/real-clock.js';
import { ScaledClock } from '../../src/runtime/scaled-clock.js';

const HOUR_MS = 3_600_000;

/** Wall and monotonic time a test moves by hand, as the kernel would. */
function fakeTime(wallStartMs = Date.UTC(2026, 0, 1)) {
  const t = { wallMs: wallStartMs, monoMs: 5_000 };
  return {
    t,
    /** Both clocks tick (time passes). */
    pass(ms: number) {
      t.wallMs += ms;
      t.monoMs += ms;
    },
    /** Only the wall clock moves (a step). */
    step(ms: number) {
      t.wallMs += ms;
    },
    clockOptions: { wallMs: () => t.wallMs, monotonicMs: () => t.monoMs },
  };
}

describe('RealClock step detection', () => {
  test('given wall and monotonic time ticking together, no step is reported, however long it runs', () => {
    const time = fakeTime();
    const clock = new RealClock(time.clockOptions);
    const steps: number[] = [];
    clock.onStep((d) => steps.push(d));
    for (let i = 0; i < 1_000; i++) {
      time.pass(60_000);
      clock.nowMs();
    }
    assert.deepEqual(steps, []);
  });

  const table: Array<[name: string, stepMs: number, reported: number[]]> = [
    ['a step forward of 2 h', 2 * HOUR_MS, [2 * HOUR_MS]],
    ['a step back of 2 h', -2 * HOUR_MS, [-2 * HOUR_MS]],
    ['a step of 5 s', 5_000, [5_000]],
    ['a slew of 0.9 s (below the 1 s threshold)', 900, []],
  ];
  for (const [name, stepMs, reported] of table) {
    test(`${name}: reported as ${JSON.stringify(reported)}, and nowMs returns the new wall time`, () => {
      const time = fakeTime();
      const clock = new RealClock(time.clockOptions);
      const steps: Array<[delta: number, seenBeforeReturn: boolean]> = [];
      let returned = false;
      clock.onStep((d) => steps.push([d, !returned]));
      time.pass(10_000);
      clock.nowMs();
      time.step(stepMs);
      time.pass(1_000);
      const now = clock.nowMs();
      returned = true;
      assert.equal(now, time.t.wallMs);
      assert.deepEqual(
        steps.map(([d]) => d),
        reported,
      );
      assert.ok(
        steps.every(([, before]) => before),
        'listeners hear of the step before the new time is used',
      );
      clock.nowMs();
      assert.equal(steps.length, reported.length, 'reported once');
    });
  }

  test('slow drift is absorbed read by read, never adding up to a step', () => {
    const time = fakeTime();
    const clock = new RealClock(time.clockOptions);
    const steps: number[] = [];
    clock.onStep((d) => steps.push(d));
    for (let i = 0; i < 100; i++) {
      time.pass(10_000);
      time.step(100); // 1 % fast: 10 s of drift in all
      clock.nowMs();
    }
    assert.deepEqual(steps, []);
  });

  test('unsubscribing stops the reports', () => {
    const time = fakeTime();
    const clock = new RealClock(time.clockOptions);
    const steps: number[] = [];
    const off = clock.onStep((d) => steps.push(d));
    off();
    time.step(HOUR_MS);
    clock.nowMs();
    assert.deepEqual(steps, []);
  });

  test('a listener that throws does not make reading the time throw', () => {
    const time = fakeTime();
    const clock = new RealClock(time.clockOptions);
    const steps: number[] = [];
    clock.onStep(() => {
      throw new Error('broken listener');
    });
    clock.onStep((d) => steps.push(d));
    time.step(HOUR_MS);
    assert.equal(clock.nowMs(), time.t.wallMs);
    assert.deepEqual(steps, [HOUR_MS]);
  });

  test('the default sources are Date.now and performance.now', () => {
    const clock = new RealClock();
    const before = Date.now();
    const now = clock.nowMs();
    assert.ok(now >= before && now <= Date.now());
  });
});

describe('ManualClock.stepWall', () => {
  test('given pending timers, when wall time steps, then nowMs jumps, the timers keep their delays and listeners hear it', async () => {
    const clock = new ManualClock(1_000);
    const fired: Array<[label: string, atMs: number]> = [];
    const steps: number[] = [];
    clock.onStep((d) => steps.push(d));
    clock.setTimer(() => fired.push(['a', clock.nowMs()]), 100);
    clock.setTimer(() => fired.push(['b', clock.nowMs()]), 300);

    clock.stepWall(HOUR_MS);
    assert.equal(clock.nowMs(), 1_000 + HOUR_MS);
    assert.deepEqual(steps, [HOUR_MS]);
    await clock.advance(100);
    assert.deepEqual(fired, [['a', 1_100 + HOUR_MS]], 'fired after 100 ms, not at once');

    clock.stepWall(-2 * HOUR_MS);
    await clock.advance(200);
    assert.deepEqual(fired[1], ['b', 1_300 - HOUR_MS], 'fired after 300 ms in all, not 2 h later');
    assert.deepEqual(steps, [HOUR_MS, -2 * HOUR_MS]);
  });
});

describe('ScaledClock and steps', () => {
  test('a step of the base is not scaled: simulated time steps by the same amount and the step is passed on', async () => {
    const base = new ManualClock(1_000_000);
    const scaled = new ScaledClock(60, base);
    const steps: number[] = [];
    scaled.onStep((d) => steps.push(d));
    await base.advance(1_000);
    assert.equal(scaled.nowMs(), 1_000_000 + 60_000);
    base.stepWall(2 * HOUR_MS);
    assert.equal(scaled.nowMs(), 1_000_000 + 60_000 + 2 * HOUR_MS, 'not 120 h');
    assert.deepEqual(steps, [2 * HOUR_MS]);
    await base.advance(1_000);
    assert.equal(scaled.nowMs(), 1_000_000 + 120_000 + 2 * HOUR_MS, 'then runs on at 60×');
    base.stepWall(-3 * HOUR_MS);
    assert.equal(scaled.nowMs(), 1_000_000 + 120_000 - HOUR_MS);
    assert.deepEqual(steps, [2 * HOUR_MS, -3 * HOUR_MS]);
  });

  test('over a RealClock: a step noticed while reading the time is reported before it is returned', () => {
    const time = fakeTime(1_000_000);
    const scaled = new ScaledClock(10, new RealClock(time.clockOptions));
    const steps: number[] = [];
    scaled.onStep((d) => steps.push(d));
    time.pass(1_000);
    assert.equal(scaled.nowMs(), 1_010_000);
    time.step(-HOUR_MS);
    assert.equal(scaled.nowMs(), 1_010_000 - HOUR_MS);
    assert.deepEqual(steps, [-HOUR_MS]);
  });
});
