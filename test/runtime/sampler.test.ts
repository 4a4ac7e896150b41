import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Reading } from '../../src/core/types.js';
import type { SensorDriver } from '../../src/drivers/types.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { type SampledSensor, Sampler } from '../../src/runtime/sampler.js';
import { LogLevel, recordingLogger } from '../support/logger.js';

const WARN = LogLevel.warn;
const INFO = LogLevel.info;

/** What one read does: return a value, or throw. */
type Outcome = number | { throws: string };

/** Counts reads running at once across all fake sensors of a test. */
class Concurrency {
  active = 0;
  max = 0;
}

/**
 * A fake sensor recording the clock time each read starts. A read takes `readMs` of clock time;
 * `outcomes` scripts the results (the last repeats).
 */
class FakeSensor implements SensorDriver {
  readonly simulated = true;
  readonly startsAtMs: number[] = [];

  constructor(
    readonly id: string,
    private readonly clock: ManualClock,
    private readonly opts: { readMs?: number; outcomes?: Outcome[]; concurrency?: Concurrency } = {},
  ) {}

  async read(): Promise<number> {
    const outcomes = this.opts.outcomes ?? [20];
    const outcome = outcomes[Math.min(this.startsAtMs.length, outcomes.length - 1)] ?? 20;
    this.startsAtMs.push(this.clock.nowMs());
    const concurrency = this.opts.concurrency ?? new Concurrency();
    concurrency.active++;
    concurrency.max = Math.max(concurrency.max, concurrency.active);
    try {
      const readMs = this.opts.readMs ?? 0;
      if (readMs > 0) await new Promise<void>((resolve) => this.clock.setTimer(resolve, readMs));
      if (typeof outcome === 'number') return outcome;
      throw new Error(outcome.throws);
    } finally {
      concurrency.active--;
    }
  }
}

/** At clock time `atMs` (after advancing to it): sensor t1's latest reading, and the error recorded (a match) or none. */
type TimelineRow = [atMs: number, latest: Reading, error: RegExp | undefined];

/** Advances `clock` through `table`, checking t1's latest reading and recorded error at each row. */
async function expectTimeline(clock: ManualClock, sampler: Sampler, table: TimelineRow[]): Promise<void> {
  for (const [atMs, latest, error] of table) {
    await clock.advance(atMs - clock.nowMs());
    assert.deepEqual(sampler.latest('t1'), latest, `t=${atMs}`);
    const recorded = sampler.errors.get('t1');
    if (error === undefined) assert.equal(recorded, undefined, `t=${atMs}`);
    else assert.match(recorded ?? '', error, `t=${atMs}`);
  }
}

function makeSampler(clock: ManualClock, sensors: SampledSensor[], maxConcurrentReads?: number) {
  const log = recordingLogger({ level: 'debug' });
  const readings: Array<[string, Reading]> = [];
  const sampler = new Sampler({
    clock,
    sensors,
    logger: log.logger,
    onReading: (id, reading) => readings.push([id, reading]),
    ...(maxConcurrentReads === undefined ? {} : { maxConcurrentReads }),
  });
  return { sampler, log, readings };
}

