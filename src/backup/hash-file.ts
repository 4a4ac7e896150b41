import { createHash } from 'node:crypto';
import fs from 'node:fs';

const CHUNK_BYTES = 1 << 20;

/** A file's size and SHA-256, read a chunk at a time (a year of history need not fit in RAM). */
export function hashFile(file: string): { bytes: number; sha256: string } {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(CHUNK_BYTES);
  const fd = fs.openSync(file, 'r');
  let bytes = 0;
  try {
    for (;;) {
      const read = fs.readSync(fd, buffer, 0, CHUNK_BYTES, null);
      if (read === 0) break;
      hash.update(buffer.subarray(0, read));
      bytes += read;
    }
  } finally {
    fs.closeSync(fd);
  }
  return { bytes, sha256: hash.digest('hex') };
}
