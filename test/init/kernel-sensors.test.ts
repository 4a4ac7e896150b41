/**
 * `homeostat init` offers the kernel's own temperature sensors (IIO, hwmon: drivers/kernel-sensors.ts)
 * beside the DS18B20 probes: listed with a fresh reading, numbered after the probes, and a choice
 * writes a file_value sensor on the stable path pattern and scale docs/kernel-sensors.md gives.
 * The trees are a Pi fixture copied to a temp dir with kernel devices added the kernel's way
 * (test/support/kernel-sensors-tree.ts): never the real /sys.
 */
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { describe, type TestContext, test } from 'node:test';
import { loadConfigFile } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { FileValueSensor } from '../../src/drivers/file-value.js';
import { addBme280, addCpuThermal, addIioDevice, addSht3x } from '../support/kernel-sensors-tree.js';
import { tempDir } from '../support/tmp.js';
import { fixture, runInit, scripted } from './helpers.js';

const BME280_TEMP = '/sys/bus/i2c/devices/1-0076/iio:device*/in_temp_input';
const SHT3X_TEMP = '/sys/bus/i2c/devices/1-0044/hwmon/hwmon*/temp1_input';

/** A copy of fixture `tree` (a Pi's GPIO, maybe probes) in a temp dir, kernel devices added by `add`. */
function piTree(t: TestContext, tree: string, add: (root: string) => void): string {
  const root = tempDir(t, 'homeostat-init-kernel-');
  cpSync(fixture(tree), root, { recursive: true, verbatimSymlinks: true });
  add(root);
  return root;
}

function loaded(path: string): Config {
  const result = loadConfigFile(path);
  assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
  assert.deepEqual(result.warnings, []);
  return result.config;
}

/** The written sensor read as the daemon reads it, under the tree (gpio.sysfsRoot). */
async function readWritten(config: Config, id: string): Promise<number> {
  const sensor = config.sensors[id];
  assert.equal(sensor?.kind, 'file_value');
  assert.ok(sensor?.kind === 'file_value');
  const driver = new FileValueSensor({
    id,
    path: sensor.path,
    scale: sensor.scale,
    sysfsRoot: config.gpio.sysfsRoot,
  });
  return driver.read();
}

