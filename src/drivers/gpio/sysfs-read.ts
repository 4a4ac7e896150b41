import { open } from 'node:fs/promises';

/**
 * The most read from one sysfs file, bytes: a sysfs attribute is at most one page (4096), and a
 * `w1_slave` or `temperature` file is under 100 bytes. A wrong path (`/dev/zero`, a config
 * pointing sysfsRoot at a big file) then costs one page, not memory until the process dies.
 */
export const MAX_SYSFS_BYTES = 4096;

/** Reads at most `maxBytes` of a (sysfs) file as UTF-8 text, with one read into a fixed buffer. */
export async function readSysfsText(path: string, maxBytes = MAX_SYSFS_BYTES): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    return buffer.toString('utf8', 0, bytesRead);
  } finally {
    await handle.close();
  }
}
