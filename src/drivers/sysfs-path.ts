import { join } from 'node:path';

/** Where the kernel mounts sysfs; a config's gpio.sysfsRoot may move it (tests, an image). */
export const KERNEL_SYSFS = '/sys';

/**
 * Where `path` is read when sysfs is mounted at `sysfsRoot`: a path under `/sys` moves under
 * the root (`/sys/bus/iio/…` → `<sysfsRoot>/bus/iio/…`), any other path is read as given (a
 * script's output file, `/run/…`). With the default root nothing moves.
 */
export function underSysfsRoot(path: string, sysfsRoot: string): string {
  if (sysfsRoot === KERNEL_SYSFS) return path;
  if (path === KERNEL_SYSFS) return sysfsRoot;
  if (!path.startsWith(`${KERNEL_SYSFS}/`)) return path;
  return join(sysfsRoot, path.slice(KERNEL_SYSFS.length + 1));
}
