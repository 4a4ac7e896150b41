/**
 * Temporary directories for tests, removed when the test (or the file) that made them ends,
 * so no test leaves files behind in /tmp and none shares a directory with another.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** What node:test passes to a test (`TestContext`) or a suite hook: anything with `after`. */
export interface HasAfter {
  after(fn: () => void | Promise<void>): void;
}

/** A new empty directory under the OS temp dir, and the function that removes it (idempotent). */
export function makeTempDir(prefix = 'homeostat-test-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A new empty directory removed after the test: `const dir = tempDir(t)` inside
 * `test('…', (t) => …)`. Pass node:test's `after` wrapped (`{ after }`) for a file-wide one.
 */
export function tempDir(t: HasAfter, prefix?: string): string {
  const { dir, remove } = makeTempDir(prefix);
  t.after(remove);
  return dir;
}

/** Runs `fn` with a new directory and removes it afterwards, whether `fn` succeeds or throws. */
export async function withTempDir<T>(fn: (dir: string) => T | Promise<T>, prefix?: string): Promise<T> {
  const { dir, remove } = makeTempDir(prefix);
  try {
    return await fn(dir);
  } finally {
    remove();
  }
}

/** Writes `files` (path relative to `root` → content) under `root`, making directories; returns `root`. */
export function writeTree(root: string, files: Record<string, string>): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

/** A new temp directory holding `files`, removed after the test. */
export function tempTree(t: HasAfter, files: Record<string, string>, prefix?: string): string {
  return writeTree(tempDir(t, prefix), files);
}
