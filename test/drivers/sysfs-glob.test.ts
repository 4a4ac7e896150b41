import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { globFiles, matchesSegment, patternProblem, uniqueMatch } from '../../src/drivers/sysfs-glob.js';
import { underSysfsRoot } from '../../src/drivers/sysfs-path.js';
import { addBme280, addIioDevice, addSht3x } from '../support/kernel-sensors-tree.js';
import { tempDir } from '../support/tmp.js';

describe('matchesSegment: * and ? inside one path segment, as a shell matches', () => {
  // [pattern segment, directory entry, matches]
  const table: [string, string, boolean][] = [
    ['iio:device*', 'iio:device0', true],
    ['iio:device*', 'iio:device12', true],
    ['iio:device*', 'iio:device', true],
    ['iio:device?', 'iio:device12', false],
    ['hwmon?', 'hwmon3', true],
    ['hwmon*', 'name', false],
    ['in_temp_input', 'in_temp_input', true],
    ['in_temp.input', 'in_temp_input', false],
    ['*', '.hidden', false],
    ['.*', '.hidden', true],
    ['1-00(76)', '1-00(76)', true],
  ];
  for (const [segment, name, expected] of table) {
    test(`${segment} ${expected ? 'matches' : 'does not match'} ${name}`, () => {
      assert.equal(matchesSegment(segment, name), expected);
    });
  }
});

describe('patternProblem: what the pattern syntax refuses (checked by validate)', () => {
  const table: [string, RegExp | undefined][] = [
    ['/sys/bus/i2c/devices/1-0076/iio:device*/in_temp_input', undefined],
    ['/sys/class/hwmon/hwmon?/temp1_input', undefined],
    ['sys/class/hwmon/hwmon*/temp1_input', /absolute/],
    ['/sys/**/temp1_input', /\*\* is not supported/],
    ['/sys/class/hwmon/hwmon[0-9]/temp1_input', /only \* and \?/],
    ['/sys/class/hwmon/hwmon*/', /must name a file/],
  ];
  for (const [pattern, problem] of table) {
    test(`${pattern} → ${problem ?? 'accepted'}`, () => {
      const found = patternProblem(pattern);
      if (problem === undefined) assert.equal(found, undefined);
      else assert.match(found ?? '', problem);
    });
  }
});

describe('globFiles and uniqueMatch over a fixture tree shaped like sysfs', () => {
  test('given a BME280 on iio:device3, the pattern with iio:device* finds its file through the bus symlink', (t) => {
    const root = tempDir(t);
    addBme280(root, 3);
    const pattern = join(root, 'bus/i2c/devices/1-0076/iio:device*/in_humidityrelative_input');
    const expected = join(root, 'bus/i2c/devices/1-0076/iio:device3/in_humidityrelative_input');
    assert.deepEqual(globFiles(pattern), [expected]);
    assert.deepEqual(uniqueMatch(pattern), { ok: true, path: expected });
  });

  test('given no such device, the pattern matches no file and says so', (t) => {
    const root = tempDir(t);
    addSht3x(root);
    const pattern = join(root, 'bus/i2c/devices/1-0076/iio:device*/in_temp_input');
    const match = uniqueMatch(pattern);
    assert.deepEqual(match, { ok: false, problem: `${pattern} matches no file`, matches: [] });
  });

  test('given two IIO devices, a pattern over both is refused with both matches listed', (t) => {
    const root = tempDir(t);
    addBme280(root, 0, '1-0076');
    addBme280(root, 1, '1-0077');
    const pattern = join(root, 'bus/iio/devices/iio:device*/in_temp_input');
    const match = uniqueMatch(pattern);
    assert.equal(match.ok, false);
    const first = join(root, 'bus/iio/devices/iio:device0/in_temp_input');
    const second = join(root, 'bus/iio/devices/iio:device1/in_temp_input');
    assert.deepEqual(match.ok ? [] : match.matches, [first, second]);
    assert.equal(
      match.ok ? '' : match.problem,
      `${pattern} matches 2 files, it must match one: ${first}, ${second}`,
    );
  });

  test('a pattern ending in a directory matches no file (only regular files count)', (t) => {
    const root = tempDir(t);
    addBme280(root, 0);
    assert.deepEqual(globFiles(join(root, 'bus/i2c/devices/1-0076/iio:device*')), []);
  });

  test('a refusal lists at most five matches, then how many more', (t) => {
    const root = tempDir(t);
    for (let index = 0; index < 7; index++) {
      addIioDevice(root, {
        bus: { i2c: `1-00${40 + index}` },
        index,
        name: 'x',
        channels: { in_temp_input: '1' },
      });
    }
    const match = uniqueMatch(join(root, 'bus/iio/devices/*/in_temp_input'));
    assert.ok(!match.ok);
    assert.match(match.problem, /matches 7 files, .* and 2 more$/);
    assert.equal(match.problem.match(/iio:device\d/g)?.length, 5);
  });

  test('a path without wildcards gives itself when it is a file, nothing otherwise', (t) => {
    const root = tempDir(t);
    const dir = addBme280(root, 0);
    assert.deepEqual(globFiles(join(dir, 'in_temp_input')), [join(dir, 'in_temp_input')]);
    assert.deepEqual(globFiles(join(dir, 'in_nothing_input')), []);
  });
});

describe('underSysfsRoot: paths under /sys honour gpio.sysfsRoot, others are read as given', () => {
  const table: [path: string, root: string, read: string][] = [
    [
      '/sys/bus/iio/devices/iio:device0/in_temp_input',
      '/sys',
      '/sys/bus/iio/devices/iio:device0/in_temp_input',
    ],
    [
      '/sys/bus/iio/devices/iio:device0/in_temp_input',
      '/tmp/fx',
      '/tmp/fx/bus/iio/devices/iio:device0/in_temp_input',
    ],
    ['/sys/class/hwmon/hwmon*/temp1_input', '/tmp/fx/', '/tmp/fx/class/hwmon/hwmon*/temp1_input'],
    ['/sysfoo/value', '/tmp/fx', '/sysfoo/value'],
    ['/run/sensor/value', '/tmp/fx', '/run/sensor/value'],
  ];
  for (const [path, root, read] of table) {
    test(`${path} with sysfsRoot ${root} reads ${read}`, () => {
      assert.equal(underSysfsRoot(path, root), read);
    });
  }
});
