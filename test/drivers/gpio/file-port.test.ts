import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { filePortFactory, portFactoryFor } from '../../../src/drivers/gpio/file-port.js';
import { GpioInput } from '../../../src/drivers/gpio/input.js';
import { onoffPortFactory, type PinLevel } from '../../../src/drivers/gpio/port.js';
import { fakeGpioExport } from '../../support/fake-kernel.js';
import { type HasAfter, tempTree } from '../../support/tmp.js';
import { chipFiles } from './fakes.js';

/** A Pi 4 tree (base 512) whose export file makes `gpioN/` as the kernel would. */
function piTree(t: HasAfter) {
  const root = tempTree(t, {
    ...chipFiles(512, 'pinctrl-bcm2711', 58),
    'class/gpio/export': '',
    'class/gpio/unexport': '',
  });
  return { root, kernel: fakeGpioExport(t, root), file: (p: string) => join(root, 'class/gpio', p) };
}

/** Resolves with the next level `watch` reports. */
function nextEdge(listen: (l: (v: PinLevel) => void) => void): Promise<PinLevel> {
  return new Promise((resolve) => listen(resolve));
}

describe('GPIO through the sysfs files (a gpio.sysfsRoot other than /sys)', () => {
  test('which factory: onoff on /sys (also written /sys/), the files anywhere else', () => {
    assert.equal(portFactoryFor('/sys'), onoffPortFactory);
    assert.equal(portFactoryFor('/sys/'), onoffPortFactory);
    assert.notEqual(portFactoryFor('/tmp/fixture'), onoffPortFactory);
  });

  test('given an unexported pin, when opened as an active-low output, then it is exported, direction then active_low written, value logical', async (t) => {
    const { root, kernel, file } = piTree(t);
    const port = await filePortFactory(root)(529, 'high', { activeLow: true, reconfigureDirection: true });
    assert.deepEqual(kernel.exported, [529]);
    assert.equal(readFileSync(file('gpio529/direction'), 'utf8'), 'high');
    assert.equal(readFileSync(file('gpio529/active_low'), 'utf8'), '1');
    await port.write(1);
    assert.equal(readFileSync(file('gpio529/value'), 'utf8'), '1');
    assert.equal(await port.read(), 1);
    port.unexport();
  });

  test('given a pin already exported, when opened without reconfigureDirection, then direction is not written (no glitch) and export is not written again', async (t) => {
    const { root, kernel, file } = piTree(t);
    const dir = file('gpio529');
    await filePortFactory(root)(529, 'high', { activeLow: false, reconfigureDirection: true });
    writeFileSync(join(dir, 'direction'), 'out');
    await filePortFactory(root)(529, 'out', { activeLow: false, reconfigureDirection: false });
    assert.equal(readFileSync(join(dir, 'direction'), 'utf8'), 'out');
    assert.deepEqual(kernel.exported, [529]);
  });

  test('given no export file (no sysfs GPIO there), then opening says so and names the pin', async (t) => {
    const root = tempTree(t, chipFiles(512, 'pinctrl-bcm2711', 58));
    await assert.rejects(
      filePortFactory(root)(529, 'in', { activeLow: false, reconfigureDirection: true }),
      /GPIO sysfs 529: .*class\/gpio\/export missing: no sysfs GPIO there/,
    );
  });

  test('an export the kernel never completes: rejects after the wait, naming the udev group', async (t) => {
    const root = tempTree(t, { ...chipFiles(512, 'pinctrl-bcm2711', 58), 'class/gpio/export': '' });
    await assert.rejects(
      filePortFactory(root, { exportWaitMs: 30 })(529, 'in', {
        activeLow: false,
        reconfigureDirection: true,
      }),
      /not writable after 30 ms \(udev rule for group gpio\?\)/,
    );
  });

  test('gpio_input: the edge file is written, and a change of value calls the listener (both edges)', async (t) => {
    const { root, file } = piTree(t);
    const input = new GpioInput({
      id: 'window',
      bcm: 27,
      sysfsRoot: root,
      portFactory: filePortFactory(root),
    });
    await input.start();
    t.after(() => input.stop());
    assert.equal(readFileSync(file('gpio539/edge'), 'utf8'), 'both');
    assert.equal(await input.read(), 0);
    const heard = new Promise<void>((resolve) => input.onValue(resolve));
    writeFileSync(file('gpio539/value'), '1\n');
    await heard;
    assert.equal(await input.read(), 1);
  });

  test('pulse_rate: with edge rising, a rise of value is reported with its level', async (t) => {
    const { root, file } = piTree(t);
    const port = await filePortFactory(root)(534, 'in', {
      activeLow: false,
      edge: 'rising',
      reconfigureDirection: true,
    });
    t.after(() => port.unexport());
    const levels: PinLevel[] = [];
    const rising = nextEdge((heard) =>
      port.watch((level) => {
        levels.push(level);
        heard(level);
      }),
    );
    writeFileSync(file('gpio534/value'), '1\n');
    assert.equal(await rising, 1);
    assert.deepEqual(levels, [1]);
  });
});