describe('Sampler', () => {
  test('reads every sensor at start, then each on its own period', async () => {
    const clock = new ManualClock();
    const fast = new FakeSensor('fast', clock);
    const slow = new FakeSensor('slow', clock);
    const { sampler } = makeSampler(clock, [
      { driver: fast, periodMs: 1_000 },
      { driver: slow, periodMs: 3_000 },
    ]);

    sampler.start();
    await clock.advance(6_000);

    assert.deepEqual(fast.startsAtMs, [0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000]);
    assert.deepEqual(slow.startsAtMs, [0, 3_000, 6_000]);
    assert.deepEqual(sampler.latest('fast'), { value: 20, atMs: 6_000 });
  });

  test('a slow read delays neither a fast sensor nor itself twice', async () => {
    const clock = new ManualClock();
    const fast = new FakeSensor('fast', clock);
    const ds18b20 = new FakeSensor('ds18b20', clock, { readMs: 2_500 });
    const { sampler } = makeSampler(clock, [
      { driver: ds18b20, periodMs: 1_000 },
      { driver: fast, periodMs: 1_000 },
    ]);

    sampler.start();
    await clock.advance(3_000);

    assert.deepEqual(fast.startsAtMs, [0, 1_000, 2_000, 3_000]);
    // Still reading at 1000 and 2000: those periods are skipped, not queued up.
    assert.deepEqual(ds18b20.startsAtMs, [0, 3_000]);
    assert.deepEqual(
      sampler.latest('ds18b20'),
      { value: 20, atMs: 2_500 },
      'stamped when the read completed',
    );
  });

  test('no more than maxConcurrentReads reads run at once; the rest queue in order', async () => {
    const table: Array<[maxConcurrentReads: number | undefined, startsAtMs: number[]]> = [
      [undefined, [0, 0, 750, 750, 1_500]], // default 2
      [1, [0, 750, 1_500, 2_250, 3_000]],
      [5, [0, 0, 0, 0, 0]],
    ];
    for (const [maxConcurrentReads, startsAtMs] of table) {
      const clock = new ManualClock();
      const concurrency = new Concurrency();
      const sensors = ['a', 'b', 'c', 'd', 'e'].map(
        (id) => new FakeSensor(id, clock, { readMs: 750, concurrency }),
      );
      const { sampler } = makeSampler(
        clock,
        sensors.map((driver) => ({ driver, periodMs: 60_000 })),
        maxConcurrentReads,
      );

      sampler.start();
      await clock.advance(5_000);

      const label = `maxConcurrentReads=${maxConcurrentReads}`;
      assert.deepEqual(
        sensors.map((s) => s.startsAtMs[0]),
        startsAtMs,
        label,
      );
      assert.equal(concurrency.max, maxConcurrentReads ?? 2, label);
      await sampler.stop();
    }
  });

  test('a failing read keeps the last good reading with its old timestamp (it ages into stale)', async () => {
    const clock = new ManualClock();
    const sensor = new FakeSensor('t1', clock, {
      outcomes: [20, { throws: 'CRC mismatch' }, { throws: 'CRC mismatch' }, 22],
    });
    const { sampler, log, readings } = makeSampler(clock, [{ driver: sensor, periodMs: 1_000 }]);

    // Each row: clock time after advancing → latest reading, error recorded.
    const table: TimelineRow[] = [
      [0, { value: 20, atMs: 0 }, undefined],
      [1_000, { value: 20, atMs: 0 }, /CRC mismatch/],
      [2_000, { value: 20, atMs: 0 }, /CRC mismatch/],
      [3_000, { value: 22, atMs: 3_000 }, undefined],
    ];
    sampler.start();
    await expectTimeline(clock, sampler, table);

    assert.equal(log.atLevel(WARN).length, 1, 'one warning per failure streak, not per period');
    assert.equal(log.atLevel(INFO).length, 1, 'recovery logged once');
    assert.deepEqual(readings, [
      ['t1', { value: 20, atMs: 0 }],
      ['t1', { value: 22, atMs: 3_000 }],
    ]);
  });

  test('given a good reading, when the sensor reports NaN or Infinity, then that reading replaces it at once, stamped, and the loops are told', async () => {
    // A sensor saying "not a number" is a definite statement that the value is unknown now: the
    // loop must see it (judgeReading → NotFinite → safe state) in this cycle, not when the last
    // good reading goes stale minutes later.
    const clock = new ManualClock();
    const sensor = new FakeSensor('t1', clock, {
      outcomes: [20, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 22],
    });
    const { sampler, log, readings } = makeSampler(clock, [{ driver: sensor, periodMs: 1_000 }]);

    const table: TimelineRow[] = [
      [0, { value: 20, atMs: 0 }, undefined],
      [1_000, { value: Number.NaN, atMs: 1_000 }, /not a number \(NaN\)/],
      [2_000, { value: Number.POSITIVE_INFINITY, atMs: 2_000 }, /not a number \(Infinity\)/],
      [3_000, { value: Number.NEGATIVE_INFINITY, atMs: 3_000 }, /not a number \(-Infinity\)/],
      [4_000, { value: 22, atMs: 4_000 }, undefined],
    ];
    sampler.start();
    await expectTimeline(clock, sampler, table);
    assert.deepEqual(
      readings.map(([, r]) => r.value),
      [20, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 22],
      'every reading, good or not, triggers the loops',
    );
    assert.equal(log.atLevel(WARN).length, 1, 'one warning per streak of bad values');
    assert.equal(log.atLevel(INFO).length, 1, 'recovery logged once');
  });

  test('a push driver whose latest value is NaN hands it over with its arrival stamp', async () => {
    const clock = new ManualClock(10_000);
    const pushed: SensorDriver = {
      id: 'mqtt',
      simulated: false,
      read: async () => Number.NaN,
      readStamped: async () => ({ value: Number.NaN, atMs: 9_500 }),
    };
    const { sampler } = makeSampler(clock, [{ driver: pushed, periodMs: 1_000 }]);
    sampler.start();
    await clock.advance(0);
    assert.deepEqual(sampler.latest('mqtt'), { value: Number.NaN, atMs: 9_500 });
  });

  test('a sensor that never read has no latest reading', async () => {
    const clock = new ManualClock();
    const sensor = new FakeSensor('dead', clock, { outcomes: [{ throws: 'no such device' }] });
    const { sampler } = makeSampler(clock, [{ driver: sensor, periodMs: 1_000 }]);

    sampler.start();
    await clock.advance(2_000);

    assert.equal(sampler.latest('dead'), undefined);
    assert.equal(sampler.errors.get('dead'), 'no such device');
    assert.equal(sensor.startsAtMs.length, 3, 'keeps trying every period');
  });

  test('stop() waits for in-flight reads and no read starts afterwards', async () => {
    const clock = new ManualClock();
    const sensor = new FakeSensor('t1', clock, { readMs: 750 });
    const { sampler } = makeSampler(clock, [{ driver: sensor, periodMs: 1_000 }]);
    sampler.start();
    await clock.advance(100);

    let stopped = false;
    const stopping = sampler.stop().then(() => {
      stopped = true;
    });
    await clock.advance(600);
    assert.equal(stopped, false, 'the read started at 0 is still running');
    await clock.advance(50);
    await stopping;

    assert.deepEqual(sampler.latest('t1'), { value: 20, atMs: 750 });
    await clock.advance(10_000);
    assert.deepEqual(sensor.startsAtMs, [0]);
    assert.equal(clock.pendingTimers(), 0);
  });

  test('rejects duplicate sensor ids and bad periods', () => {
    const clock = new ManualClock();
    const a = new FakeSensor('a', clock);
    assert.throws(
      () =>
        makeSampler(clock, [
          { driver: a, periodMs: 1_000 },
          { driver: a, periodMs: 2_000 },
        ]),
      /duplicate sensor id "a"/,
    );
    assert.throws(() => makeSampler(clock, [{ driver: a, periodMs: 0 }]), RangeError);
    assert.throws(() => makeSampler(clock, [], 0), RangeError);
  });
});

