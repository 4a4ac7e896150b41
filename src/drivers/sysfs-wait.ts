/**
 * Waiting for the kernel and udev after an `export` (GPIO, PWM): the kernel creates the new
 * directory, then udev hands its files to the device's group. Until then a write fails with
 * ENOENT or EACCES, so drivers poll for a writable file, within a deadline.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';

/** Between two looks at a just-exported file, ms (a kernel and udev take a few ms). */
const EXPORT_POLL_MS = 10;

/** The file exists and this process may write it. */
export function isWritable(path: string): Promise<boolean> {
  return access(path, constants.W_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Resolves once `path` is writable; rejects after `waitMs` naming the udev group that should
 * own it (`gpio`), so the message says what to fix.
 */
export async function waitWritable(path: string, waitMs: number, group: string): Promise<void> {
  const until = Date.now() + waitMs;
  while (!(await isWritable(path))) {
    if (Date.now() >= until) {
      throw new Error(
        `exported, but ${path} is not writable after ${waitMs} ms (udev rule for group ${group}?)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, EXPORT_POLL_MS));
  }
}
