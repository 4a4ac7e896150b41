/**
 * Sensors a loop records without regulating (loops.<id>.record), through the whole
 * daemon on a manual clock: each recorded sensor is sampled on its own period and its values
 * stored in the loop's history; the loop regulates on its own sensor only, and a recorded sensor
 * that reads NaN or stops reading leaves it regulating, with SensorHealthy untouched: a gap.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Daemon } from '../../src/daemon/daemon.js';
import type { SimSensor } from '../../src/drivers/sim/sensor.js';
import { buildDrivers } from '../../src/kinds/build.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { readRecorded } from '../../src/store/recorded-store.js';
import { validConfig } from '../support/config.js';
import { silentLogger } from '../support/logger.js';
import { inMemoryStore } from '../support/store.js';

const START_MS = Date.UTC(2026, 0, 1);
const MINUTE_MS = 60_000;

/** A cold room heated to 20 °C, recording an outdoor probe at -5 °C (read every 60 s). */
const CONFIG = `
version: 1
node: { id: test }
simulation:
  plants:
    room: { kind: thermal, ambient: 10, timeConstantS: 3600 }
    outside: { kind: thermal, ambient: -5, timeConstantS: 3600 }
sensors:
  t: { kind: simulated, plant: room, periodS: 10 }
  outdoor: { kind: simulated, plant: outside, periodS: 60 }
actuators:
  heater: { kind: simulated_relay, plant: room, gain: 20, windowS: 300, minOnS: 120, minOffS: 60 }
loops:
  room:
    sensor: t
    raise: heater
    mode: heat
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis, coldTolerance: 0.3, hotTolerance: 0.3 }
    record: [{ sensor: outdoor, label: outdoor temperature }]
`;

async function started() {
  const clock = new ManualClock(START_MS);
  const config = validConfig(CONFIG);
  const drivers = buildDrivers(config, () => clock.nowMs());
  const { store, configText } = inMemoryStore(clock);
  const daemon = new Daemon({
    config,
    clock,
    logger: silentLogger,
    drivers,
    statusEveryMs: 0,
    store,
    configText,
  });
  await daemon.start();
  await clock.advance(10 * MINUTE_MS);
  const outdoor = drivers.sensors.get('outdoor') as SimSensor;
  const heater = () => drivers.actuators.get('heater')!.observe();
  const status = () => daemon.statuses()[0]!;
  const recorded = () => {
    store.state.flush();
    return (
      readRecorded(store.database, 'room', { fromMs: 0, untilMs: Number.MAX_SAFE_INTEGER })[0]?.points ?? []
    );
  };
  return { clock, daemon, outdoor, heater, status, recorded };
}

describe('a recorded sensor is stored, never regulated on', () => {
  test('given 10 minutes, then the outdoor probe has a point per minute in the loop history, and the loop measures its own sensor', async () => {
    const { daemon, heater, status, recorded } = await started();
    const points = recorded();
    assert.ok(points.length >= 10 && points.length <= 11, `${points.length} points`);
    assert.ok(
      points.every((p) => p.value !== null && Math.abs(p.value + 5) < 0.5),
      JSON.stringify(points[0]),
    );
    for (let i = 1; i < points.length; i++) assert.equal(points[i]!.atMs - points[i - 1]!.atMs, MINUTE_MS);
    assert.ok(status().measured! > 5, `measured ${status().measured}: the room, not the outdoor probe`);
    assert.equal(await heater(), 1, 'a cold room: the heater runs');
    assert.ok(
      !JSON.stringify(status().conditions).includes('outdoor'),
      'no condition names the recorded sensor',
    );
    await daemon.stop();
  });

  const faults = [
    { name: 'reads NaN', fault: { kind: 'nan' } as const, gapPoints: true },
    { name: 'stops reading (every read fails)', fault: { kind: 'stale' } as const, gapPoints: false },
  ];
  for (const { name, fault, gapPoints } of faults) {
    test(`given the heater running, when the recorded sensor ${name} for 10 minutes, then the loop keeps regulating, SensorHealthy True, and the series has a gap`, async () => {
      const { clock, daemon, outdoor, heater, status, recorded } = await started();
      const before = recorded().length;
      outdoor.injectFault(fault);
      await clock.advance(10 * MINUTE_MS); // far beyond outdoor's staleAfterS (180 s)
      assert.equal(await heater(), 1, 'the heater still runs');
      const healthy = status().conditions.find((c) => c.type === 'SensorHealthy');
      assert.equal(healthy?.status, 'True', JSON.stringify(healthy));
      assert.equal(status().conditions.find((c) => c.type === 'Faulted')?.status ?? 'False', 'False');
      const during = recorded().slice(before);
      if (gapPoints) {
        assert.ok(during.length >= 9, `${during.length} NaN points`);
        assert.ok(
          during.every((p) => p.value === null),
          'each NaN stored as a gap',
        );
      } else assert.equal(during.length, 0, 'no point while every read fails');
      outdoor.injectFault({ kind: 'none' });
      await clock.advance(2 * MINUTE_MS);
      assert.ok(recorded().at(-1)!.value !== null, 'values again once it reads');
      await daemon.stop();
    });
  }
});