describe('init offers kernel sensors', () => {
  test('given a BME280 and no probe, --relay-pin 17: listed with its reading, written as file_value on its stable path', async (t) => {
    const root = piTree(t, 'pi4-bookworm', (r) => addBme280(r, 3));
    const run = await runInit(t, { sysfsRoot: root, relayPin: '17' });
    assert.equal(run.code, 0, run.lines.join('\n'));
    const listing = run.lines.join('\n');
    assert.match(listing, /^Kernel sensors: 1 temperature channel\(s\) under /m);
    assert.ok(
      run.lines.includes(
        `  1) bme280 (i2c 1-0076) in_temp_input  21.5 °C  (path ${BME280_TEMP}, scale 0.001)`,
      ),
      listing,
    );
    const config = loaded(run.path);
    assert.deepEqual(
      (({ kind, path, scale }) => ({ kind, path, scale }))(
        config.sensors.room_temp as { kind: string; path: string; scale: number },
      ),
      { kind: 'file_value', path: BME280_TEMP, scale: 0.001 },
    );
    assert.equal(config.loops.room?.sensor, 'room_temp');
    assert.equal(await readWritten(config, 'room_temp'), 21.5);
    assert.ok(
      run.lines.some((line) =>
        line.startsWith(`wrote ${run.path}: loop room, bme280 (i2c 1-0076) in_temp_input → relay on GPIO17`),
      ),
      listing,
    );
    assert.match(run.text!, /^ {4}# bme280 \(i2c 1-0076\) in_temp_input: 21\.5 °C when init ran\./m);
  });

  test("the CPU's thermal zone, humidity and pressure are not offered: a room loop reads a room's temperature", async (t) => {
    const root = piTree(t, 'pi4-bookworm', (r) => {
      addCpuThermal(r, 0);
      addBme280(r, 1);
    });
    const run = await runInit(t, { sysfsRoot: root, relayPin: '17' });
    assert.equal(run.code, 0, run.lines.join('\n'));
    const offered = run.lines.filter((line) => /^ {2}\d+\) /.test(line));
    assert.deepEqual(offered, [
      `  1) bme280 (i2c 1-0076) in_temp_input  21.5 °C  (path ${BME280_TEMP}, scale 0.001)`,
    ]);
  });

  test('interactive, a probe and two kernel sensors: numbered after the probe; answer 3 writes the SHT3x', async (t) => {
    const root = piTree(t, 'pi4-one-ds18b20', (r) => {
      addBme280(r, 0);
      addSht3x(r, 2);
    });
    const ask = scripted(['3', '17', '']);
    const run = await runInit(t, { sysfsRoot: root }, { ask });
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.deepEqual(ask.questions, [
      'Which sensor does loop room read? 1..3, a DS18B20 address or a path [1]: ',
      'Relay pin: the GPIO (BCM number, e.g. 17) of the relay that switches the heater: ',
      'Setpoint, °C [20]: ',
    ]);
    const numbered = run.lines.filter((line) => /^ {2}\d+\) /.test(line)).map((line) => line.split('  ')[1]);
    assert.deepEqual(numbered, [
      '1) 28-0316a2795bff',
      '2) bme280 (i2c 1-0076) in_temp_input',
      '3) sht3x (i2c 1-0044) temp1_input',
    ]);
    const config = loaded(run.path);
    assert.equal((config.sensors.room_temp as { path?: string }).path, SHT3X_TEMP);
    assert.equal(await readWritten(config, 'room_temp'), 19.25);
  });

  test('interactive, answer a path init listed: that sensor; a path it did not: asked again, saying what it found', async (t) => {
    const root = piTree(t, 'pi4-bookworm', (r) => {
      addBme280(r, 0);
      addSht3x(r, 2);
    });
    const ask = scripted(['/sys/bus/i2c/devices/1-0077/iio:device*/in_temp_input', SHT3X_TEMP, '17', '']);
    const run = await runInit(t, { sysfsRoot: root }, { ask });
    const { lines } = run;
    assert.equal(run.code, 0, lines.join('\n'));
    assert.equal(ask.questions.length, 4);
    assert.ok(
      lines.some((line) =>
        line.includes(`no such kernel sensor under ${root}; init found ${BME280_TEMP}, ${SHT3X_TEMP}`),
      ),
      lines.join('\n'),
    );
    assert.equal((loaded(run.path).sensors.room_temp as { path?: string }).path, SHT3X_TEMP);
  });

  test('flags: --sensor PATH picks a kernel sensor; an unknown path is a usage error (exit 2), nothing written', async (t) => {
    const root = piTree(t, 'pi4-one-ds18b20', (r) => {
      addBme280(r, 0);
      addSht3x(r, 2);
    });
    const picked = await runInit(t, { sysfsRoot: root, sensor: SHT3X_TEMP, relayPin: '17' });
    assert.equal(picked.code, 0, picked.lines.join('\n'));
    assert.equal((loaded(picked.path).sensors.room_temp as { path?: string }).path, SHT3X_TEMP);

    const wrong = await runInit(t, {
      sysfsRoot: root,
      sensor: '/sys/class/hwmon/hwmon9/temp1_input',
      relayPin: '17',
    });
    assert.equal(wrong.code, 2);
    assert.equal(wrong.text, undefined);
    assert.match(
      wrong.lines.at(-1)!,
      /^init: --sensor \/sys\/class\/hwmon\/hwmon9\/temp1_input: no such kernel sensor under /,
    );
  });

  test('flags without --sensor: a probe first (said so); kernel sensors only: the first (said so when several)', async (t) => {
    const mixed = piTree(t, 'pi4-one-ds18b20', (r) => addBme280(r, 0));
    const probeFirst = await runInit(t, { sysfsRoot: mixed, relayPin: '17' });
    assert.equal(loaded(probeFirst.path).sensors.room_temp?.kind, 'ds18b20');
    assert.ok(
      probeFirst.lines.includes(
        'note: using 28-0316a2795bff, the first of 1 probe(s) and 1 kernel sensor(s) (--sensor ADDRESS or PATH picks another)',
      ),
      probeFirst.lines.join('\n'),
    );

    const kernelOnly = piTree(t, 'pi4-bookworm', (r) => {
      addBme280(r, 0);
      addSht3x(r, 2);
    });
    const first = await runInit(t, { sysfsRoot: kernelOnly, relayPin: '17' });
    assert.equal((loaded(first.path).sensors.room_temp as { path?: string }).path, BME280_TEMP);
    assert.ok(
      first.lines.includes(
        'note: using bme280 (i2c 1-0076) in_temp_input, the first of 2 kernel sensors (--sensor PATH picks another)',
      ),
      first.lines.join('\n'),
    );
  });

  test('a kernel sensor that gives no reading: listed saying why, chosen all the same, with a note', async (t) => {
    const root = piTree(t, 'pi4-bookworm', (r) =>
      addIioDevice(r, {
        bus: { i2c: '1-0076' },
        index: 0,
        name: 'bme280',
        channels: { in_temp_input: 'garbage' },
      }),
    );
    const run = await runInit(t, { sysfsRoot: root, relayPin: '17' });
    assert.equal(run.code, 0, run.lines.join('\n'));
    assert.ok(
      run.lines.some((line) => line.startsWith('  1) bme280 (i2c 1-0076) in_temp_input  no reading: ')),
      run.lines.join('\n'),
    );
    assert.ok(
      run.lines.some((line) =>
        /^note: bme280 \(i2c 1-0076\) in_temp_input gave no reading when init ran: .+; doctor reads it again$/.test(
          line,
        ),
      ),
      run.lines.join('\n'),
    );
    assert.equal((loaded(run.path).sensors.room_temp as { path?: string }).path, BME280_TEMP);
  });
});
