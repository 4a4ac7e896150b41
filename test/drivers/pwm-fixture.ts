/**
 * A fixture PWM chip for tests: `class/pwm/pwmchipN/{npwm,export,unexport}` in a temp dir,
 * whose `export` makes `pwmM/` (support/fake-kernel.ts plays that part of the kernel), and a
 * PwmOutput on it whose writes are recorded. Not a test file itself.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { filePwmIo, PwmOutput, type PwmOutputOptions } from '../../src/drivers/pwm.js';
import { fakePwmExport } from '../support/fake-kernel.js';
import { type HasAfter, tempTree } from '../support/tmp.js';

/** A Pi's pwmchip0 with two channels (dtoverlay=pwm-2chan), exported on demand. */
export function pwmTree(t: HasAfter, opts: { chip?: number; npwm?: number } = {}) {
  const chip = opts.chip ?? 0;
  const chipDir = `class/pwm/pwmchip${chip}`;
  const root = tempTree(t, {
    [`${chipDir}/npwm`]: `${opts.npwm ?? 2}\n`,
    [`${chipDir}/export`]: '',
    [`${chipDir}/unexport`]: '',
  });
  const kernel = fakePwmExport(t, root, chip);
  /** A channel's attribute as the kernel would show it now. */
  const attr = (channel: number, name: string) =>
    readFileSync(join(root, chipDir, `pwm${channel}`, name), 'utf8').trim();
  return { root, kernel, attr, channelDir: (channel: number) => join(root, chipDir, `pwm${channel}`) };
}

/** A PwmOutput on `root` recording every write (`[file name, text]`), 1 ms period by default. */
export function recordedPwm(root: string, opts: Partial<PwmOutputOptions> = {}) {
  const writes: [name: string, text: string][] = [];
  const driver = new PwmOutput({
    id: 'fan',
    chip: 0,
    channel: 0,
    periodNs: 1_000_000,
    polarity: 'normal',
    sysfsRoot: root,
    io: {
      read: filePwmIo.read,
      write: async (path, text) => {
        writes.push([path.split('/').at(-1)!, text]);
        await filePwmIo.write(path, text);
      },
    },
    ...opts,
  });
  return { driver, writes };
}
