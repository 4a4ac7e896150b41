import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CycleResult, LoopRunner, type LoopRunnerOptions } from '../../src/runtime/loop-runner.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { LogLevel, recordingLogger } from '../support/logger.js';

const ERROR = LogLevel.error;
const INFO = LogLevel.info;

type Step = 'ok' | 'fail' | CycleResult;

/**
 * A fake cycle that records the clock time of each call. `durationMs` makes it take clock time;
 * `steps` scripts its outcomes (the last repeats); default: succeed with no wake-up.
 */
function fakeCycle(clock: ManualClock, opts: { durationMs?: number; steps?: Step[] } = {}) {
  const callsAtMs: number[] = [];
  let active = 0;
  let maxActive = 0;
  const steps = opts.steps ?? ['ok'];
  const cycle = async (): Promise<CycleResult> => {
    const step = steps[Math.min(callsAtMs.length, steps.length - 1)] ?? 'ok';
    callsAtMs.push(clock.nowMs());
    active++;
    maxActive = Math.max(maxActive, active);
    try {
      if (opts.durationMs)
        await new Promise<void>((resolve) => clock.setTimer(resolve, opts.durationMs ?? 0));
      if (step === 'fail') throw new Error('device unreachable');
      return step === 'ok' ? {} : step;
    } finally {
      active--;
    }
  };
  return { cycle, callsAtMs, maxActive: () => maxActive };
}

function makeRunner(
  clock: ManualClock,
  cycle: () => Promise<CycleResult>,
  extra: Partial<LoopRunnerOptions> = {},
) {
  const log = recordingLogger({ level: 'debug' });
  const runner = new LoopRunner({
    name: 'greenhouse',
    clock,
    cycle,
    resyncMs: 30_000,
    backoff: { initialMs: 1_000, maxMs: 8_000 },
    logger: log.logger,
    ...extra,
  });
  return { runner, log };
}

