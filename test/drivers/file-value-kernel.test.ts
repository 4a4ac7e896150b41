/**
 * file_value on kernel sensors: a pattern naming the one file of a device whose directory is
 * numbered at boot, IIO `_raw` files read with their `_scale` and `_offset` as the ABI says,
 * paths under /sys read under gpio.sysfsRoot, and read failures (a DHT22's EIO) keeping the
 * last good reading until it goes stale. Fixture trees only (test/support/kernel-sensors-tree.ts).
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { FileValueSensor } from '../../src/drivers/file-value.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { Sampler } from '../../src/runtime/sampler.js';
import { addBme280, addIioDevice, addMax31855 } from '../support/kernel-sensors-tree.js';
import { tempDir } from '../support/tmp.js';

const BME280_RH = '/sys/bus/i2c/devices/1-0076/iio:device*/in_humidityrelative_input';

describe('file_value: a pattern that must match exactly one file', () => {
  test('given a BME280 on iio:device2 under sysfsRoot, the /sys pattern reads its humidity', async (t) => {
    const root = tempDir(t);
    addBme280(root, 2);
    const sensor = new FileValueSensor({ id: 'rh', path: BME280_RH, sysfsRoot: root, scale: 0.001 });
    assert.equal(await sensor.read(), 45.123);
    assert.equal(
      sensor.resolvePath(),
      join(root, 'bus/i2c/devices/1-0076/iio:device2/in_humidityrelative_input'),
    );
  });

  test('given no device yet, the read fails naming the pattern; once the device appears it reads', async (t) => {
    const root = tempDir(t);
    const sensor = new FileValueSensor({ id: 'rh', path: BME280_RH, sysfsRoot: root, scale: 0.001 });
    await assert.rejects(sensor.read(), /iio:device\*\/in_humidityrelative_input matches no file$/);
    addBme280(root, 0); // probed late at boot
    assert.equal(await sensor.read(), 45.123);
  });

  test('given two matches, the read fails listing both', async (t) => {
    const root = tempDir(t);
    addBme280(root, 0, '1-0076');
    addBme280(root, 1, '1-0077');
    const sensor = new FileValueSensor({
      id: 'rh',
      path: '/sys/bus/iio/devices/iio:device*/in_humidityrelative_input',
      sysfsRoot: root,
    });
    await assert.rejects(sensor.read(), (err: Error) => {
      assert.match(err.message, /matches 2 files, it must match one: /);
      assert.ok(err.message.includes(join(root, 'bus/iio/devices/iio:device0/in_humidityrelative_input')));
      assert.ok(err.message.includes(join(root, 'bus/iio/devices/iio:device1/in_humidityrelative_input')));
      return true;
    });
  });

  test('a path outside /sys is read as given, whatever sysfsRoot says', async (t) => {
    const dir = tempDir(t);
    writeFileSync(join(dir, 'value'), '7\n');
    const sensor = new FileValueSensor({ id: 'x', path: join(dir, 'value'), sysfsRoot: '/nonexistent' });
    assert.equal(await sensor.read(), 7);
  });
});

describe('file_value: IIO _raw files read as (raw + offset) × scale (sysfs-bus-iio)', () => {
  // [channel files, raw file, user scale, reading]
  const table: [string, Record<string, string>, string, number, number][] = [
    ['MAX31855 thermocouple: 400 × 250 m°C', {}, 'in_temp_raw', 0.001, 100],
    ['MAX31855 cold junction: 350 × 62.5 m°C', {}, 'in_temp_ambient_raw', 0.001, 21.875],
    [
      'the channel offset is added before the scale',
      { in_temp_raw: '1000', in_temp_offset: '-500', in_temp_scale: '0.5' },
      'in_temp_raw',
      1,
      250,
    ],
    [
      "a type's shared scale serves an indexed channel",
      { in_voltage0_raw: '2048', in_voltage_scale: '0.805664062' },
      'in_voltage0_raw',
      1,
      1649.99999898,
    ],
    [
      "the channel's own scale wins over the type's",
      { in_voltage1_raw: '100', in_voltage1_scale: '2', in_voltage_scale: '1000' },
      'in_voltage1_raw',
      1,
      200,
    ],
    [
      'no scale and no offset file: the raw value',
      { in_humidityrelative_raw: '512' },
      'in_humidityrelative_raw',
      1,
      512,
    ],
  ];
  for (const [what, channels, rawFile, scale, expected] of table) {
    test(`${what} → ${expected}`, async (t) => {
      const root = tempDir(t);
      const dir =
        Object.keys(channels).length === 0
          ? addMax31855(root, 0)
          : addIioDevice(root, { bus: { spi: 'spi0.1' }, index: 0, name: 'adc', channels });
      const sensor = new FileValueSensor({ id: 'x', path: join(dir, rawFile), scale });
      assert.ok(Math.abs((await sensor.read()) - expected) < 1e-6);
    });
  }

  test('a scale file that holds no number is a failed read naming it', async (t) => {
    const root = tempDir(t);
    const dir = addIioDevice(root, {
      bus: { i2c: '1-0048' },
      index: 0,
      name: 'x',
      channels: { in_temp_raw: '10', in_temp_scale: 'garbage' },
    });
    await assert.rejects(
      new FileValueSensor({ id: 'x', path: join(dir, 'in_temp_raw') }).read(),
      (err: Error) => {
        assert.ok(err.message.startsWith(join(dir, 'in_temp_scale')), err.message);
        return true;
      },
    );
  });

  test('an _input file is not a _raw file: read as it is (already processed)', async (t) => {
    const root = tempDir(t);
    const dir = addIioDevice(root, {
      bus: { i2c: '1-0048' },
      index: 0,
      name: 'x',
      channels: { in_temp_input: '21500', in_temp_scale: '1000' },
    });
    assert.equal(
      await new FileValueSensor({ id: 'x', path: join(dir, 'in_temp_input'), scale: 0.001 }).read(),
      21.5,
    );
  });
});

