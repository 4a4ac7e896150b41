import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Daemon } from '../src/daemon/daemon.js';
import type { SimSensor } from '../src/drivers/sim/sensor.js';
import { buildDrivers } from '../src/kinds/build.js';
import { ManualClock } from '../src/runtime/manual-clock.js';
import { demoConfig } from './support/config.js';
import { memoryDaemon } from './support/store.js';

/** Runs the demo daemon on a manual clock, sampling actuator levels every `stepMs`. */
async function runDemo(minutes: number, onStep?: (daemon: Daemon, atMs: number) => Promise<void> | void) {
  const config = demoConfig();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const drivers = buildDrivers(config, () => clock.nowMs());
  const daemon = memoryDaemon(config, drivers, clock);
  await daemon.start();
  const stepMs = 5_000;
  for (let t = 0; t < minutes * 60_000; t += stepMs) {
    await clock.advance(stepMs);
    await onStep?.(daemon, clock.nowMs());
  }
  return { daemon, drivers, clock, config };
}

async function levels(daemon: Daemon): Promise<Record<string, number | undefined>> {
  const entries = await Promise.all(
    [...daemon.drivers.actuators.values()].map(async (d) => [d.id, await d.observe()] as const),
  );
  return Object.fromEntries(entries);
}

describe('daemon on the demo plants', () => {
  test('given the demo config, when it runs 75 simulated minutes, then every loop converges and heater and cooler are never on together', async () => {
    let bothOn = 0;
    const { daemon } = await runDemo(75, async (d) => {
      const now = await levels(d);
      if ((now.chamber_heater ?? 0) > 0 && (now.chamber_cooler ?? 0) > 0) bothOn++;
    });
    const byLoop = Object.fromEntries(daemon.statuses().map((s) => [s.loop, s]));
    assert.ok(byLoop.room && byLoop.fermenter && byLoop.greenhouse_humidity, 'every loop reports a status');
    assert.ok(Math.abs(byLoop.room.measured! - 20) < 0.8, `room at ${byLoop.room.measured}`);
    assert.ok(Math.abs(byLoop.fermenter.measured! - 18) < 0.8, `fermenter at ${byLoop.fermenter.measured}`);
    assert.ok(
      Math.abs(byLoop.greenhouse_humidity.measured! - 65) < 2,
      `greenhouse at ${byLoop.greenhouse_humidity.measured}`,
    );
    assert.equal(byLoop.greenhouse_humidity.action, 'humidifying');
    assert.equal(bothOn, 0);
    for (const status of daemon.statuses()) {
      assert.equal(status.observedGeneration, status.generation);
      assert.equal(status.conditions.find((c) => c.type === 'SensorHealthy')?.status, 'True');
    }
    await daemon.stop();
  });

  test('given a running heater, when the sensor goes stale, then the heater is off within staleAfterS and the loop reports Faulted', async () => {
    const { daemon, drivers, clock, config } = await runDemo(3);
    const before = await levels(daemon);
    assert.equal(before.room_heater, 1, 'a cold room starts with the heater on');
    (drivers.sensors.get('room_temp') as SimSensor).injectFault({ kind: 'stale' });
    const faultAtMs = clock.nowMs();
    const staleAfterMs = config.loops.room!.staleAfterS * 1000;
    await clock.advance(staleAfterMs + 15_000);
    const after = await levels(daemon);
    assert.equal(after.room_heater, 0);
    const room = daemon.statuses().find((s) => s.loop === 'room')!;
    const faulted = room.conditions.find((c) => c.type === 'Faulted')!;
    assert.equal(faulted.status, 'True');
    assert.equal(faulted.reason, 'SensorStale');
    assert.ok(faulted.lastTransitionMs > faultAtMs);
    await daemon.stop();
  });

  test('when the daemon stops, then every actuator is at its safe state', async () => {
    const { daemon } = await runDemo(10);
    const running = await levels(daemon);
    assert.ok(
      Object.values(running).some((level) => (level ?? 0) > 0),
      'something was on before stopping',
    );
    await daemon.stop('SIGTERM');
    assert.deepEqual(await levels(daemon), {
      room_heater: 0,
      chamber_heater: 0,
      chamber_cooler: 0,
      fogger: 0,
    });
  });
});
