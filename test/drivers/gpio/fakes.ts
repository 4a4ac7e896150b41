import type {
  GpioPort,
  GpioPortFactory,
  GpioPortOptions,
  PinDirection,
  PinLevel,
} from '../../../src/drivers/gpio/port.js';
import { makeTempDir, writeTree } from '../../support/tmp.js';

/** A fake pin: records what was asked of it, and lets a test set its level and raise edges. */
export class FakePort implements GpioPort {
  readonly writes: PinLevel[] = [];
  unexported = false;
  /** Makes `read()` reject with this error; `null` restores normal reads. */
  readError: Error | null = null;
  private listeners: ((value: PinLevel) => void)[] = [];

  constructor(
    readonly sysfsNumber: number,
    readonly direction: PinDirection,
    readonly opts: GpioPortOptions,
    /** Logical level, as the kernel would report it. */
    public level: PinLevel,
  ) {}

  async read(): Promise<PinLevel> {
    if (this.readError) throw this.readError;
    return this.level;
  }

  async write(value: PinLevel): Promise<void> {
    this.writes.push(value);
    this.level = value;
  }

  watch(listener: (value: PinLevel) => void): void {
    this.listeners.push(listener);
  }

  unexport(): void {
    this.unexported = true;
    this.listeners = [];
  }

  /** The pin changes to `value` and watchers hear about it (as after onoff's debounce). */
  edge(value: PinLevel): void {
    this.level = value;
    for (const listener of this.listeners) listener(value);
  }
}

/**
 * A factory handing out {@link FakePort}s. The level a new port reads: `levelOf(n)` if given
 * (a pin adopted at its current level), else what the direction implies (`high` = raw 1).
 */
export function fakeFactory(levelOf?: (sysfsNumber: number) => PinLevel) {
  const ports: FakePort[] = [];
  const factory: GpioPortFactory = async (sysfsNumber, direction, opts) => {
    const raw: PinLevel = direction === 'high' ? 1 : 0;
    const logical = (opts.activeLow ? 1 - raw : raw) as PinLevel;
    const port = new FakePort(sysfsNumber, direction, opts, levelOf ? levelOf(sysfsNumber) : logical);
    ports.push(port);
    return port;
  };
  return { factory, ports };
}

const removeAtExit: (() => void)[] = [];
process.on('exit', () => {
  for (const remove of removeAtExit) remove();
});

/**
 * Writes `files` (relative path → content) under a new temporary directory and returns it;
 * the directory is removed when the test process exits (for fixtures made outside a test;
 * inside one, `tempTree(t, files)` of test/support/tmp.ts removes it after the test).
 */
export function tempTree(files: Record<string, string>): string {
  const { dir, remove } = makeTempDir('homeostat-sys-');
  removeAtExit.push(remove);
  return writeTree(dir, files);
}

/** sysfs files of one gpiochip, as the kernel writes them (with a trailing newline). */
export function chipFiles(base: number, label: string, ngpio: number): Record<string, string> {
  const dir = `class/gpio/gpiochip${base}`;
  return { [`${dir}/label`]: `${label}\n`, [`${dir}/base`]: `${base}\n`, [`${dir}/ngpio`]: `${ngpio}\n` };
}

/** A Pi 4 on Bookworm (base 512), plus pin `exported` (sysfs numbers) with their direction. */
export function pi4Sysfs(exported: Record<number, 'in' | 'out'> = {}): string {
  const files: Record<string, string> = {
    ...chipFiles(512, 'pinctrl-bcm2711', 58),
    ...chipFiles(570, 'raspberrypi-exp-gpio', 8),
  };
  for (const [n, direction] of Object.entries(exported)) {
    files[`class/gpio/gpio${n}/direction`] = `${direction}\n`;
    files[`class/gpio/gpio${n}/value`] = '0\n';
  }
  return tempTree(files);
}
