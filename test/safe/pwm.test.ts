/**
 * `homeostat safe` and hardware PWM: every pwm output ends at its safe level through sysfs
 * alone (no database, no broker), on fixture pwmchip trees: level 0 disabled (duty 0, enable
 * 0), a fan whose safe level is 1 at full duty. From the config, or from the last applied
 * config (`<db>.safe.json`) when the file no longer parses.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { safeCommand } from '../../src/commands/safe.js';
import { buildSafeManifest, safeManifestPath } from '../../src/safe/manifest.js';
import { drivePwmSafe, type SafePwm } from '../../src/safe/pwm.js';
import { validConfig } from '../support/config.js';
import { fakePwmExport } from '../support/fake-kernel.js';
import { type HasAfter, tempTree } from '../support/tmp.js';

const CHIP = 'class/pwm/pwmchip0';

/** pwmchip0 with 2 channels: pwm0 running at 70 % (as a killed daemon left it), pwm1 not exported. */
function killedDaemonTree(t: HasAfter) {
  const root = tempTree(t, {
    [`${CHIP}/npwm`]: '2\n',
    [`${CHIP}/export`]: '',
    [`${CHIP}/unexport`]: '',
    [`${CHIP}/pwm0/period`]: '2000000000\n',
    [`${CHIP}/pwm0/duty_cycle`]: '1400000000\n',
    [`${CHIP}/pwm0/enable`]: '1\n',
    [`${CHIP}/pwm0/polarity`]: 'normal\n',
  });
  const kernel = fakePwmExport(t, root, 0);
  const attr = (channel: number, name: string) =>
    readFileSync(join(root, CHIP, `pwm${channel}`, name), 'utf8').trim();
  return { root, kernel, attr };
}

const ACTUATORS = `
actuators:
  heater: { kind: pwm, channel: 0, periodMs: 2000 }
  fan: { kind: pwm, channel: 1, frequencyHz: 25000, safeLevel: 1 }`;

function configText(root: string): string {
  return `
version: 1
node: { id: cabinet }
gpio: { sysfsRoot: ${JSON.stringify(root)} }
sensors:
  t: { kind: ds18b20 }
${ACTUATORS}
loops:
  cabinet: { sensor: t, raise: heater, lower: fan, mode: heat_cool, setpoint: 25, deadband: 4, limits: { min: 5, max: 40 }, controller: { type: pid, kp: 0.2, tiS: 600 } }
`;
}

async function runSafe(configPath: string, dbPath?: string) {
  const lines: string[] = [];
  const push = (line: string) => void lines.push(line);
  const code = await safeCommand({ configPath, dbPath, env: {}, note: push, mqttTimeoutMs: 0 }, push);
  return { code, lines, text: lines.join('\n') };
}

