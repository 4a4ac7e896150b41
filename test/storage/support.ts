/**
 * Shared by the storage fault tests (not a test file): a database path removed after the test,
 * the StorageHealthy condition, another process's write lock, a small full filesystem. Their logger is test/support/logger.ts's `recordingLogger({ level: 'debug' })`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Condition } from '../../src/core/types.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { DEMO_CONFIG_PATH } from '../support/config.js';
import { startStoreDaemon, type TestNode } from '../support/node.js';
import { type HasAfter, makeTempDir, tempDir } from '../support/tmp.js';

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
  const { dir, remove } = makeTempDir('homeostat-full-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=0755`, 'tmpfs', dir], {
      stdio: 'pipe',
    });
  } catch (error) {
    remove();
    return {
      skip: `cannot mount a tmpfs (${(error as Error).message.split('\n')[0]}): full-disk test skipped`,
    };
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir]);
      remove();
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

/** config/demo.yaml as shipped, as text (tests edit it with `replace`). */
export const DEMO = fs.readFileSync(DEMO_CONFIG_PATH, 'utf8');

/**
 * The demo whose room heater barely heats (a heating element fell off) while the room loop
 * watches its effect: ten minutes of full heating latch HeatingIneffective.
 */
export const LATCHING_DEMO = DEMO.replace('gain: 20 # a heater raises: positive', 'gain: 0.05').replace(
  '    raise: room_heater # only a heater, so the modes are off and heat\n',
  (line) => `${line}    effectWatch: { periodS: 600, minChange: 1 }\n`,
);

/**
 * A node on `text` (default the demo) with its database in a new directory removed after the
 * test, started and `minutes` of its manual clock in; `options` as startStoreDaemon's.
 */
export async function startDemoStore(
  t: HasAfter,
  prefix: string,
  minutes: number,
  opts: { text?: string } & Parameters<typeof startStoreDaemon>[3] = {},
): Promise<{ run: TestNode; dbPath: string }> {
  const { text = DEMO, ...options } = opts;
  const dbPath = tempDbPath(t, prefix);
  const run = await startStoreDaemon(text, dbPath, undefined, options);
  await run.clock.advance(minutes * 60_000);
  return { run, dbPath };
}

/** A database path in a new directory removed after the test (`t`: node:test's context). */
export function tempDbPath(t: HasAfter, prefix: string): string {
  return path.join(tempDir(t, prefix), 'state.db');
}

/** The StorageHealthy condition `loop` shows now. */
export function storageHealthy(daemon: Daemon, loop: string): Condition | undefined {
  return daemon
    .statuses()
    .find((s) => s.loop === loop)
    ?.conditions.find((c) => c.type === 'StorageHealthy');
}
