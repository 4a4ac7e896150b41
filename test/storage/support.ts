/**
 * Shared by the storage fault tests (not a test file): a logger the test reads, another
 * process's write lock, a small full filesystem.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import pino from 'pino';

/** A pino logger whose lines the test can read. */
export function recordingLogger() {
  const lines: Array<{ level: number; msg: string; [key: string]: unknown }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

/** A second connection (as another process would) that takes the write lock and keeps it. */
export function holdWriteLock(dbPath: string): () => void {
  const other = new Database(dbPath);
  other.pragma('busy_timeout = 0');
  other.exec('BEGIN IMMEDIATE');
  other.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('lockedBy', 'test')").run();
  return () => {
    other.exec('ROLLBACK');
    other.close();
  };
}

/**
 * A tmpfs of `sizeKiB` mounted on a new directory (we run as root), or the reason it cannot be
 * (the test then skips, saying so).
 */
export function smallFilesystem(sizeKiB: number): { dir: string; unmount: () => void } | { skip: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeostat-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=0755`, 'tmpfs', dir], {
      stdio: 'pipe',
    });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    return {
      skip: `cannot mount a tmpfs (${(error as Error).message.split('\n')[0]}): full-disk test skipped`,
    };
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the filesystem holding `dir` with a file `dir/filler` until it is full. */
export function fillUp(dir: string): void {
  const fd = fs.openSync(path.join(dir, 'filler'), 'a');
  const chunk = Buffer.alloc(4096, 0x55);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    // The last partial block: byte by byte.
    try {
      for (;;) fs.writeSync(fd, chunk, 0, 1);
    } catch {
      // Full.
    }
  } finally {
    fs.closeSync(fd);
  }
}