describe('homeostat safe: PWM outputs', () => {
  test('given a heater left at 70 % and a fan not exported, then the heater is disabled and the fan exported and at 100 %; exit 0', async (t) => {
    const { root, kernel, attr } = killedDaemonTree(t);
    const configPath = join(root, 'config.yaml');
    writeFileSync(configPath, configText(root));
    const result = await runSafe(configPath);
    assert.equal(result.code, 0, result.text);
    assert.deepEqual([attr(0, 'duty_cycle'), attr(0, 'enable')], ['0', '0'], 'heater disabled');
    assert.deepEqual(kernel.exported, [1]);
    assert.deepEqual([attr(1, 'period'), attr(1, 'duty_cycle'), attr(1, 'enable')], ['40000', '40000', '1']);
    assert.match(result.text, /heater \(pwm pwmchip0\/pwm0\): disabled \(duty 0\), its safe state/);
    assert.match(result.text, /fan \(pwm pwmchip0\/pwm1\): at 100 %, its safe level/);
    assert.match(result.text, /2 of 2 PWM output\(s\) at their safe level/);
    assert.doesNotMatch(result.text, /no GPIO relay in the config/);
  });

  test('a duty_cycle that cannot be written still ends disabled (enable 0 is what matters)', async (t) => {
    const { root, attr } = killedDaemonTree(t);
    rmSync(join(root, CHIP, 'pwm0/duty_cycle'));
    mkdirSync(join(root, CHIP, 'pwm0/duty_cycle'));
    const configPath = join(root, 'config.yaml');
    writeFileSync(
      configPath,
      configText(root)
        .replace(/ {2}fan: .*\n/, '')
        .replace('lower: fan, ', '')
        .replace('heat_cool', 'heat')
        .replace('deadband: 4, ', ''),
    );
    const result = await runSafe(configPath);
    assert.equal(result.code, 0, result.text);
    assert.equal(attr(0, 'enable'), '0');
  });

  test('an enable that cannot be written: FAILED, NOT CONFIRMED SAFE, exit 1', async (t) => {
    const { root } = killedDaemonTree(t);
    rmSync(join(root, CHIP, 'pwm0/enable'));
    mkdirSync(join(root, CHIP, 'pwm0/enable'));
    const configPath = join(root, 'config.yaml');
    writeFileSync(configPath, configText(root));
    const result = await runSafe(configPath);
    assert.equal(result.code, 1, result.text);
    assert.match(result.text, /heater \(pwm pwmchip0\/pwm0\): FAILED, not driven safe/);
    assert.match(result.text, /NOT CONFIRMED SAFE: heater \(pwmchip0\/pwm0\)/);
  });

  test('given a config broken by an edit, then the last applied config (the manifest) is used: the heater disabled', async (t) => {
    const { root, attr } = killedDaemonTree(t);
    const dbPath = join(root, 'state.db');
    const manifest = buildSafeManifest(validConfig(configText(root)), { nowMs: Date.now(), generation: 3 });
    assert.deepEqual(
      manifest.pwms.map((p) => [p.id, p.periodNs, p.safeLevel]),
      [
        ['heater', 2_000_000_000, 0],
        ['fan', 40_000, 1],
      ],
    );
    writeFileSync(safeManifestPath(dbPath)!, JSON.stringify(manifest));
    const configPath = join(root, 'config.yaml');
    writeFileSync(configPath, 'version: 1\nactuators: [');
    const result = await runSafe(configPath, dbPath);
    assert.equal(result.code, 0, result.text);
    assert.deepEqual([attr(0, 'duty_cycle'), attr(0, 'enable')], ['0', '0']);
    assert.equal(attr(1, 'enable'), '1', 'the fan on, its safe level');
  });
});

describe('safe and an inversed fan (its pin idles low when disabled: full on)', () => {
  test('given no period known (a broken file), the channel is disabled and reported at level 1, its safe level', async (t) => {
    const { root, attr } = killedDaemonTree(t);
    const outcome = await drivePwmSafe(
      { id: 'fan', chip: 0, channel: 0, safeLevel: 1, polarity: 'inversed' },
      { sysfsRoot: root },
    );
    assert.deepEqual(outcome, { id: 'fan', ok: true, level: 1 });
    assert.equal(attr(0, 'enable'), '0');
  });
});

/**
 * What the load gets from a channel's sysfs state, 0..1: the pin is high for duty/period when
 * enabled at polarity normal, low for it when inversed, low when disabled (a Pi's idle level,
 * whatever polarity says: docs/pwm.md); an inverting driver runs its load while the pin is low.
 */
function loadLevel(attr: (name: string) => string, driver: 'normal' | 'inverting'): number {
  const highFraction =
    attr('enable') === '0'
      ? 0
      : attr('polarity') === 'inversed'
        ? 1 - Number(attr('duty_cycle')) / Number(attr('period'))
        : Number(attr('duty_cycle')) / Number(attr('period'));
  return driver === 'inverting' ? 1 - highFraction : highFraction;
}

