/**
 * test/pure.test.ts runs the test files of a few folders in one process. That holds only while
 * `npm test` leaves exactly those folders out of its own list (else they run twice, or not at
 * all) and while no bundled file does what would reach the other files of the process.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { BUNDLED_DIRS, bundledTestFiles, TEST_ROOT } from '../support/pure-bundle.js';

const REPO = join(TEST_ROOT, '..');

/** What in a bundled file would reach the others, with why. */
const LEAKS: readonly [pattern: RegExp, why: string][] = [
  [/^(before|after|beforeEach|afterEach)\(/m, 'a top-level hook runs around every test of the process'],
  [/process\.env(\.\w+|\[[^\]]+\])\s*=[^=]/, 'a change of process.env is seen by every later file'],
  [/delete process\.env/, 'a change of process.env is seen by every later file'],
  [/process\.chdir\(/, 'the working directory is the process’s'],
  [/process\.(on|once|addListener)\(/, 'a process listener outlives its file'],
  [/mock\.timers/, 'mocked timers are the process’s'],
];

/** The folders `npm test` leaves out of its list (its `-not -path 'test/X/*'`). */
function excludedByNpmTest(): string[] {
  const script = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts.test as string;
  return [...script.matchAll(/-not -path 'test\/([\w-]+)\/\*'/g)].map((match) => match[1]!);
}

/** `text` with the comments left out, so a comment naming `process.on(` is not a finding. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

describe('the pure bundle (test/pure.test.ts)', () => {
  test('npm test leaves out exactly the bundled folders', () => {
    assert.deepEqual(excludedByNpmTest().sort(), [...BUNDLED_DIRS].sort());
  });

  test('it runs the test files of those folders, at least one each', () => {
    const files = bundledTestFiles().map((file) => relative(TEST_ROOT, file));
    for (const dir of BUNDLED_DIRS)
      assert.ok(
        files.some((file) => file.startsWith(`${dir}/`)),
        dir,
      );
  });

  test('no bundled file has what would leak into the others', () => {
    const found = bundledTestFiles().flatMap((file) => {
      const text = code(readFileSync(file, 'utf8'));
      return LEAKS.filter(([pattern]) => pattern.test(text)).map(
        ([, why]) => `${relative(REPO, file)}: ${why}`,
      );
    });
    assert.deepEqual(found, []);
  });

  test('the leak rules find what they are for', () => {
    const table: [source: string, leaks: boolean][] = [
      ['afterEach(() => db.close());', true],
      ["process.env.HOMEOSTAT_X = '1';", true],
      ["process.env['A'] = 'b';", true],
      ["process.on('exit', () => {});", true],
      ['mock.timers.enable();', true],
      ["  test('x', () => { process.env.A === 'b'; });", false],
      ["describe('d', () => { after(() => undefined); });", false],
    ];
    for (const [source, leaks] of table) {
      assert.equal(
        LEAKS.some(([pattern]) => pattern.test(code(source))),
        leaks,
        source,
      );
    }
  });
});
