/** Reading a file the config names (a secret, a certificate) without trusting what it is. */
import fs from 'node:fs';

/**
 * Reads a file the config names, refusing anything but a regular file of at most `maxBytes`:
 * `/dev/zero` would otherwise be read until memory runs out, and a FIFO would block the start
 * forever. Opened non-blocking (a FIFO open does not wait for a writer), then checked on the
 * open descriptor (no race between the check and the read), then read up to the cap.
 * Throws `<what> <file>: …` (`what`: `mqtt: cannot read the password file`) naming what to fix.
 */
export function readCappedFile(file: string, what: string, maxBytes: number): Buffer {
  const prefix = `${what} ${file}: `;
  const fail = (why: string) => new Error(`${prefix}${why}`);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw fail((error as Error).message);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile())
      throw fail('not a regular file (a device, FIFO or directory); point it at a plain file');
    if (stat.size > maxBytes) {
      throw fail(`it is ${stat.size} bytes, at most ${maxBytes} are accepted; is it the right file?`);
    }
    // Read one byte more than allowed: a file that grew since fstat is still caught.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw fail(`it is more than ${maxBytes} bytes; is it the right file?`);
    }
    return Buffer.from(buffer.subarray(0, length)); // a copy: the 1 MiB scratch buffer is freed
  } catch (error) {
    if (error instanceof Error && error.message.startsWith(prefix)) throw error;
    throw fail((error as Error).message);
  } finally {
    fs.closeSync(fd);
  }
}
