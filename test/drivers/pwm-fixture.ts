/**
 * A fixture PWM chip for tests: `class/pwm/pwmchipN/{npwm,export,unexport}` in a temp dir,
 * whose `export` makes `pwmM/` (support/fake-kernel.ts plays that part of the kernel), and a
 * PwmOutput on it whose writes are recorded. Not a test file itself.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { filePwmIo, PwmOutput, type PwmOutputOptions } from '../../src/drivers/pwm.js';
import { errnoError } from '../support/assert.js';
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

/** A write the test makes the kernel refuse: the error to throw, or undefined to let it through. */
export type RefuseWrite = (name: string, text: string) => NodeJS.ErrnoException | undefined;

/**
 * A PwmOutput on `root` recording every write attempted (`[file name, text]`), 1 ms period by
 * default. As the kernel, it refuses `polarity` while the channel is enabled (EBUSY:
 * Documentation/driver-api/pwm.rst, "The polarity can only be changed if the PWM is not
 * enabled"), and any write `refuse` names.
 */
export function recordedPwm(root: string, opts: Partial<PwmOutputOptions> = {}, refuse?: RefuseWrite) {
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
        const name = path.split('/').at(-1)!;
        writes.push([name, text]);
        const refused = refuse?.(name, text);
        if (refused) throw refused;
        if (name === 'polarity' && readFileSync(join(dirname(path), 'enable'), 'utf8').trim() === '1') {
          throw errnoError('EBUSY', 'EBUSY: resource busy or locked, write');
        }
        await filePwmIo.write(path, text);
      },
    },
    ...opts,
  });
  return { driver, writes };
}
