/** Which test files test/pure.test.ts runs in its one process (see there). */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Folders under test/ run by test/pure.test.ts; `npm test` leaves them out of its own list. */
export const BUNDLED_DIRS = ['core', 'config', 'drivers', 'operations', 'time', 'plot'] as const;

export const TEST_ROOT = join(import.meta.dirname, '..');

/** The test files under `dir`, sorted. */
export function testFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return testFilesUnder(path);
      return entry.name.endsWith('.test.ts') ? [path] : [];
    })
    .sort();
}

/** Every file test/pure.test.ts runs, in its order. */
export function bundledTestFiles(): string[] {
  return BUNDLED_DIRS.flatMap((dir) => testFilesUnder(join(TEST_ROOT, dir)));
}