describe('safe with a broken config and no manifest: the pwm sections it still names', () => {
  // [what, the fan's section, its pwm0 as found, its driver, load level after, report line]
  const cases: [
    what: string,
    section: string,
    found: { polarity: string; enable: string; duty: string },
    driver: 'normal' | 'inverting',
    loadAfter: number,
    report: RegExp,
  ][] = [
    [
      'an inversed fan with periodMs, running at 30 %: full on (its pin low), reported at 100 %',
      '{ kind: pwm, channel: 0, periodMs: 2000, polarity: inversed, safeLevel: 1 }',
      { polarity: 'inversed', enable: '1', duty: '600000000' },
      'inverting',
      1,
      /fan \(pwm pwmchip0\/pwm0\): at 100 %, its safe level/,
    ],
    [
      'an inversed fan without a period, running at 30 %: disabled (its pin low: full on), reported at 100 %',
      '{ kind: pwm, channel: 0, polarity: inversed, safeLevel: 1 }',
      { polarity: 'inversed', enable: '1', duty: '600000000' },
      'inverting',
      1,
      /fan \(pwm pwmchip0\/pwm0\): at 100 %, its safe level/,
    ],
    [
      'a normal fan with frequencyHz and safeLevel 1, disabled: at 25 kHz and full duty',
      '{ kind: pwm, channel: 0, frequencyHz: 25000, safeLevel: 1 }',
      { polarity: 'normal', enable: '0', duty: '0' },
      'normal',
      1,
      /fan \(pwm pwmchip0\/pwm0\): at 100 %, its safe level/,
    ],
    [
      'a normal fan with safeLevel 0.5 and neither periodMs nor frequencyHz: left running, NOT confirmed safe',
      '{ kind: pwm, channel: 0, safeLevel: 0.5 }',
      { polarity: 'normal', enable: '1', duty: '1400000000' },
      'normal',
      0.7,
      /fan \(pwm pwmchip0\/pwm0\): FAILED, not driven safe: its safe level 0\.5 needs its period/,
    ],
  ];
  for (const [what, section, found, driver, loadAfter, report] of cases) {
    test(what, async (t) => {
      const root = tempTree(t, {
        [`${CHIP}/npwm`]: '2\n',
        [`${CHIP}/export`]: '',
        [`${CHIP}/unexport`]: '',
        [`${CHIP}/pwm0/period`]: '2000000000\n',
        [`${CHIP}/pwm0/duty_cycle`]: `${found.duty}\n`,
        [`${CHIP}/pwm0/enable`]: `${found.enable}\n`,
        [`${CHIP}/pwm0/polarity`]: `${found.polarity}\n`,
      });
      const configPath = join(root, 'config.yaml');
      // Broken: a setpoint that is not a number. No database given, so no manifest either.
      writeFileSync(
        configPath,
        `version: 1\ngpio: { sysfsRoot: ${JSON.stringify(root)} }\nactuators:\n  fan: ${section}\nloops: { l: { setpoint: x } }\n`,
      );
      const result = await runSafe(configPath);
      const attr = (name: string) => readFileSync(join(root, CHIP, 'pwm0', name), 'utf8').trim();
      assert.equal(loadLevel(attr, driver), loadAfter, result.text);
      assert.match(result.text, report);
      if (/FAILED/.test(report.source))
        assert.match(result.text, /NOT CONFIRMED SAFE: fan \(pwmchip0\/pwm0\)/);
    });
  }
});

describe('drivePwmSafe: a safe level it cannot reach is never reported safe', () => {
  // [what, the channel as safe knows it, outcome, pwm0's enable, duty_cycle, polarity after]
  const cases: [
    string,
    Omit<SafePwm, 'id' | 'chip' | 'channel'>,
    RegExp | number,
    [string, string, string],
  ][] = [
    [
      'a safe level that is not a number (a broken file): FAILED, left running',
      { safeLevel: Number.NaN },
      /its safe level NaN is not within 0\.\.1; left as it is/,
      ['1', '1400000000', 'normal'],
    ],
    [
      'inversed at safe level 0 without a period (disabled would be full on): FAILED, left running',
      { safeLevel: 0, polarity: 'inversed' },
      /its safe level 0 needs its period .*; left as it is/,
      ['1', '1400000000', 'normal'],
    ],
    [
      'inversed at safe level 0 with its period: enabled at duty 0 (pin high: off), level 0',
      { safeLevel: 0, polarity: 'inversed', periodNs: 2_000_000_000 },
      0,
      ['1', '0', 'inversed'],
    ],
  ];
  for (const [what, pwm, outcome, after] of cases) {
    test(what, async (t) => {
      const { root, attr } = killedDaemonTree(t);
      const result = await drivePwmSafe({ id: 'fan', chip: 0, channel: 0, ...pwm }, { sysfsRoot: root });
      if (typeof outcome === 'number') assert.deepEqual(result, { id: 'fan', ok: true, level: outcome });
      else assert.match(result.ok ? '' : result.error, outcome);
      assert.deepEqual([attr(0, 'enable'), attr(0, 'duty_cycle'), attr(0, 'polarity')], after);
    });
  }
});