describe('Sampler.reconfigure (config reload)', () => {
  test('given a running sampler, when the sensor set changes, then kept sensors keep their schedule and reading, new ones are read at once, removed ones stop', async () => {
    const clock = new ManualClock();
    const kept = new FakeSensor('kept', clock, { outcomes: [21] });
    const dropped = new FakeSensor('dropped', clock, { outcomes: [5] });
    const { sampler } = makeSampler(clock, [
      { driver: kept, periodMs: 10_000 },
      { driver: dropped, periodMs: 10_000 },
    ]);
    sampler.start();
    await clock.advance(5_000);
    const keptReading = sampler.latest('kept');
    assert.ok(keptReading);

    const added = new FakeSensor('added', clock, { outcomes: [7] });
    sampler.reconfigure([
      { driver: kept, periodMs: 10_000 },
      { driver: added, periodMs: 10_000 },
    ]);
    await clock.advance(0);
    assert.deepEqual(sampler.latest('kept'), keptReading, 'kept sensor keeps its latest reading');
    assert.equal(sampler.latest('dropped'), undefined, 'removed sensor forgotten');
    assert.equal(sampler.latest('added')?.value, 7, 'new sensor read at once');

    await clock.advance(30_000);
    assert.deepEqual(kept.startsAtMs, [0, 10_000, 20_000, 30_000], 'kept schedule unchanged');
    assert.deepEqual(dropped.startsAtMs, [0], 'removed sensor no longer read');
    assert.deepEqual(added.startsAtMs, [5_000, 15_000, 25_000, 35_000]);
    await sampler.stop();
  });

  test('a replaced driver instance with the same id is a new sensor: its old reading is dropped', async () => {
    const clock = new ManualClock();
    const first = new FakeSensor('t', clock, { outcomes: [20] });
    const { sampler } = makeSampler(clock, [{ driver: first, periodMs: 10_000 }]);
    sampler.start();
    await clock.advance(1_000);
    assert.equal(sampler.latest('t')?.value, 20);
    const second = new FakeSensor('t', clock, { outcomes: [30] });
    sampler.reconfigure([{ driver: second, periodMs: 10_000 }]);
    await clock.advance(0);
    assert.equal(sampler.latest('t')?.value, 30);
    await clock.advance(20_000);
    assert.deepEqual(first.startsAtMs, [0], 'the old driver is not read again');
    await sampler.stop();
  });
});
