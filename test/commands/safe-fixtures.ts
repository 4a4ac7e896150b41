/**
 * Fixtures for the tests of `homeostat safe`: a Pi 4's sysfs tree (Bookworm numbering, BCM 0 =
 * sysfs 512) as a killed daemon left it, a fake kernel over its plain files, and config files.
 * Not a test file itself.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileSysfsIo, type SysfsIo } from '../../src/commands/safe.js';
import { chipFiles, tempTree } from '../drivers/gpio/fakes.js';

export const BASE = 512;

/** A Pi 4 with Bookworm's numbering, and `pins` (BCM → files) as a killed daemon left them. */
export function pi4(pins: Record<number, { direction: 'in' | 'out'; value: 0 | 1; activeLow: 0 | 1 }> = {}) {
  const files: Record<string, string> = {
    ...chipFiles(BASE, 'pinctrl-bcm2711', 58),
    ...chipFiles(570, 'raspberrypi-exp-gpio', 8),
    'class/gpio/export': '',
    'class/gpio/unexport': '',
  };
  for (const [bcm, pin] of Object.entries(pins)) {
    const dir = `class/gpio/gpio${BASE + Number(bcm)}`;
    files[`${dir}/direction`] = `${pin.direction}\n`;
    files[`${dir}/value`] = `${pin.value}\n`;
    files[`${dir}/active_low`] = `${pin.activeLow}\n`;
  }
  return tempTree(files);
}

/** The raw level of an exported output (what the relay board sees), or `input`. */
export function rawLevel(root: string, bcm: number): 0 | 1 | 'input' | 'not exported' {
  const dir = join(root, 'class/gpio', `gpio${BASE + bcm}`);
  let direction: string;
  try {
    direction = readFileSync(join(dir, 'direction'), 'utf8').trim();
  } catch {
    return 'not exported';
  }
  if (direction === 'in') return 'input';
  const value = Number(readFileSync(join(dir, 'value'), 'utf8').trim());
  const activeLow = Number(readFileSync(join(dir, 'active_low'), 'utf8').trim());
  return (value ^ activeLow) as 0 | 1;
}

/**
 * sysfs GPIO semantics on plain files, recording writes (paths relative to the root) and each
 * raw level an output is driven to. `hang`/`fail`: writes under that sysfs number never
 * finish / throw EIO; `busy`: exporting that number throws EBUSY (a dtoverlay holds it).
 */
export function fakeKernel(root: string, opts: { hang?: number; fail?: number; busy?: number } = {}) {
  const writes: [string, string][] = [];
  const rawLevels = new Map<number, (0 | 1)[]>();
  const pinOf = (path: string) => Number(/gpio(\d+)\//.exec(path)?.[1] ?? Number.NaN);
  const readFile = (dir: string, name: string) => readFileSync(join(dir, name), 'utf8').trim();
  const driven = (n: number, raw: 0 | 1) => rawLevels.set(n, [...(rawLevels.get(n) ?? []), raw]);
  const io: SysfsIo = {
    read: (path) => fileSysfsIo.read(path),
    writable: (path) => fileSysfsIo.writable(path),
    async write(path, text) {
      writes.push([path.slice(root.length + 1), text]);
      if (path.endsWith('class/gpio/export')) {
        if (Number(text) === opts.busy) {
          throw Object.assign(new Error(`EBUSY: resource busy or locked, write '${path}'`), {
            code: 'EBUSY',
          });
        }
        const dir = join(root, 'class/gpio', `gpio${text}`);
        mkdirSync(dir);
        for (const [name, content] of [
          ['direction', 'in'],
          ['value', '0'],
          ['active_low', '0'],
        ]) {
          writeFileSync(join(dir, name!), `${content}\n`);
        }
        return;
      }
      const n = pinOf(path);
      if (n === opts.hang) return new Promise(() => {});
      if (n === opts.fail) throw Object.assign(new Error(`EIO: i/o error, write '${path}'`), { code: 'EIO' });
      const dir = path.slice(0, path.lastIndexOf('/'));
      const activeLow = Number(readFile(dir, 'active_low'));
      const output = readFile(dir, 'direction') !== 'in';
      const raw = (Number(readFile(dir, 'value')) ^ activeLow) as 0 | 1;
      if (path.endsWith('/direction')) {
        // high/low: the raw level, ignoring active_low; out = low.
        writeFileSync(path, text === 'in' ? 'in\n' : 'out\n');
        if (text !== 'in') {
          const newRaw = text === 'high' ? 1 : 0;
          writeFileSync(join(dir, 'value'), `${newRaw ^ activeLow}\n`);
          driven(n, newRaw);
        }
      } else if (path.endsWith('/active_low')) {
        // The line does not move: reads and writes are inverted from now on.
        writeFileSync(path, `${text}\n`);
        writeFileSync(join(dir, 'value'), `${raw ^ Number(text)}\n`);
      } else if (path.endsWith('/value')) {
        writeFileSync(path, `${text}\n`);
        if (output) driven(n, (Number(text) ^ activeLow) as 0 | 1);
      }
    },
  };
  return { io, writes, rawLevels };
}

export function configFile(root: string, actuators: string, extra = ''): string {
  const path = join(root, 'config.yaml');
  writeFileSync(
    path,
    `version: 1
node: { id: pi }
${extra}
sensors:
  t: { kind: simulated, plant: p }
simulation: { plants: { p: { ambient: 10, timeConstantS: 600 } } }
actuators:
${actuators}
loops:
  room: { sensor: t, raise: ${/^\s+(\w+):/.exec(actuators)?.[1]}, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`,
  );
  return path;
}
