/**
 * What a push driver (an MQTT contact or probe) hands the sampler beyond its value: the reason
 * a value is not a number reaches the loop, and news that arrives while a read runs is read.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Reading } from '../../src/core/types.js';
import type { SensorDriver } from '../../src/drivers/types.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { Sampler } from '../../src/runtime/sampler.js';
import { silentLogger } from '../support/logger.js';

function samplerOf(driver: SensorDriver, clock = new ManualClock(10_000)) {
  const readings: Reading[] = [];
  const sampler = new Sampler({
    clock,
    sensors: [{ driver, periodMs: 60_000 }],
    logger: silentLogger,
    onReading: (_id, reading) => readings.push(reading),
  });
  return { sampler, readings, clock };
}

describe('Sampler and push drivers', () => {
  test('given a NaN with a reason, the reading and the error say that reason', async () => {
    const why = 'window: field contact is "banana", neither on (false) nor off (true)';
    const driver: SensorDriver = {
      id: 'window',
      simulated: false,
      read: async () => Number.NaN,
      readStamped: async () => ({ value: Number.NaN, atMs: 9_000, whyNotANumber: why }),
    };
    const { sampler, readings, clock } = samplerOf(driver);
    sampler.start();
    await clock.advance(0);
    assert.deepEqual(readings, [{ value: Number.NaN, atMs: 9_000, whyNotANumber: why }]);
    assert.equal(sampler.errors.get('window'), why);
    await sampler.stop();
  });

  test('given a NaN without a reason, the generic message stays', async () => {
    const driver: SensorDriver = { id: 'p', simulated: false, read: async () => Number.NaN };
    const { sampler, clock } = samplerOf(driver);
    sampler.start();
    await clock.advance(0);
    assert.equal(sampler.latest('p')?.whyNotANumber, undefined);
    assert.equal(sampler.errors.get('p'), 'sensor reports not a number (NaN)');
    await sampler.stop();
  });

  test('when readNow() comes while a read runs, the sensor is read once more after it', async () => {
    // given a read that is held open, then the driver's value changes (the news)
    let value = 0;
    const releases: (() => void)[] = [];
    const driver: SensorDriver = {
      id: 'window',
      simulated: false,
      read: () => {
        const seen = value;
        return new Promise<number>((resolve) => releases.push(() => resolve(seen)));
      },
    };
    const { sampler, readings, clock } = samplerOf(driver);
    sampler.start();
    await clock.advance(0);
    assert.equal(releases.length, 1, 'the first read is running');
    value = 1;
    sampler.readNow('window');
    sampler.readNow('window'); // twice: still one more read, not two
    // when the running read lands with the value from before the news
    releases[0]!();
    await clock.advance(0);
    // then a second read runs and brings the new value
    assert.equal(releases.length, 2, 'read again after the running read landed');
    releases[1]!();
    await clock.advance(0);
    assert.deepEqual(
      readings.map((r) => r.value),
      [0, 1],
    );
    assert.equal(releases.length, 2, 'no third read');
    await sampler.stop();
  });
});

describe('Sampler and a failed read after a reading with liveness', () => {
  // A device back online without a new value, or one whose signs of life stopped: the driver
  // refuses the value, and the liveness kept from before must not vouch for it.
  const livenesses: [string, NonNullable<Reading['liveness']>][] = [
    [
      'said offline',
      { via: 'availability probe/availability', maxQuietMs: 5_400_000, offlineSinceMs: 9_500 },
    ],
    ['was seen alive', { via: 'availability probe/availability', maxQuietMs: 5_400_000, seenAtMs: 9_900 }],
  ];
  for (const [what, liveness] of livenesses)
    test(`given a reading whose device ${what}, when the next read fails, then the kept reading loses its liveness (it ages alone)`, async () => {
      const offline: Reading = { value: 18, atMs: 9_000, liveness };
      let failing = false;
      const driver: SensorDriver = {
        id: 'probe',
        simulated: false,
        read: async () => 18,
        readStamped: async () => {
          if (failing) throw new Error('last value on probe is 300 s old (stale after 180 s)');
          return offline;
        },
      };
      const { sampler, clock } = samplerOf(driver);
      sampler.start();
      await clock.advance(0);
      assert.deepEqual(sampler.latest('probe'), offline);
      failing = true;
      sampler.readNow('probe');
      await clock.advance(0);
      assert.deepEqual(sampler.latest('probe'), { value: 18, atMs: 9_000 });
      assert.equal(sampler.errors.get('probe'), 'last value on probe is 300 s old (stale after 180 s)');
      await sampler.stop();
    });
});
