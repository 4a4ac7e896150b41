import assert from 'node:assert/strict';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pwmActuator } from '../../src/kinds/actuators/pwm.js';
import { configErrors, validConfig } from '../support/config.js';
import { type ConfigErrorCase, testConfigErrorCases } from '../support/config-cases.js';
import { tempTree } from '../support/tmp.js';

/** A config with one pwm actuator `fan` lowering a DS18B20's temperature (and any `more` actuators). */
function withPwm(fan: string, more = ''): string {
  return `
version: 1
node: { id: pi }
sensors:
  t: { kind: ds18b20 }
actuators:
  fan: ${fan}
${more}
loops:
  cabinet: { sensor: t, lower: fan, mode: cool, setpoint: 30, limits: { min: 5, max: 40 }, controller: { type: pid, kp: 0.2, tiS: 600 } }
`;
}

describe('the pwm kind', () => {
  const periods: [section: string, periodNs: number][] = [
    ['{ kind: pwm, frequencyHz: 25000 }', 40_000],
    ['{ kind: pwm, periodMs: 2000 }', 2_000_000_000],
    ['{ kind: pwm, periodMs: 0.001 }', 1_000],
    ['{ kind: pwm, frequencyHz: 3 }', 333_333_333],
  ];
  for (const [section, periodNs] of periods) {
    test(`${section}: period ${periodNs} ns (whole ns, as the kernel takes it); chip 0, channel 0, normal, safe 0`, () => {
      const fan = validConfig(withPwm(section)).actuators.fan;
      assert.equal(fan?.kind, 'pwm');
      assert.deepEqual(
        fan.kind === 'pwm' && [fan.periodNs, fan.chip, fan.channel, fan.polarity, fan.safeLevel],
        [periodNs, 0, 0, 'normal', 0],
      );
    });
  }

  const refused: [section: string, message: RegExp][] = [
    ['{ kind: pwm }', /periodMs: give exactly one of periodMs .* and frequencyHz/],
    ['{ kind: pwm, periodMs: 10, frequencyHz: 100 }', /frequencyHz: give exactly one of periodMs/],
    ['{ kind: pwm, periodMs: 120000 }', /periodMs: .*60000/],
    ['{ kind: pwm, periodMs: 0.0001 }', /periodMs: .*0\.001/],
    ['{ kind: pwm, frequencyHz: 2000000 }', /frequencyHz: .*1000000/],
    ['{ kind: pwm, frequencyHz: 100, channel: -1 }', /channel/],
    ['{ kind: pwm, frequencyHz: 100, polarity: inverted }', /polarity/],
    [
      '{ kind: pwm, frequencyHz: 25000, polarity: inversed }',
      /polarity: inversed needs safeLevel: 1: a disabled channel idles low/,
    ],
  ];
  test('accepted: inversed with safeLevel 1 (a fan that runs full when the daemon cannot drive it)', () => {
    const fan = validConfig(withPwm('{ kind: pwm, frequencyHz: 25000, polarity: inversed, safeLevel: 1 }'))
      .actuators.fan as { polarity?: string; safeLevel?: number };
    assert.deepEqual([fan.polarity, fan.safeLevel], ['inversed', 1]);
  });

  for (const [section, message] of refused) {
    test(`refused at validation: ${section}`, () => {
      const errors = configErrors(withPwm(section));
      assert.ok(
        errors.some((line) => message.test(line)),
        errors.join('\n'),
      );
    });
  }

  describe('one channel, one actuator', () => {
    const fan = '{ kind: pwm, chip: 0, channel: 1, frequencyHz: 25000, safeLevel: 1 }';
    // [what, config text, expected `path: message` lines]
    const cases: ConfigErrorCase[] = [
      [
        'two pwm actuators on pwmchip0/pwm1',
        withPwm(fan, '  heater: { kind: pwm, channel: 1, periodMs: 2000 }'),
        ['actuators.heater.channel: pwmchip0/pwm1 is also used by actuators.fan'],
      ],
    ];
    testConfigErrorCases(cases, (what, [line]) => `refused: ${what}: ${line}`);

    test('accepted: the same channel number on two chips, and two channels of one chip', () => {
      for (const heater of [
        '{ kind: pwm, chip: 2, channel: 1, periodMs: 2000 }',
        '{ kind: pwm, channel: 0, periodMs: 2000 }',
      ]) {
        assert.equal(validConfig(withPwm(fan, `  heater: ${heater}`)).actuators.heater?.kind, 'pwm');
      }
    });
  });

  test('a continuous output: its spec carries the safe level and maxOnS', () => {
    const fan = validConfig(withPwm('{ kind: pwm, periodMs: 2000, safeLevel: 0, maxOnS: 600 }')).actuators
      .fan!;
    assert.equal(pwmActuator.output, 'continuous');
    assert.deepEqual(pwmActuator.spec('fan', fan as never, { pidKp: 0.2 }), {
      id: 'fan',
      kind: 'continuous',
      safeLevel: 0,
      maxOnMs: 600_000,
    });
  });
});

describe('homeostat doctor: pwm', () => {
  const env = (sysfsRoot: string) => ({ sysfsRoot, nowMs: () => 0 });
  const check = (sysfsRoot: string, chip: number, channel: number) =>
    pwmActuator.doctor!.check([{ id: 'fan', section: { chip, channel } as never }], env(sysfsRoot));

  test('chip present, channel within npwm, export writable: ok', async (t) => {
    const root = tempTree(t, { 'class/pwm/pwmchip0/npwm': '2\n', 'class/pwm/pwmchip0/export': '' });
    const [result] = await check(root, 0, 1);
    assert.equal(result?.status, 'ok', result?.detail);
    assert.match(result.detail, /pwmchip0\/pwm1, 2 channel/);
  });

  test('no chip: fail, listing the chips present, with the overlay line as the fix', async (t) => {
    const root = tempTree(t, { 'class/pwm/pwmchip2/npwm': '4\n' });
    const [result] = await check(root, 0, 0);
    assert.equal(result?.status, 'fail');
    assert.match(result.detail, /pwmchip0 is missing \(present: pwmchip2\)/);
    assert.match(result.fix ?? '', /dtoverlay=pwm/);
  });

  test('a channel beyond npwm: fail, saying the range', async (t) => {
    const root = tempTree(t, { 'class/pwm/pwmchip0/npwm': '2\n', 'class/pwm/pwmchip0/export': '' });
    const [result] = await check(root, 0, 2);
    assert.equal(result?.status, 'fail');
    assert.match(result.detail, /has 2 channel\(s\) \(0\.\.1\), not 2/);
  });

  test('export not writable by this user: fail, with the group as the fix', async (t) => {
    if (process.getuid?.() === 0) return t.skip('root may write any file');
    const root = tempTree(t, { 'class/pwm/pwmchip0/npwm': '2\n', 'class/pwm/pwmchip0/export': '' });
    chmodSync(join(root, 'class/pwm/pwmchip0/export'), 0o444);
    const [result] = await check(root, 0, 0);
    assert.equal(result?.status, 'fail');
    assert.match(result.fix ?? '', /usermod -aG gpio/);
  });
});
