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
    clock.stepWall(-5_000);
    assert.deepEqual(s.latest('probe'), {
      value: 19.5,
      atMs: 4_000,
      liveness: { ...liveness, seenAtMs: 4_900, offlineSinceMs: 4_950 },
    });
  });
});

describe('Sampler and a wall-clock step while a read is in flight', () => {
  test('given a push read stamped before the step and landing after it, then its stamps move with the step', async () => {
    const clock = new ManualClock(10_000);
    let land: (reading: Reading) => void = () => {};
    const driver: SensorDriver = {
      id: 'probe',
      simulated: false,
      read: async () => Number.NaN,
      readStamped: () => new Promise<Reading>((resolve) => (land = resolve)),
    };
    const { sampler: s, readings } = sampler(clock, driver);
    s.start();
    await clock.advance(0);
    clock.stepWall(-5_000);
    land({ value: 19.5, atMs: 9_000, liveness: LIVENESS });
    await clock.advance(0);
    const expected = { value: 19.5, atMs: 4_000, liveness: { ...LIVENESS, seenAtMs: 4_900 } };
    assert.deepEqual(readings, [expected], 'the loops hear it in the new frame');
    assert.deepEqual(s.latest('probe'), expected);
  });

  test('given a plain read landing after a step back, then it is stamped now, in the new frame', async () => {
    const clock = new ManualClock(10_000);
    let land: (value: number) => void = () => {};
    const driver: SensorDriver = {
      id: 'probe',
      simulated: false,
      read: () => new Promise<number>((resolve) => (land = resolve)),
    };
    const { sampler: s } = sampler(clock, driver);
    s.start();
    await clock.advance(0);
    clock.stepWall(-5_000);
    land(21);
    await clock.advance(0);
    assert.deepEqual(s.latest('probe'), { value: 21, atMs: 5_000 });
  });
});
