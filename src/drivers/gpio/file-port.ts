/**
 * GPIO pins through the sysfs files themselves, under any sysfs root: what the GPIO drivers use
 * when `gpio.sysfsRoot` is not `/sys` (onoff's root is fixed at `/sys/class/gpio`, so with it a
 * daemon told to use a fixture tree or a sysfs mounted elsewhere wrote to the real one).
 *
 * The files are the kernel's ABI (Documentation/ABI/obsolete/sysfs-gpio): write the number to
 * `export`, the kernel creates `gpioN/` (udev then hands it to group gpio: wait until
 * `direction` is writable, as onoff and `homeostat safe` do), then `direction` (`in`, `out`,
 * or `high`/`low`, which set the raw level at once), `edge`, `active_low`, and `value` (logical
 * under `active_low`).
 *
 * Edges: onoff polls `value` for POLLPRI; Node has no such poll on a file, so this port watches
 * `value` with fs.watch (inotify), which kernfs also notifies when the edge `edge` asks for
 * happens, and a fixture tree when a test writes the file. Each notification reads the level
 * and reports a change in the direction asked for. Pulses shorter than one read can be merged:
 * count fast pulse trains under /sys, where onoff is used.
 */
import { type FSWatcher, watch } from 'node:fs';
import { access, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isWritable, waitWritable } from '../sysfs-wait.js';
import {
  GPIO_PERMISSION_FIX,
  type GpioPortFactory,
  gpioOpenError,
  onoffPortFactory,
  type PinEdge,
  type PinLevel,
} from './port.js';
import { readSysfsText } from './sysfs-read.js';

/** Options of {@link filePortFactory}. */
export interface FilePortOptions {
  /** Longest wait for the kernel and udev to make a just-exported pin writable, ms. Default 1000. */
  exportWaitMs?: number | undefined;
}

const DEFAULT_EXPORT_WAIT_MS = 1_000;

/**
 * How the GPIO drivers open pins under `sysfsRoot`: onoff on the kernel's own `/sys` (its poll
 * counts edges best), the files themselves anywhere else (onoff would write to `/sys`).
 */
export function portFactoryFor(sysfsRoot: string): GpioPortFactory {
  return resolve(sysfsRoot) === '/sys' ? onoffPortFactory : filePortFactory(sysfsRoot);
}

/** A pin factory over the files under `<sysfsRoot>/class/gpio` (see the module comment). */
export function filePortFactory(sysfsRoot: string, opts: FilePortOptions = {}): GpioPortFactory {
  const gpioDir = join(sysfsRoot, 'class/gpio');
  return async (sysfsNumber, direction, portOpts) => {
    const dir = join(gpioDir, `gpio${sysfsNumber}`);
    try {
      const exported = await isWritable(join(dir, 'direction'));
      if (!exported) {
        await writeExisting(join(gpioDir, 'export'), String(sysfsNumber));
        await waitWritable(join(dir, 'direction'), opts.exportWaitMs ?? DEFAULT_EXPORT_WAIT_MS, 'gpio');
      }
      if (!exported || portOpts.reconfigureDirection) await writeFile(join(dir, 'direction'), direction);
      if (portOpts.edge !== undefined) await writeFile(join(dir, 'edge'), portOpts.edge);
      await writeFile(join(dir, 'active_low'), portOpts.activeLow ? '1' : '0');
    } catch (err) {
      throw openError(err, sysfsNumber, gpioDir);
    }
    const valuePath = join(dir, 'value');
    // The level edges are told from: read now, so a change right after opening is one.
    const levelAtOpen = await readLevel(valuePath).catch(() => undefined);
    let watcher: FSWatcher | undefined;
    return {
      read: () => readLevel(valuePath),
      write: (value) => writeFile(valuePath, String(value)),
      watch: (listener) => {
        watcher?.close();
        watcher = watchEdges(valuePath, portOpts.edge ?? 'none', levelAtOpen, listener);
      },
      unexport: () => {
        watcher?.close();
        watcher = undefined;
        // Fire and forget, as onoff's unexport (synchronous there): a failure leaves it exported.
        writeExisting(join(gpioDir, 'unexport'), String(sysfsNumber)).catch(() => {});
      },
    };
  };
}

/** The logical level in a `value` file; rejects on anything but 0 or 1. */
async function readLevel(path: string): Promise<PinLevel> {
  const text = (await readSysfsText(path, 64)).trim();
  if (text === '0' || text === '1') return Number(text) as PinLevel;
  throw new Error(`${path} reads ${JSON.stringify(text.slice(0, 20))}, expected 0 or 1`);
}

/** Calls `listener` when a notification on `path` finds the level changed in `edge`'s direction. */
function watchEdges(
  path: string,
  edge: PinEdge,
  levelAtOpen: PinLevel | undefined,
  listener: (value: PinLevel) => void,
): FSWatcher | undefined {
  if (edge === 'none') return undefined;
  let last = levelAtOpen;
  const watcher = watch(path, () => {
    readLevel(path).then(
      (level) => {
        const changed = last !== undefined && level !== last;
        last = level;
        if (changed && (edge === 'both' || (edge === 'rising') === (level === 1))) listener(level);
      },
      // As onoff's poller: an unreadable level is read again on the next sample anyway.
      () => {},
    );
  });
  watcher.on('error', () => {});
  return watcher;
}

/** Writes a file that must exist (sysfs creates no files; a missing `export` means no sysfs GPIO). */
async function writeExisting(path: string, text: string): Promise<void> {
  await access(path);
  await writeFile(path, text);
}

/** An error while opening a pin as a line to act on, naming the directory actually used. */
function openError(err: unknown, sysfsNumber: number, gpioDir: string): Error {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') {
    return new Error(`GPIO sysfs ${sysfsNumber}: ${gpioDir}/export missing: no sysfs GPIO there`, {
      cause: err,
    });
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new Error(`GPIO sysfs ${sysfsNumber}: permission denied on ${gpioDir}: ${GPIO_PERMISSION_FIX}`, {
      cause: err,
    });
  }
  return gpioOpenError(err, sysfsNumber);
}
