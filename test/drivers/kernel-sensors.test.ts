import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  describeReading,
  listKernelSensors,
  sensorConfigLines,
  uniqueSensorIds,
} from '../../src/drivers/kernel-sensors.js';
import { buildDrivers } from '../../src/kinds/build.js';
import { validConfig } from '../support/config.js';
import {
  addBme280,
  addCpuThermal,
  addHwmonDevice,
  addIioDevice,
  addMax31855,
  addSht3x,
} from '../support/kernel-sensors-tree.js';
import { tempDir } from '../support/tmp.js';

/** A Pi with a MAX31855 (iio:device0), a BME280 (iio:device1), the CPU (hwmon0), an SHT3x (hwmon2). */
function piTree(root: string): string {
  addMax31855(root, 0);
  addBme280(root, 1);
  addCpuThermal(root, 0);
  addSht3x(root, 2);
  return root;
}

describe('listKernelSensors: the IIO and hwmon channels under a sysfs root, by stable path', () => {
  test('given four devices, each channel with its stable path, scale, unit and a fresh reading', async (t) => {
    const found = await listKernelSensors(piTree(tempDir(t)));
    const rows = found.map((c) => [c.driver, c.place, c.configPath, c.scale, describeReading(c), c.virtual]);
    assert.deepEqual(rows, [
      [
        'max31855k',
        'spi spi0.0',
        '/sys/bus/spi/devices/spi0.0/iio:device*/in_temp_ambient_raw',
        0.001,
        '21.875 °C',
        false,
      ],
      [
        'max31855k',
        'spi spi0.0',
        '/sys/bus/spi/devices/spi0.0/iio:device*/in_temp_raw',
        0.001,
        '100 °C',
        false,
      ],
      [
        'bme280',
        'i2c 1-0076',
        '/sys/bus/i2c/devices/1-0076/iio:device*/in_humidityrelative_input',
        0.001,
        '45.123 %RH',
        false,
      ],
      [
        'bme280',
        'i2c 1-0076',
        '/sys/bus/i2c/devices/1-0076/iio:device*/in_pressure_input',
        10,
        '1013.25 hPa',
        false,
      ],
      [
        'bme280',
        'i2c 1-0076',
        '/sys/bus/i2c/devices/1-0076/iio:device*/in_temp_input',
        0.001,
        '21.5 °C',
        false,
      ],
      [
        'cpu_thermal',
        '/sys/devices/virtual/thermal/thermal_zone0',
        '/sys/devices/virtual/thermal/thermal_zone0/hwmon/hwmon*/temp1_input',
        0.001,
        '48.3 °C',
        true,
      ],
      [
        'sht3x',
        'i2c 1-0044',
        '/sys/bus/i2c/devices/1-0044/hwmon/hwmon*/humidity1_input',
        0.001,
        '61.5 %RH',
        false,
      ],
      [
        'sht3x',
        'i2c 1-0044',
        '/sys/bus/i2c/devices/1-0044/hwmon/hwmon*/temp1_input',
        0.001,
        '19.25 °C',
        false,
      ],
    ]);
  });

  test('no IIO or hwmon directory: nothing found, no error', async (t) => {
    assert.deepEqual(await listKernelSensors(tempDir(t)), []);
  });

  test('a DHT22 (dht11 driver, a platform device) is named by its device path; a read error is its reading', async (t) => {
    const root = tempDir(t);
    addIioDevice(root, {
      bus: { platform: 'dht11@0' },
      index: 0,
      name: 'dht11',
      channels: { in_temp_input: 'garbage', in_humidityrelative_input: '55100' },
    });
    const found = await listKernelSensors(root);
    assert.deepEqual(
      found.map((c) => [c.configPath, describeReading(c)]),
      [
        ['/sys/devices/platform/dht11@0/iio:device*/in_humidityrelative_input', '55.1 %RH'],
        [
          '/sys/devices/platform/dht11@0/iio:device*/in_temp_input',
          `no reading: ${root}/devices/platform/dht11@0/iio:device0/in_temp_input: not a number: "garbage"`,
        ],
      ],
    );
  });

  test('a class-level virtual hwmon device (no parent to name it by) keeps its number: a pattern would match them all', async (t) => {
    const root = tempDir(t);
    addHwmonDevice(root, {
      bus: { virtual: '' },
      index: 5,
      name: 'acme_temp',
      channels: { temp1_input: '30250' },
    });
    addHwmonDevice(root, {
      bus: { virtual: '' },
      index: 6,
      name: 'other_temp',
      channels: { temp1_input: '31000' },
    });
    const found = await listKernelSensors(root);
    assert.deepEqual(
      found.map((c) => [c.configPath, c.place]),
      [
        [
          '/sys/devices/virtual/hwmon/hwmon5/temp1_input',
          '/sys/devices/virtual/hwmon/hwmon5 (numbered: may change between boots)',
        ],
        [
          '/sys/devices/virtual/hwmon/hwmon6/temp1_input',
          '/sys/devices/virtual/hwmon/hwmon6 (numbered: may change between boots)',
        ],
      ],
    );
  });

  test('an _input file hides the _raw file of the same channel', async (t) => {
    const root = tempDir(t);
    addIioDevice(root, {
      bus: { i2c: '1-0048' },
      index: 0,
      name: 'tmp',
      channels: { in_temp_raw: '86', in_temp_scale: '250', in_temp_input: '21500' },
    });
    assert.deepEqual(
      (await listKernelSensors(root)).map((c) => c.channel),
      ['in_temp_input'],
    );
  });

  test('the config lines of every channel found validate, two BME280s get distinct ids, and read the same value', async (t) => {
    const root = piTree(tempDir(t));
    addBme280(root, 3, '1-0077');
    const found = await listKernelSensors(root);
    const ids = uniqueSensorIds(found);
    assert.ok(ids.includes('bme280_temp') && ids.includes('bme280_temp_2'), ids.join(', '));
    assert.equal(new Set(ids).size, ids.length);
    const sensors = found.flatMap((channel, i) => sensorConfigLines(channel, ids[i]));
    const text = [
      'version: 1',
      'node: { id: pi }',
      `gpio: { sysfsRoot: ${JSON.stringify(root)} }`,
      'simulation: { plants: { p: { ambient: 15, timeConstantS: 600 } } }',
      'sensors:',
      ...sensors,
      'actuators: { heater: { kind: simulated_relay, plant: p, gain: 10 } }',
      'loops:',
      '  room: { sensor: bme280_temp, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }',
    ].join('\n');
    const config = validConfig(text);
    assert.equal(Object.keys(config.sensors).length, found.length);
    const drivers = buildDrivers(config, () => 0);
    for (const [i, channel] of found.entries()) {
      const value = await drivers.sensors.get(ids[i]!)!.read();
      assert.deepEqual({ value }, channel.reading, ids[i]);
    }
  });
});
