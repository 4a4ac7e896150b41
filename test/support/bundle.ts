/**
 * Which test files test/bundle.test.ts runs in its one process (see there), and which run in a
 * process each. A file of the bundled folders joins the bundle unless it does something that
 * would reach the other files of that process (LEAKS); such a file runs on its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Folders under test/ whose leak-free test files run in test/bundle.test.ts. The others
 * (test/integration, the files at the top of test/, test/bench) run a process each: they start
 * daemons as the user would and have not been tried in one process.
 */
export const BUNDLED_DIRS = [
  'alerts',
  'backup',
  'commands',
  'config',
  'control',
  'core',
  'daemon',
  'docs',
  'drivers',
  'http',
  'init',
  'install',
  'kinds',
  'lint',
  'logs',
  'mqtt',
  'operations',
  'plot',
  'runtime',
  'safe',
  'storage',
  'store',
  'systemd',
  'time',
] as const;

export const TEST_ROOT = join(import.meta.dirname, '..');

/**
 * Helpers of test/support that register hooks (beforeEach, afterEach) in the file that calls
 * them: called at a file's top level, around every test of the process.
 */
export const HOOK_HELPERS = ['desiredStoreFileEachTest'] as const;

/** What in a test file would reach the other files of its process, with why. */
export const LEAKS: readonly [pattern: RegExp, why: string][] = [
  [
    new RegExp(`^(const \\w+ = )?(${HOOK_HELPERS.join('|')})\\(`, 'm'),
    'a helper called at the top level registers hooks around every test of the process',
  ],
  [/^(before|after|beforeEach|afterEach)\(/m, 'a top-level hook runs around every test of the process'],
  [/process\.env(\.\w+|\[[^\]]+\])\s*=[^=]/, 'a change of process.env is seen by every later file'],
  [/delete process\.env/, 'a change of process.env is seen by every later file'],
  [/process\.chdir\(/, 'the working directory is the process’s'],
  [/process\.umask\(/, 'the file mode mask is the process’s'],
  [/process\.exitCode\s*=[^=]/, 'the exit code is the process’s'],
  [/process\.(on|once|addListener|prependListener)\(/, 'a process listener outlives its file'],
  [/(^|[^\w.])mock\.(timers|method|getter|setter|property)\b/m, 'a top-level mock outlives its file'],
  [
    /(globalThis|console|process\.std(out|err))\.\w+\s*=[^=]/,
    'a replaced global is seen by every later file',
  ],
];

/** `text` with its comments left out, so a comment naming `process.on(` is not a finding. */
export function codeOf(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** Why the source `text` must run in a process of its own; empty when it may join the bundle. */
export function leaksOf(text: string): string[] {
  const code = codeOf(text);
  return LEAKS.filter(([pattern]) => pattern.test(code)).map(([, why]) => why);
}

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

/** Every file test/bundle.test.ts runs, in its order. */
export function bundledTestFiles(): string[] {
  return BUNDLED_DIRS.flatMap((dir) => testFilesUnder(join(TEST_ROOT, dir))).filter(
    (file) => leaksOf(readFileSync(file, 'utf8')).length === 0,
  );
}

/** Every test file `npm test` runs in a process of its own, test/bundle.test.ts among them. */
export function separateTestFiles(): string[] {
  const bundled = new Set(bundledTestFiles());
  return testFilesUnder(TEST_ROOT).filter((file) => !bundled.has(file));
}
