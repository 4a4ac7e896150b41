/**
 * Several sensors per loop, end to end: the daemon reads each listed sensor from the
 * sampler, combines them every cycle and regulates on the result. Three simulated probes in one
 * cold room on a manual clock: one stuck high is dropped as an outlier while the heater keeps
 * running; one more lost (NaN) leaves fewer healthy than minHealthy and the heater goes off with
 * a reason naming both; good readings again, and the loop regulates again.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Daemon } from '../src/daemon/daemon.js';
import type { SimSensor } from '../src/drivers/sim/sensor.js';
import { buildDrivers, type Drivers } from '../src/kinds/build.js';
import { ManualClock } from '../src/runtime/manual-clock.js';
import { formatStatusLine } from '../src/status-line.js';
import { validConfig } from './support/config.js';
import { memoryDaemon } from './support/store.js';

const START_MS = Date.UTC(2026, 0, 1);

/** A cold room (ambient 10 °C, setpoint 20 °C) read by three probes: the heater runs flat out. */
const CONFIG = `
version: 1
node: { id: test }
simulation:
  plants:
    room: { kind: thermal, ambient: 10, timeConstantS: 3600 }
sensors:
  a: { kind: simulated, plant: room, periodS: 10 }
  b: { kind: simulated, plant: room, periodS: 10 }
  c: { kind: simulated, plant: room, periodS: 10 }
actuators:
  heater: { kind: simulated_relay, plant: room, gain: 20, windowS: 300, minOnS: 0, minOffS: 0 }
loops:
  room:
    sensors: [a, b, c]
    minHealthy: 2
    outlierLimit: 2
    raise: heater
    mode: heat
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis, coldTolerance: 0.3, hotTolerance: 0.3 }
`;

async function heaterLevel(drivers: Drivers): Promise<number | undefined> {
  return drivers.actuators.get('heater')!.observe();
}

function status(daemon: Daemon) {
  return daemon.statuses().find((s) => s.loop === 'room')!;
}

function condition(daemon: Daemon, type: string) {
  return status(daemon).conditions.find((c) => c.type === type);
}

const probe = (drivers: Drivers, id: string) => drivers.sensors.get(id) as SimSensor;