/** A readFile that answers a script: text, or an errno code thrown as the kernel's error. */
function scriptedRead(script: Array<string | NodeJS.ErrnoException>) {
  return async (): Promise<string> => {
    const next = script.shift() ?? '46000';
    if (typeof next !== 'string') throw next;
    return next;
  };
}

function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

describe('file_value: a DHT22 timing out keeps the last good reading until it goes stale', () => {
  test('an EIO read is a failed read that says the device did not answer', async () => {
    const sensor = new FileValueSensor({
      id: 'dht',
      path: '/sys/bus/iio/devices/iio:device0/in_humidityrelative_input',
      readFile: scriptedRead([errno('EIO', 'EIO: i/o error, read')]),
    });
    await assert.rejects(sensor.read(), /in_humidityrelative_input: the device did not answer \(EIO\)/);
  });

  test('given a good reading, when the next reads fail with EIO and ETIMEDOUT, the sampler keeps it (stamped when read) with the error, then takes the next good one', async () => {
    // The sampler does this for every sensor kind (src/runtime/sampler.ts #recordError); this
    // shows it for file_value: the loop judges the kept reading's age against staleAfterS.
    const clock = new ManualClock();
    const driver = new FileValueSensor({
      id: 'dht',
      path: '/sys/bus/iio/devices/iio:device0/in_humidityrelative_input',
      scale: 0.001,
      readFile: scriptedRead([
        '45000',
        errno('EIO', 'EIO: i/o error, read'),
        errno('ETIMEDOUT', 'ETIMEDOUT: connection timed out, read'),
        '46000',
      ]),
    });
    const sampler = new Sampler({
      clock,
      logger: pino({ level: 'silent' }),
      sensors: [{ driver, periodMs: 2_000 }],
    });
    const path = '/sys/bus/iio/devices/iio:device0/in_humidityrelative_input';
    // Each row: clock time → what a loop sees.
    const table: Array<[atMs: number, seen: object]> = [
      [0, { value: 45, atMs: 0 }],
      [
        2_000,
        { value: 45, atMs: 0, lastError: `${path}: the device did not answer (EIO): EIO: i/o error, read` },
      ],
      [
        4_000,
        {
          value: 45,
          atMs: 0,
          lastError: `${path}: the device did not answer (ETIMEDOUT): ETIMEDOUT: connection timed out, read`,
        },
      ],
      [6_000, { value: 46, atMs: 6_000 }],
    ];
    sampler.start();
    for (const [atMs, seen] of table) {
      await clock.advance(atMs - clock.nowMs());
      assert.deepEqual(sampler.latestForLoop('dht'), seen, `t=${atMs}`);
    }
    await sampler.stop();
  });

  test('a device that vanishes (the pattern matches nothing) is a failed read too', async (t) => {
    const root = tempDir(t);
    const dir = addBme280(root, 0);
    const sensor = new FileValueSensor({ id: 'rh', path: BME280_RH, sysfsRoot: root, scale: 0.001 });
    assert.equal(await sensor.read(), 45.123);
    rmSync(dir, { recursive: true });
    await assert.rejects(sensor.read(), /matches no file/);
  });
});
