import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkKernelSensors } from '../../src/commands/doctor.js';
import { buildDrivers } from '../../src/kinds/build.js';
import { validConfig } from '../support/config.js';
import { addBme280, addSht3x } from '../support/kernel-sensors-tree.js';
import { tempDir } from '../support/tmp.js';

/** A config on the Pi (a file_value sensor), sysfs at `root`, with extra sensor lines. */
function piConfig(root: string, sensors: string[] = []): string {
  return [
    'version: 1',
    'node: { id: pi }',
    `gpio: { sysfsRoot: ${JSON.stringify(root)} }`,
    'simulation: { plants: { p: { ambient: 15, timeConstantS: 600 } } }',
    'sensors:',
    '  cpu: { kind: file_value, path: /sys/class/thermal/thermal_zone0/temp, scale: 0.001 }',
    ...sensors.map((line) => `  ${line}`),
    'actuators: { heater: { kind: simulated_relay, plant: p, gain: 10 } }',
    'loops:',
    '  room: { sensor: cpu, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }',
  ].join('\n');
}

describe('doctor: the kernel sensors present, with a reading and the line to use each', () => {
  test('given a BME280 and an SHT3x, each channel is listed with its reading and a config line that validates and reads it', async (t) => {
    const root = tempDir(t);
    addBme280(root, 7);
    addSht3x(root, 3);
    const result = await checkKernelSensors(validConfig(piConfig(root)));
    assert.equal(result.status, 'ok');
    const lines = result.detail.split('\n');
    assert.deepEqual(lines.slice(0, 3), [
      '5 channel(s):',
      'bme280 (i2c 1-0076) humidity: 45.123 %RH',
      '  sensors: bme280_humidity: { kind: file_value, path: /sys/bus/i2c/devices/1-0076/iio:device*/in_humidityrelative_input, scale: 0.001 }',
    ]);
    assert.ok(lines.includes('sht3x (i2c 1-0044) temperature: 19.25 °C'), result.detail);
    // Every suggested line, pasted under sensors:, is a valid sensor that reads what doctor said.
    const pasted = lines.filter((l) => l.startsWith('  sensors: ')).map((l) => l.slice('  sensors: '.length));
    assert.equal(pasted.length, 5);
    const config = validConfig(piConfig(root, pasted));
    const drivers = buildDrivers(config, () => 0);
    assert.equal(await drivers.sensors.get('bme280_humidity')!.read(), 45.123);
    assert.equal(await drivers.sensors.get('sht3x_temp')!.read(), 19.25);
    assert.equal(await drivers.sensors.get('bme280_pressure')!.read(), 1013.25);
  });

  test('given none, a skip that points at the docs', async (t) => {
    const root = tempDir(t);
    const result = await checkKernelSensors(validConfig(piConfig(root)));
    assert.equal(result.status, 'skip');
    assert.match(
      result.detail,
      /^none under .*\/bus\/iio\/devices or .*\/class\/hwmon \(docs\/kernel-sensors\.md/,
    );
  });

  test('a config that is all simulation is not looked at (it reads nothing of the machine)', async () => {
    const text = [
      'version: 1',
      'node: { id: pi }',
      'simulation: { plants: { p: { ambient: 15, timeConstantS: 600 } } }',
      'sensors: { t: { kind: simulated, plant: p } }',
      'actuators: { heater: { kind: simulated_relay, plant: p, gain: 10 } }',
      'loops:',
      '  room: { sensor: t, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }',
    ].join('\n');
    assert.deepEqual(await checkKernelSensors(validConfig(text)), {
      name: 'kernel sensors (IIO, hwmon)',
      status: 'skip',
      detail: 'a simulated config: not looked for',
    });
  });
});