describe('LoopRunner', () => {
  test('given a started runner, the first cycle runs at once', async () => {
    const clock = new ManualClock(5_000);
    const fake = fakeCycle(clock);
    const { runner } = makeRunner(clock, fake.cycle);

    runner.start();
    await clock.advance(0);

    assert.deepEqual(fake.callsAtMs, [5_000]);
    assert.equal(runner.stats.cycles, 1);
    assert.equal(runner.stats.lastSuccessMs, 5_000);
  });

  test('with no triggers, it resyncs every resyncMs', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock);
    const { runner } = makeRunner(clock, fake.cycle);

    runner.start();
    await clock.advance(95_000);

    assert.deepEqual(fake.callsAtMs, [0, 30_000, 60_000, 90_000]);
  });

  test('10 triggers during a slow cycle make exactly one follow-up cycle, never overlapping', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock, { durationMs: 500 });
    const { runner } = makeRunner(clock, fake.cycle);
    runner.start();
    await clock.advance(100); // first cycle is running until t=500

    for (let i = 0; i < 10; i++) runner.trigger(`sensor update ${i}`);
    await clock.advance(10_000);

    assert.deepEqual(fake.callsAtMs, [0, 500]); // follow-up right after the first; then quiet until resync
    assert.equal(fake.maxActive(), 1);
  });

  test('triggers while idle coalesce into one cycle at delay 0', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock);
    const { runner } = makeRunner(clock, fake.cycle);
    runner.start();
    await clock.advance(5_000);

    runner.trigger('command');
    runner.trigger('mqtt setpoint');
    runner.trigger('edge');
    await clock.advance(1_000);

    assert.deepEqual(fake.callsAtMs, [0, 5_000]);
  });

  test('triggers before start() and after stop() do nothing', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock);
    const { runner } = makeRunner(clock, fake.cycle);

    runner.trigger('too early');
    await clock.advance(1_000);
    assert.deepEqual(fake.callsAtMs, []);

    runner.start();
    await clock.advance(0);
    await runner.stop();
    runner.trigger('too late');
    await clock.advance(100_000);
    assert.deepEqual(fake.callsAtMs, [1_000]);
  });

  test('nextWakeMs is honoured, capped by the resync, and asap when in the past', async () => {
    // Each row: what the first cycle returns → when the second cycle runs.
    const table: Array<[label: string, result: CycleResult, secondAtMs: number]> = [
      ['relay switches in 7 s', { nextWakeMs: 7_000 }, 7_000],
      ['wake-up later than resync', { nextWakeMs: 90_000 }, 30_000],
      ['wake-up already past', { nextWakeMs: -5 }, 0],
      ['no wake-up', {}, 30_000],
    ];
    for (const [label, result, secondAtMs] of table) {
      const clock = new ManualClock();
      const fake = fakeCycle(clock, { steps: [result, 'ok'] });
      const { runner } = makeRunner(clock, fake.cycle);
      runner.start();
      await clock.advance(secondAtMs);
      assert.deepEqual(fake.callsAtMs, [0, secondAtMs], label);
      await runner.stop();
    }
  });

  test('a failing cycle is retried after 1, 2, 4, 8, 8 s (capped), logged once per streak', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock, { steps: ['fail'] });
    const { runner, log } = makeRunner(clock, fake.cycle, { resyncMs: 60_000 });

    runner.start();
    await clock.advance(31_000);

    const table: Array<[attempt: number, atMs: number]> = [
      [1, 0],
      [2, 1_000],
      [3, 3_000],
      [4, 7_000],
      [5, 15_000],
      [6, 23_000],
      [7, 31_000],
    ];
    assert.deepEqual(
      fake.callsAtMs,
      table.map(([, atMs]) => atMs),
    );
    assert.equal(runner.stats.failures, 7);
    assert.equal(runner.stats.consecutiveFailures, 7);
    assert.equal(runner.stats.lastError, 'device unreachable');
    assert.equal(runner.stats.lastSuccessMs, undefined);
    const errors = log.atLevel(ERROR);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.name, 'greenhouse');
    assert.equal((errors[0]?.err as { message?: string } | undefined)?.message, 'device unreachable');
  });

  test('success ends the streak: logged as recovered, backoff reset, the next streak logged again', async () => {
    const clock = new ManualClock();
    // fail, fail, fail, ok (nextWake +1 s), fail, ok
    const fake = fakeCycle(clock, {
      steps: ['fail', 'fail', 'fail', { nextWakeMs: 8_000 }, 'fail', 'ok'],
    });
    const { runner, log } = makeRunner(clock, fake.cycle);

    runner.start();
    await clock.advance(7_000); // fails at 0, 1000, 3000; succeeds at 7000
    assert.equal(runner.stats.consecutiveFailures, 0);
    assert.equal(runner.stats.lastSuccessMs, 7_000);
    assert.deepEqual(
      log.atLevel(INFO).map((l) => l.msg),
      ['greenhouse: recovered after 3 failures'],
    );

    await clock.advance(2_000); // fails at 8000; the new streak starts again at 1 s
    assert.deepEqual(fake.callsAtMs, [0, 1_000, 3_000, 7_000, 8_000, 9_000]);
    assert.equal(log.atLevel(ERROR).length, 2);
    assert.equal(runner.stats.failures, 4);
    assert.equal(runner.stats.consecutiveFailures, 0);
  });

  test('triggers during a backoff wait for it to elapse', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock, { steps: ['fail', 'fail', 'ok'] });
    const { runner } = makeRunner(clock, fake.cycle);
    runner.start();
    await clock.advance(100); // failed at 0, retry due at 1000

    runner.trigger('sensor update');
    await clock.advance(800);
    assert.deepEqual(fake.callsAtMs, [0]);

    await clock.advance(100); // t=1000, fails again: next retry at 3000
    runner.trigger('command');
    await clock.advance(1_999);
    assert.deepEqual(fake.callsAtMs, [0, 1_000]);
    await clock.advance(1);
    assert.deepEqual(fake.callsAtMs, [0, 1_000, 3_000]);
  });

  test('a trigger during a failing cycle still waits out the backoff', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock, { durationMs: 100, steps: ['fail', 'ok'] });
    const { runner } = makeRunner(clock, fake.cycle);
    runner.start();
    await clock.advance(50);

    runner.trigger('edge');
    await clock.advance(5_000);

    assert.deepEqual(fake.callsAtMs, [0, 1_100]); // failed at 100, retried after 1 s, not at once
  });

  test('onCycleSuccess gets the clock time of each successful cycle only', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock, { steps: ['ok', 'fail', 'ok'] });
    const livenessAtMs: number[] = [];
    const { runner } = makeRunner(clock, fake.cycle, {
      resyncMs: 10_000,
      onCycleSuccess: (atMs) => livenessAtMs.push(atMs),
    });

    runner.start();
    await clock.advance(11_000); // ok at 0, fail at 10000, ok at 11000

    assert.deepEqual(livenessAtMs, [0, 11_000]);
  });

  test('stop() waits for the in-flight cycle, and nothing runs after it', async () => {
    const clock = new ManualClock();
    let finishCycle!: () => void;
    let calls = 0;
    const cycle = (): Promise<CycleResult> => {
      calls++;
      return new Promise((resolve) => {
        finishCycle = () => resolve({ nextWakeMs: 0 });
      });
    };
    const { runner } = makeRunner(clock, cycle);
    runner.start();
    await clock.advance(0);
    assert.equal(calls, 1);

    let stopped = false;
    const stopping = runner.stop().then(() => {
      stopped = true;
    });
    runner.trigger('late sensor update');
    await clock.advance(1_000);
    assert.equal(stopped, false, 'stop() must wait for the in-flight cycle');

    finishCycle();
    await stopping;
    assert.equal(stopped, true);
    await clock.advance(100_000);
    assert.equal(calls, 1);
    assert.equal(clock.pendingTimers(), 0);
  });

  test('stop() when idle cancels the scheduled cycle', async () => {
    const clock = new ManualClock();
    const fake = fakeCycle(clock);
    const { runner } = makeRunner(clock, fake.cycle);
    runner.start();
    await clock.advance(0);

    await runner.stop();
    await clock.advance(100_000);

    assert.deepEqual(fake.callsAtMs, [0]);
    assert.equal(clock.pendingTimers(), 0);
  });

  test('rejects a non-positive resyncMs', () => {
    const clock = new ManualClock();
    assert.throws(() => makeRunner(clock, fakeCycle(clock).cycle, { resyncMs: 0 }), RangeError);
  });
});
