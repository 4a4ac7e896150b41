import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DeviceLiveness, Reading } from '../../src/core/types.js';
import type { SensorDriver } from '../../src/drivers/types.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { Sampler } from '../../src/runtime/sampler.js';
import { recordingLogger } from '../support/logger.js';

const LIVENESS: DeviceLiveness = {
  via: 'availability zigbee2mqtt/probe/availability',
  maxQuietMs: 3_600_000,
  seenAtMs: 9_900,
};

/** A push driver (an MQTT sensor with liveness) that hands out `reading` as it is. */
function pushDriver(reading: () => Reading): SensorDriver {
  return {
    id: 'probe',
    simulated: false,
    read: async () => reading().value,
    readStamped: async () => reading(),
  };
}

function sampler(clock: ManualClock, driver: SensorDriver) {
  const readings: Reading[] = [];
  const made = new Sampler({
    clock,
    sensors: [{ driver, periodMs: 60_000 }],
    logger: recordingLogger({ level: 'debug' }).logger,
    onReading: (_id, reading) => readings.push(reading),
  });
  return { sampler: made, readings };
}

describe('Sampler and a reading with liveness', () => {
  test("the driver's liveness reaches the latest reading and the loops' hook", async () => {
    const clock = new ManualClock(10_000);
    const { sampler: s, readings } = sampler(
      clock,
      pushDriver(() => ({ value: 19.5, atMs: 9_000, liveness: LIVENESS })),
    );
    s.start();
    await clock.advance(0);
    const expected = { value: 19.5, atMs: 9_000, liveness: LIVENESS };
    assert.deepEqual(s.latest('probe'), expected);
    assert.deepEqual(s.latestForLoop('probe'), expected);
    assert.deepEqual(readings, [expected]);
  });

  test('a wall-clock step moves the liveness stamps with the reading (each keeps its real age)', async () => {
    const clock = new ManualClock(10_000);
    const liveness = { ...LIVENESS, offlineSinceMs: 9_950 };
    const { sampler: s } = sampler(
      clock,
      pushDriver(() => ({ value: 19.5, atMs: 9_000, liveness })),
    );
    s.start();
    await clock.advance(0);
    s.shiftTimes(-5_000);
    assert.deepEqual(s.latest('probe'), {
      value: 19.5,
      atMs: 4_000,
      liveness: { ...liveness, seenAtMs: 4_900, offlineSinceMs: 4_950 },
    });
  });
});