describe('daemon: a loop with several simulated sensors', () => {
  test('an outlier is dropped while heating goes on; fewer healthy than minHealthy: safe, naming the sensors; then back', async () => {
    const clock = new ManualClock(START_MS);
    const config = validConfig(CONFIG);
    const drivers = buildDrivers(config, () => clock.nowMs());
    const daemon = memoryDaemon(config, drivers, clock);
    await daemon.start();
    await clock.advance(60_000);

    assert.equal(await heaterLevel(drivers), 1, 'given a cold room, the heater runs');
    assert.deepEqual(status(daemon).sensors, {
      combine: 'median',
      used: ['a', 'b', 'c'],
      dropped: [],
      summary: 'median of 3',
    });

    // b sticks at 85 °C: an outlier, dropped; the loop heats on a and c.
    probe(drivers, 'b').injectFault({ kind: 'spike', value: 85 });
    await clock.advance(40_000);
    assert.equal(await heaterLevel(drivers), 1, 'still heating on the two good probes');
    const withOutlier = status(daemon);
    assert.deepEqual(withOutlier.sensors?.used, ['a', 'c']);
    assert.deepEqual(
      withOutlier.sensors?.dropped.map((d) => [d.sensor, d.reason]),
      [['b', 'Outlier']],
    );
    assert.ok(withOutlier.measured !== undefined && withOutlier.measured < 30, 'measured is not 85 °C');
    assert.equal(condition(daemon, 'SensorHealthy')?.status, 'True');
    assert.match(
      formatStatusLine(withOutlier, '°C'),
      /sensors: median of 3 \(dropped b: [\d.]+ °C from the others\)$/,
    );

    // c reads NaN: a and b are left, 83 °C apart: no majority, both dropped; none healthy, 2
    // needed: every actuator safe.
    probe(drivers, 'c').injectFault({ kind: 'nan' });
    await clock.advance(40_000);
    assert.equal(await heaterLevel(drivers), 0, 'fewer healthy than minHealthy: heater off');
    const healthy = condition(daemon, 'SensorHealthy');
    assert.equal(healthy?.status, 'False');
    assert.match(
      healthy?.message ?? '',
      /^0 of 3 sensors healthy, 2 needed \(a Disagree: .*; b Disagree: .*; c NotFinite: reading is NaN\)$/,
    );
    assert.equal(condition(daemon, 'Faulted')?.reason, 'SensorMissing');
    assert.equal(status(daemon).measured, undefined);

    // Both good again: regulating again.
    probe(drivers, 'b').injectFault({ kind: 'none' });
    probe(drivers, 'c').injectFault({ kind: 'none' });
    await clock.advance(40_000);
    assert.equal(await heaterLevel(drivers), 1, 'healthy again: heating again');
    assert.deepEqual(status(daemon).sensors?.dropped, []);
    await daemon.stop();
  });

  test('one probe of three reading NaN is dropped; the heater keeps running on the other two', async () => {
    const clock = new ManualClock(START_MS);
    const config = validConfig(CONFIG);
    const drivers = buildDrivers(config, () => clock.nowMs());
    const daemon = memoryDaemon(config, drivers, clock);
    await daemon.start();
    await clock.advance(60_000);
    probe(drivers, 'a').injectFault({ kind: 'nan' });
    await clock.advance(40_000);
    assert.equal(await heaterLevel(drivers), 1);
    assert.deepEqual(status(daemon).sensors?.dropped, [
      { sensor: 'a', reason: 'NotFinite', message: 'reading is NaN' },
    ]);
    assert.equal(status(daemon).sensors?.summary, 'median of 3 (dropped a: not a number)');
    assert.equal(condition(daemon, 'SensorHealthy')?.status, 'True');
    await daemon.stop();
  });

  test('a stale probe is dropped at its staleness, a fresh sibling never hides it (minHealthy 3)', async () => {
    const clock = new ManualClock(START_MS);
    const config = validConfig(CONFIG.replace('minHealthy: 2', 'minHealthy: 3'));
    assert.equal(config.loops.room!.staleAfterS, 30, "3 × periodS, the sensors' largest");
    const drivers = buildDrivers(config, () => clock.nowMs());
    const daemon = memoryDaemon(config, drivers, clock);
    await daemon.start();
    await clock.advance(60_000);
    assert.equal(await heaterLevel(drivers), 1);

    probe(drivers, 'a').injectFault({ kind: 'stale' }); // reads fail: a's last reading ages
    await clock.advance(45_000);
    assert.equal(await heaterLevel(drivers), 0, 'a stale: 2 of 3 healthy, 3 needed');
    assert.match(condition(daemon, 'SensorHealthy')?.message ?? '', /a Stale: last reading is \d+ s old/);
    assert.equal(condition(daemon, 'Faulted')?.reason, 'SensorStale');
    await daemon.stop();
  });

  test("a frozen fast probe beside a slow one: safe at the fast one's staleness (15 s), not the slow one's (900 s)", async () => {
    const clock = new ManualClock(START_MS);
    const config = validConfig(
      CONFIG.replace(
        '  a: { kind: simulated, plant: room, periodS: 10 }',
        '  a: { kind: simulated, plant: room, periodS: 5 }',
      )
        .replace(
          '  b: { kind: simulated, plant: room, periodS: 10 }',
          '  b: { kind: simulated, plant: room, periodS: 300 }',
        )
        .replace('sensors: [a, b, c]', 'sensors: [a, b]'),
    );
    assert.equal(config.loops.room!.staleAfterS, 900, "the loop's default: the largest, b's");
    const drivers = buildDrivers(config, () => clock.nowMs());
    const daemon = memoryDaemon(config, drivers, clock);
    await daemon.start();
    await clock.advance(60_000);
    assert.equal(await heaterLevel(drivers), 1, 'given a cold room, the heater runs on a and b');

    probe(drivers, 'a').injectFault({ kind: 'stale' }); // a's 1-Wire reads fail: its reading freezes
    await clock.advance(20_000);
    assert.equal(await heaterLevel(drivers), 0, 'a stale after 15 s: 1 of 2 healthy, 2 needed');
    assert.match(
      condition(daemon, 'SensorHealthy')?.message ?? '',
      /a Stale: last reading is \d+ s old \(limit 15 s\)/,
    );
    assert.equal(condition(daemon, 'Faulted')?.reason, 'SensorStale');
    await daemon.stop();
  });
});
