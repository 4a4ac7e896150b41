import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { checkKinds } from '../../src/commands/doctor.js';
import { parseConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { FileValueSensor, parseFileNumber } from '../../src/drivers/file-value.js';
import { buildDrivers } from '../../src/kinds/build.js';
import { driverKey } from '../../src/kinds/registry.js';

const dir = mkdtempSync(join(tmpdir(), 'homeostat-file-value-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let fixtures = 0;
/** A fresh fixture file holding `text` (never the real /sys). */
function fixture(text: string): string {
  const path = join(dir, `value-${++fixtures}`);
  writeFileSync(path, text);
  return path;
}

const sensor = (path: string, extra: Partial<ConstructorParameters<typeof FileValueSensor>[0]> = {}) =>
  new FileValueSensor({ id: 'cpu', path, ...extra });

/** A config whose sensor `cpu` is the given file_value section (YAML flow mapping fields). */
function configText(fields: string): string {
  return `
version: 1
node: { id: pi }
simulation:
  plants:
    p: { ambient: 40, timeConstantS: 600 }
sensors:
  cpu: { kind: file_value, ${fields} }
actuators:
  fan: { kind: simulated_relay, plant: p, gain: -5 }
loops:
  cpu:
    sensor: cpu
    lower: fan
    setpoint: 50
    limits: { min: 30, max: 80 }
    controller: { type: hysteresis }
`;
}

function valid(fields: string): Config {
  const result = parseConfigText(configText(fields));
  assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
  return result.config;
}

function errors(fields: string): string[] {
  const result = parseConfigText(configText(fields));
  assert.ok(!result.ok, 'expected the config to be rejected');
  return result.errors;
}

describe('file_value driver', () => {
  test('reads the number in the file', async () => {
    assert.equal(await sensor(fixture('21.5\n')).read(), 21.5);
  });

  test('reads again at every sample: a changed file gives the new value', async () => {
    const path = fixture('1');
    const driver = sensor(path);
    assert.equal(await driver.read(), 1);
    writeFileSync(path, '2\n');
    assert.equal(await driver.read(), 2);
  });

  // [file text, scale, offset, reading]
  const scaled: [string, number | undefined, number | undefined, number][] = [
    ['45123\n', 0.001, undefined, 45.123],
    ['45123\n', 0.001, -2, 43.123],
    ['-5', 2, 1, -9],
    ['1e3', undefined, 0.5, 1000.5],
    ['  7  \n', undefined, undefined, 7],
  ];
  for (const [text, scale, offset, expected] of scaled) {
    test(`${JSON.stringify(text)} × ${scale ?? 1} + ${offset ?? 0} reads ${expected}`, async () => {
      assert.equal(await sensor(fixture(text), { scale, offset }).read(), expected);
    });
  }

  // [file text, error]
  const garbage: [string, RegExp][] = [
    ['', /the file is empty/],
    ['  \n', /the file is empty/],
    ['1e999', /not a number: "1e999"/],
    ['0x1f', /not a number: "0x1f"/],
    ['12 34', /not a number: "12 34"/],
    ['t=23125', /not a number: "t=23125"/],
    ['garbage', /not a number: "garbage"/],
  ];
  for (const [text, error] of garbage) {
    test(`rejects ${JSON.stringify(text)} with a clear error naming the file`, async () => {
      const path = fixture(text);
      await assert.rejects(sensor(path).read(), (err: Error) => {
        assert.match(err.message, error);
        assert.ok(err.message.startsWith(path), err.message);
        return true;
      });
    });
  }

  // [file text, value read]: the device says the value is unknown now; the loops judge it
  // NotFinite and go safe in this cycle, as with an MQTT sensor's `nan`.
  const unknown: [string, number][] = [
    ['nan\n', Number.NaN],
    ['NaN', Number.NaN],
    ['inf', Number.POSITIVE_INFINITY],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-inf', Number.NEGATIVE_INFINITY],
  ];
  for (const [text, value] of unknown) {
    test(`${JSON.stringify(text)} reads ${value} (not scaled, not judged plausible)`, async () => {
      const driver = sensor(fixture(text), { scale: 0.001, plausible: { min: -20, max: 110 } });
      assert.equal(await driver.read(), value);
    });
  }

  test('a missing file is a failed read saying so', async () => {
    await assert.rejects(sensor(join(dir, 'gone')).read(), /gone does not exist/);
  });

  test('a directory is a failed read saying so', async () => {
    await assert.rejects(sensor(dir).read(), /is a directory/);
  });

  test('a reading outside plausible (after scale) is rejected', async () => {
    const driver = sensor(fixture('130000'), { scale: 0.001, plausible: { min: -20, max: 110 } });
    await assert.rejects(driver.read(), /130 is outside the plausible range -20\.\.110/);
  });

  test('parseFileNumber takes exactly one finite decimal number', () => {
    assert.deepEqual(parseFileNumber('+3.25\n'), { ok: true, value: 3.25 });
    assert.deepEqual(parseFileNumber('.5'), { ok: true, value: 0.5 });
    assert.equal(parseFileNumber('1.2.3').ok, false);
  });

  test('a scale of 0 or a reversed plausible range is refused at construction', () => {
    assert.throws(() => sensor('/x', { scale: 0 }), /scale must be a finite number other than 0/);
    assert.throws(
      () => sensor('/x', { plausible: { min: 5, max: 1 } }),
      /plausible.min must be < plausible.max/,
    );
  });

  test('is not simulated (no --speed)', () => {
    assert.equal(sensor('/x').simulated, false);
  });
});

describe('file_value in the config', () => {
  test('defaults: scale 1, offset 0, periodS 10, staleAfterS 3 × periodS', () => {
    const config = valid('path: /tmp/x');
    assert.deepEqual(config.sensors.cpu, {
      kind: 'file_value',
      path: '/tmp/x',
      scale: 1,
      offset: 0,
      periodS: 10,
      staleAfterS: 30,
    });
  });

  test('a relative path is refused', () => {
    assert.ok(errors('path: temp').some((e) => /^sensors\.cpu\.path: must be an absolute path/.test(e)));
  });

  test('scale 0 is refused', () => {
    assert.ok(errors('path: /x, scale: 0').some((e) => /^sensors\.cpu\.scale: must not be 0/.test(e)));
  });

  test('plausible.min must be below plausible.max', () => {
    const found = errors('path: /x, plausible: { min: 10, max: 0 }');
    assert.ok(found.some((e) => /^sensors\.cpu\.plausible\.min: must be less than plausible\.max/.test(e)));
  });

  test('an unknown field is refused (strict, like every kind)', () => {
    assert.ok(errors('path: /x, file: /y').some((e) => /^sensors\.cpu/.test(e)));
  });

  test('buildDrivers reads the fixture through the kind, with scale and offset', async () => {
    const path = fixture('45000\n');
    const drivers = buildDrivers(valid(`path: ${path}, scale: 0.001, offset: 1`), () => 0);
    assert.equal(await drivers.sensors.get('cpu')!.read(), 46);
  });
});

describe('driverKey of file_value', () => {
  // [what, fields before, fields after, same driver?]
  const cases: [string, string, string, boolean][] = [
    ['periodS (the sampler reads it)', 'path: /a', 'path: /a, periodS: 5, staleAfterS: 30', true],
    ['staleAfterS (the loop judges it)', 'path: /a', 'path: /a, staleAfterS: 60', true],
    ['path', 'path: /a', 'path: /b', false],
    ['scale', 'path: /a', 'path: /a, scale: 0.001', false],
    ['offset', 'path: /a', 'path: /a, offset: -1', false],
    ['plausible', 'path: /a', 'path: /a, plausible: { min: 0, max: 100 }', false],
  ];
  for (const [what, before, afterEdit, same] of cases) {
    test(`changing ${what} ${same ? 'keeps' : 'replaces'} the driver`, () => {
      const a = valid(before).sensors.cpu!;
      const b = valid(afterEdit).sensors.cpu!;
      assert.notDeepEqual(a, b, 'the edit changed the section');
      assert.equal(driverKey(a) === driverKey(b), same);
    });
  }
});

describe('file_value doctor check', () => {
  /** The kinds' checks but the 1-Wire skip line every config without a DS18B20 gets. */
  const fileChecks = async (config: Config) =>
    (await checkKinds(config)).filter((result) => result.name !== '1-Wire');

  test('ok with the value read, when the file exists and holds a number', async () => {
    const path = fixture('45123');
    const results = await fileChecks(valid(`path: ${path}, scale: 0.001`));
    assert.deepEqual(results, [{ name: 'file sensors.cpu', status: 'ok', detail: `45.123 (${path})` }]);
  });

  test('fail with a fix, when the file is missing', async () => {
    const path = join(dir, 'missing');
    const [result] = await fileChecks(valid(`path: ${path}`));
    assert.equal(result?.status, 'fail');
    assert.match(result?.detail ?? '', /does not exist/);
    assert.match(result?.fix ?? '', /holds one number/);
  });

  test('fail when the file holds no number', async () => {
    const [result] = await fileChecks(valid(`path: ${fixture('hello')}`));
    assert.equal(result?.status, 'fail');
    assert.match(result?.detail ?? '', /not a number: "hello"/);
  });

  test('fail when the file says the value is unknown (nan)', async () => {
    const [result] = await fileChecks(valid(`path: ${fixture('nan')}`));
    assert.equal(result?.status, 'fail');
    assert.match(result?.detail ?? '', /says the value is unknown \(NaN\)/);
  });

  test('nothing is printed for a config without file_value sensors', async () => {
    const result = parseConfigText(
      configText('path: /x').replace(/cpu: \{ kind: file_value.*\}/, 'cpu: { kind: simulated, plant: p }'),
    );
    assert.ok(result.ok, result.ok ? '' : result.errors.join('\n'));
    assert.deepEqual(
      (await checkKinds(result.config)).map((r) => r.name),
      ['1-Wire'],
      'only the 1-Wire skip line, as before',
    );
  });
});
