import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { filePwmIo, PwmOutput } from '../../src/drivers/pwm.js';
import { errnoError } from '../support/assert.js';
import { tempTree } from '../support/tmp.js';
import { pwmTree, recordedPwm } from './pwm-fixture.js';

describe('PwmOutput on a fixture pwmchip0', () => {
  test('given an unexported channel, when started inversed, then it is exported, disabled, duty 0, period and polarity written, then enabled at duty 0 (pin high: level 0)', async (t) => {
    const { root, kernel, attr } = pwmTree(t);
    const { driver, writes } = recordedPwm(root, { periodNs: 2_000_000_000, polarity: 'inversed' });
    await driver.start();
    assert.deepEqual(kernel.exported, [0]);
    assert.deepEqual(writes, [
      ['export', '0'],
      ['enable', '0'],
      ['duty_cycle', '0'],
      ['period', '2000000000'],
      ['polarity', 'inversed'],
      ['enable', '1'],
    ]);
    assert.equal(attr(0, 'enable'), '1');
    assert.equal(attr(0, 'duty_cycle'), '0');
    assert.equal(await driver.observe(), 0);
    assert.deepEqual(driver.channel, { adopted: false });
  });

  const levels: [level: number, dutyNs: string, enable: string][] = [
    [0.25, '250000', '1'],
    [1, '1000000', '1'],
    [0, '0', '0'],
  ];
  for (const [level, dutyNs, enable] of levels) {
    test(`write(${level}): duty_cycle ${dutyNs} ns, enable ${enable}; observe reads ${level} back`, async (t) => {
      const { root, attr } = pwmTree(t);
      const { driver } = recordedPwm(root);
      await driver.start();
      await driver.write(0.5);
      await driver.write(level);
      assert.equal(attr(0, 'duty_cycle'), dutyNs);
      assert.equal(attr(0, 'enable'), enable);
      assert.equal(await driver.observe(), level);
    });
  }

  // Inversed (a fan whose transistor inverts the signal): the pin is low for the duty part, and
  // a disabled channel idles low, which that fan takes as full on.
  const inversedLevels: [level: number, dutyNs: string, enable: string][] = [
    [0.25, '250000', '1'],
    [0, '0', '1'],
  ];
  for (const [level, dutyNs, enable] of inversedLevels) {
    test(`inversed, write(${level}): duty_cycle ${dutyNs} ns, enable ${enable}; observe reads ${level} back`, async (t) => {
      const { root, attr } = pwmTree(t);
      const { driver } = recordedPwm(root, { polarity: 'inversed' });
      await driver.start();
      await driver.write(0.5);
      await driver.write(level);
      assert.equal(attr(0, 'duty_cycle'), dutyNs);
      assert.equal(attr(0, 'enable'), enable);
      assert.equal(await driver.observe(), level);
    });
  }

  test('inversed, a channel disabled behind the daemon reads 1 (its pin idles low: full on), so it is driven again', async (t) => {
    const { root, channelDir } = pwmTree(t);
    const { driver } = recordedPwm(root, { polarity: 'inversed' });
    await driver.start();
    writeFileSync(join(channelDir(0), 'enable'), '0\n');
    assert.equal(await driver.observe(), 1);
  });

  // [configured polarity, level commanded, polarity found after, writes that restore it]
  const polarityDrift: [
    polarity: 'normal' | 'inversed',
    level: number,
    found: string,
    restore: string[][],
  ][] = [
    // Inversed at level 0 (duty 0, pin high: off); flipped to normal, the pin is low: full on.
    [
      'inversed',
      0,
      'normal',
      [
        ['enable', '0'],
        ['polarity', 'inversed'],
        ['duty_cycle', '0'],
        ['enable', '1'],
      ],
    ],
    [
      'normal',
      0.5,
      'inversed',
      [
        ['enable', '0'],
        ['polarity', 'normal'],
        ['duty_cycle', '500000'],
        ['enable', '1'],
      ],
    ],
  ];
  for (const [polarity, level, found, restore] of polarityDrift) {
    test(`given ${polarity} at ${level}, when polarity turns ${found} behind the daemon, then observe is undefined (unknown) and write(${level}) disables, restores ${polarity}, then drives ${level}`, async (t) => {
      const { root, channelDir, attr } = pwmTree(t);
      const { driver, writes } = recordedPwm(root, { polarity });
      await driver.start();
      await driver.write(level);
      assert.equal(await driver.observe(), level);
      writeFileSync(join(channelDir(0), 'polarity'), `${found}\n`);
      assert.equal(await driver.observe(), undefined);
      const before = writes.length;
      await driver.write(level);
      assert.deepEqual(writes.slice(before), restore);
      assert.equal(attr(0, 'polarity'), polarity);
      assert.equal(await driver.observe(), level);
    });
  }

  test('given write(0) whose enable 0 the kernel refuses, then duty_cycle 0 is still written and write rejects with the enable error', async (t) => {
    const { root, attr } = pwmTree(t);
    let refuseEnable = false;
    const { driver, writes } = recordedPwm(root, {}, (name) =>
      refuseEnable && name === 'enable' ? errnoError('EIO', 'EIO: i/o error, write') : undefined,
    );
    await driver.start();
    await driver.write(0.5);
    refuseEnable = true;
    const before = writes.length;
    await assert.rejects(driver.write(0), /pwm fan: writing 0 to .*pwm0\/enable: EIO/);
    assert.deepEqual(writes.slice(before), [
      ['enable', '0'],
      ['duty_cycle', '0'],
    ]);
    assert.equal(attr(0, 'duty_cycle'), '0', 'the duty at 0: the output off even though still enabled');
  });

  test('given a channel still enabled at this period and polarity (a restart), then it is adopted without a write: no glitch', async (t) => {
    const root = tempTree(t, {
      'class/pwm/pwmchip0/npwm': '2\n',
      'class/pwm/pwmchip0/pwm1/enable': '1\n',
      'class/pwm/pwmchip0/pwm1/period': '40000\n',
      'class/pwm/pwmchip0/pwm1/duty_cycle': '10000\n',
      'class/pwm/pwmchip0/pwm1/polarity': 'normal\n',
    });
    const { driver, writes } = recordedPwm(root, { channel: 1, periodNs: 40_000 });
    await driver.start();
    assert.deepEqual(writes, []);
    assert.deepEqual(driver.channel, { adopted: true });
    assert.equal(await driver.observe(), 0.25);
  });

  test('drift: a channel disabled behind the daemon reads 0, a duty changed by hand reads its level', async (t) => {
    const { root, channelDir } = pwmTree(t);
    const { driver } = recordedPwm(root);
    await driver.start();
    await driver.write(0.6);
    writeFileSync(join(channelDir(0), 'duty_cycle'), '300000\n');
    assert.equal(await driver.observe(), 0.3);
    writeFileSync(join(channelDir(0), 'enable'), '0\n');
    assert.equal(await driver.observe(), 0);
  });

  test('unreadable or inconsistent files: observe is undefined (unknown), never a guess', async (t) => {
    const { root, channelDir } = pwmTree(t);
    const { driver } = recordedPwm(root);
    await driver.start();
    await driver.write(0.5);
    writeFileSync(join(channelDir(0), 'duty_cycle'), '2000000\n'); // above the period
    assert.equal(await driver.observe(), undefined);
    rmSync(join(channelDir(0), 'period'));
    assert.equal(await driver.observe(), undefined);
  });

  test('a duty_cycle that cannot be written (replaced by a directory): write rejects naming the file', async (t) => {
    const { root, channelDir } = pwmTree(t);
    const { driver } = recordedPwm(root);
    await driver.start();
    rmSync(join(channelDir(0), 'duty_cycle'));
    mkdirSync(join(channelDir(0), 'duty_cycle'));
    await assert.rejects(driver.write(0.5), /pwm fan: writing 500000 to .*pwm0\/duty_cycle: .*EISDIR/);
  });

  test('no such chip: start says how to enable one', async (t) => {
    const { root } = pwmTree(t);
    const { driver } = recordedPwm(root, { chip: 3 });
    await assert.rejects(
      driver.start(),
      /no PWM chip .*pwmchip3: enable hardware PWM .*dtoverlay=pwm,pin=18,func=2/,
    );
  });

  test('a channel the chip does not have: start refuses it with the range', async (t) => {
    const { root } = pwmTree(t, { npwm: 2 });
    const { driver } = recordedPwm(root, { channel: 2 });
    await assert.rejects(driver.start(), /pwmchip0 has channels 0\.\.1, not 2/);
  });

  test('a period the chip refuses (EINVAL from the kernel): start fails saying the chip does not take it', async (t) => {
    const { root } = pwmTree(t);
    const driver = new PwmOutput({
      id: 'ssr',
      chip: 0,
      channel: 0,
      periodNs: 50_000_000_000,
      polarity: 'normal',
      sysfsRoot: root,
      io: {
        read: filePwmIo.read,
        write: async (path, text) => {
          if (path.endsWith('/period')) throw errnoError('EINVAL', 'EINVAL: invalid argument, write');
          await filePwmIo.write(path, text);
        },
      },
    });
    await assert.rejects(driver.start(), /the chip does not take a period of 50000000000 ns \(EINVAL\)/);
  });

  test('an export the kernel never completes: start rejects after the wait, naming the udev group', async (t) => {
    const root = tempTree(t, { 'class/pwm/pwmchip0/npwm': '2\n', 'class/pwm/pwmchip0/export': '' });
    const { driver } = recordedPwm(root, { exportWaitMs: 30 });
    await assert.rejects(driver.start(), /not writable after 30 ms \(udev rule for group gpio\?\)/);
  });

  test('levels outside 0..1 are refused; writes before start reject', async (t) => {
    const { root } = pwmTree(t);
    const { driver, writes } = recordedPwm(root);
    await assert.rejects(driver.write(0.5), /not started/);
    await driver.start();
    for (const level of [-0.01, 1.01, Number.NaN]) await assert.rejects(driver.write(level), RangeError);
    assert.equal(writes.filter(([name]) => name === 'duty_cycle').length, 1, 'only start wrote duty_cycle');
  });
});
