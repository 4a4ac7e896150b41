/** file_value's path pattern in the config (validate) and in doctor, with gpio.sysfsRoot. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { checkKinds } from '../../src/commands/doctor.js';
import { configErrors, validConfig } from '../support/config.js';
import { addBme280 } from '../support/kernel-sensors-tree.js';
import { tempDir } from '../support/tmp.js';

function configText(path: string, sysfsRoot?: string): string {
  return `
version: 1
node: { id: pi }
${sysfsRoot === undefined ? '' : `gpio: { sysfsRoot: ${JSON.stringify(sysfsRoot)} }`}
simulation:
  plants:
    p: { kind: humidity, ambient: 40, timeConstantS: 600 }
sensors:
  rh: { kind: file_value, path: "${path}", scale: 0.001 }
actuators:
  fogger: { kind: simulated_relay, plant: p, gain: 20 }
loops:
  air:
    quantity: humidity
    sensor: rh
    raise: fogger
    setpoint: 60
    limits: { min: 30, max: 90 }
    controller: { type: hysteresis }
`;
}

const PATTERN = '/sys/bus/i2c/devices/1-0076/iio:device*/in_humidityrelative_input';

describe('file_value path patterns: validate checks the syntax (it reads no file)', () => {
  test('a pattern with * in one segment is valid and kept as written', () => {
    assert.equal(validConfig(configText(PATTERN)).sensors.rh?.kind, 'file_value');
  });

  // [pattern, message]
  const refused: [string, RegExp][] = [
    ['/sys/**/in_temp_input', /^sensors\.rh\.path: \*\* is not supported/],
    ['/sys/class/hwmon/hwmon[0-9]/temp1_input', /^sensors\.rh\.path: only \* and \? are wildcards/],
    ['/sys/class/hwmon/hwmon*/', /^sensors\.rh\.path: must name a file/],
  ];
  for (const [pattern, message] of refused) {
    test(`${pattern} is refused`, () => {
      const errors = configErrors(configText(pattern));
      assert.ok(
        errors.some((e) => message.test(e)),
        errors.join('\n'),
      );
    });
  }
});

/** The file_value lines of doctor's kind checks. */
async function fileChecks(text: string) {
  return (await checkKinds(validConfig(text))).filter((result) => result.name.startsWith('file '));
}

describe('file_value doctor check with a pattern, under gpio.sysfsRoot', () => {
  test('ok with the reading and the one file it matched', async (t) => {
    const root = tempDir(t);
    addBme280(root, 5);
    const file = join(root, 'bus/i2c/devices/1-0076/iio:device5/in_humidityrelative_input');
    const results = await fileChecks(configText(PATTERN, root));
    assert.deepEqual(results, [{ name: 'file sensors.rh', status: 'ok', detail: `45.123 (${file})` }]);
  });

  test('fail listing the matches when the pattern matches several files', async (t) => {
    const root = tempDir(t);
    addBme280(root, 0, '1-0076');
    addBme280(root, 1, '1-0077');
    const [result] = await fileChecks(configText('/sys/bus/iio/devices/*/in_humidityrelative_input', root));
    assert.equal(result?.status, 'fail');
    assert.match(result?.detail ?? '', /matches 2 files, it must match one: .*iio:device0.*iio:device1/);
    assert.match(result?.fix ?? '', /make the pattern match exactly one file/);
  });

  test('fail when it matches none (the overlay not loaded, the device not wired)', async (t) => {
    const root = tempDir(t);
    const [result] = await fileChecks(configText(PATTERN, root));
    assert.equal(result?.status, 'fail');
    assert.match(result?.detail ?? '', /matches no file/);
  });
});
