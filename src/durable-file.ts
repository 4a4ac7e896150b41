/**
 * Files that survive a power cut: written to a temporary file beside the target, fsynced,
 * renamed over the target, and the directory fsynced so the rename itself is on disk. A reader
 * sees the old content or the new, never a mix, whatever moment the power goes.
 *
 * A rename without the first fsync can leave an empty file after a cut (the rename reaches the
 * disk before the data on ext4 with `data=writeback` and on many SD-card setups); without the
 * directory fsync the rename may be lost and the old file come back.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `path` with `content` durably (see the file comment). `mode` applies to a new file
 * (the umask still narrows it). Throws with the path in the message; the temporary file is
 * removed again on failure.
 */
export function writeFileDurably(path: string, content: string | Buffer, mode = 0o640): void {
  const temporary = join(dirname(path), `.${basename(path)}.tmp-${process.pid}`);
  try {
    const fd = openSync(temporary, 'w', mode);
    try {
      const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
      let written = 0;
      while (written < bytes.byteLength) {
        written += writeSync(fd, bytes, written, bytes.byteLength - written);
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  fsyncDirectory(dirname(path));
}

/** Flushes a written file's data to disk (before a rename makes it visible under its name). */
export function fsyncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Flushes a directory's entries (a create, rename or unlink in it) to disk. Some filesystems
 * refuse fsync on a directory (EINVAL, EISDIR): those have nothing more to flush, so that is
 * not an error.
 */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EBADF') throw error;
  } finally {
    closeSync(fd);
  }
}
