/**
 * A greenhouse humidity loop on a BME280 read through the kernel, end to end in the daemon: the
 * config names the IIO file by a pattern under /sys, gpio.sysfsRoot points at a fixture tree
 * shaped like the kernel's, and the loop acts on what the file says; when the device vanishes
 * the last reading is kept until staleAfterS, then the fogger goes to its safe state.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { buildDrivers } from './../src/kinds/build.js';
import { ManualClock } from './../src/runtime/manual-clock.js';
import { validConfig } from './support/config.js';
import { addBme280 } from './support/kernel-sensors-tree.js';
import { memoryDaemon } from './support/store.js';
import { tempDir } from './support/tmp.js';

const START_MS = Date.UTC(2026, 0, 1);

/** The sensor's period (periodS in the config below). */
const PERIOD_MS = 10_000;

/**
 * The file is read through the thread pool, which a busy machine can hold past the manual
 * clock's settling turns; a reading that lands triggers its loop, so this waits (in real time,
 * for that signal, never a fixed delay) until `landed()` holds. A read still running when the
 * next period came made the sampler skip that period, and that read may have fetched the file
 * before the test changed it: so while nothing lands, the clock moves on one period now and
 * then, and the next period's read sees the new file.
 */
async function untilLanded(clock: ManualClock, landed: () => boolean, what: string): Promise<void> {
  const giveUpAtMs = Date.now() + 10_000;
  let nextPeriodAtMs = Date.now() + 250;
  while (!landed()) {
    if (Date.now() > giveUpAtMs) assert.fail(`${what} did not land within 10 s`);
    await new Promise<void>((resolve) => setTimeout(resolve, 2));
    const periodDue = Date.now() >= nextPeriodAtMs;
    if (periodDue) nextPeriodAtMs = Date.now() + 250;
    await clock.advance(periodDue ? PERIOD_MS : 0);
  }
}

function configText(sysfsRoot: string): string {
  return `
version: 1
node: { id: test }
gpio: { sysfsRoot: ${JSON.stringify(sysfsRoot)} }
simulation:
  plants:
    air: { kind: humidity, ambient: 45, timeConstantS: 900 }
sensors:
  rh:
    kind: file_value
    path: /sys/bus/i2c/devices/1-0076/iio:device*/in_humidityrelative_input
    scale: 0.001 # milli %RH
    periodS: 10
    staleAfterS: 30
actuators:
  fogger: { kind: simulated_relay, plant: air, gain: 40, windowS: 60, minOnS: 0, minOffS: 0 }
loops:
  greenhouse:
    quantity: humidity
    sensor: rh
    raise: fogger
    mode: humidify
    setpoint: 60
    limits: { min: 30, max: 90 }
    controller: { type: hysteresis, coldTolerance: 1, hotTolerance: 1 }
`;
}

describe('daemon: a pattern-named IIO humidity file drives a loop', () => {
  test('given 45.123 %RH under setpoint 60, the fogger runs; at 70 %RH it stops; when the device vanishes it is safe once the reading is stale', async (t) => {
    const root = tempDir(t);
    const device = addBme280(root, 4);
    const file = join(device, 'in_humidityrelative_input');
    const clock = new ManualClock(START_MS);
    const config = validConfig(configText(root));
    const drivers = buildDrivers(config, () => clock.nowMs());
    const daemon = memoryDaemon(config, drivers, clock);
    const fogger = () => drivers.actuators.get('fogger')!.observe();
    const status = () => daemon.statuses()[0]!;
    await daemon.start();
    await clock.advance(PERIOD_MS);
    await untilLanded(clock, () => status().measured === 45.123, 'the first reading');
    assert.equal(status().measured, 45.123);
    assert.equal(await fogger(), 1, 'dry air: the fogger runs');

    writeFileSync(file, '70000\n');
    await clock.advance(PERIOD_MS);
    await untilLanded(clock, () => status().measured === 70, 'the 70 %RH reading');
    assert.equal(status().measured, 70);
    assert.equal(await fogger(), 0, 'humid air: the fogger stops');

    writeFileSync(file, '50000\n');
    await clock.advance(PERIOD_MS);
    await untilLanded(clock, () => status().measured === 50, 'the 50 %RH reading');
    assert.equal(await fogger(), 1, 'dry again: it runs');
    rmSync(device, { recursive: true }); // the driver unbound: the pattern matches nothing
    await clock.advance(PERIOD_MS);
    assert.equal(await fogger(), 1, 'a failed read keeps the last reading (10 s old) in force');
    await clock.advance(30_000);
    assert.equal(await fogger(), 0, 'stale after 30 s: the fogger is in its safe state (off)');
    const sensorHealthy = () => status().conditions.find((c) => c.type === 'SensorHealthy');
    await untilLanded(clock, () => /matches no file/.test(sensorHealthy()?.message ?? ''), 'the read error');
    const healthy = sensorHealthy();
    assert.equal(healthy?.status, 'False');
    assert.match(healthy?.message ?? '', /matches no file/);
    await daemon.stop();
  });
});
