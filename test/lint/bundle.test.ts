/**
 * test/bundle.test.ts runs the leak-free test files of a few folders in one process. That holds
 * only while `npm test` runs every other file on its own (else files run twice, or not at all)
 * and while the leak rules catch what would reach the other files of the process.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import {
  BUNDLED_DIRS,
  bundledTestFiles,
  codeOf,
  HOOK_HELPERS,
  leaksOf,
  separateTestFiles,
  TEST_ROOT,
  testFilesUnder,
} from '../support/bundle.js';

const REPO = join(TEST_ROOT, '..');

/** The exported functions of `code` whose bodies call a hook of node:test itself (not `t.after`). */
function hookHelpersIn(code: string): string[] {
  const exports = [...code.matchAll(/^export function (\w+)/gm)];
  return exports.flatMap((match, i) => {
    const body = code.slice(match.index, exports[i + 1]?.index ?? code.length);
    return /(^|[^.\w])(before|after|beforeEach|afterEach)\(/m.test(body) ? [match[1]!] : [];
  });
}

describe('the bundle (test/bundle.test.ts)', () => {
  test('npm test takes its list of files from test/support/test-files.ts', () => {
    const script = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts.test as string;
    assert.match(
      script,
      /^node --import tsx --test .*\$\(node --import tsx test\/support\/test-files\.ts\)$/,
    );
  });

  test('every test file runs exactly once: in the bundle or on its own', () => {
    const bundled = bundledTestFiles();
    const separate = separateTestFiles();
    assert.deepEqual([...bundled, ...separate].sort(), testFilesUnder(TEST_ROOT));
    assert.equal(new Set([...bundled, ...separate]).size, bundled.length + separate.length);
    assert.ok(separate.includes(join(TEST_ROOT, 'bundle.test.ts')));
  });

  test('each bundled folder gives the bundle at least one file', () => {
    const files = bundledTestFiles().map((file) => relative(TEST_ROOT, file));
    for (const dir of BUNDLED_DIRS)
      assert.ok(
        files.some((file) => file.startsWith(`${dir}/`)),
        dir,
      );
  });

  test('a file with a leak runs on its own, even in a bundled folder', () => {
    const separate = separateTestFiles().map((file) => relative(TEST_ROOT, file));
    const leaking = BUNDLED_DIRS.flatMap((dir) => testFilesUnder(join(TEST_ROOT, dir)))
      .filter((file) => leaksOf(readFileSync(file, 'utf8')).length > 0)
      .map((file) => relative(TEST_ROOT, file));
    assert.ok(leaking.length > 0, 'some bundled folder has a file with a top-level hook');
    for (const file of leaking) assert.ok(separate.includes(file), file);
  });

  test('every helper of test/support that registers hooks of its caller is in HOOK_HELPERS', () => {
    const support = join(TEST_ROOT, 'support');
    const registering = readdirSync(support)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) => hookHelpersIn(codeOf(readFileSync(join(support, name), 'utf8'))));
    assert.deepEqual(registering.sort(), [...HOOK_HELPERS].sort());
  });

  test('the leak rules find what they are for', () => {
    const table: [source: string, leaks: boolean][] = [
      ['afterEach(() => db.close());', true],
      ["process.env.HOMEOSTAT_X = '1';", true],
      ["process.env['A'] = 'b';", true],
      ['delete process.env.A;', true],
      ["process.on('exit', () => {});", true],
      ['process.umask(0o077);', true],
      ['process.exitCode = 1;', true],
      ['mock.timers.enable();', true],
      ["mock.method(fs, 'readFileSync');", true],
      ['globalThis.fetch = fakeFetch;', true],
      ['console.log = () => {};', true],
      ['process.stdout.write = () => true;', true],
      ["  test('x', () => { process.env.A === 'b'; });", false],
      ["describe('d', () => { after(() => undefined); });", false],
      ["test('t', (t) => { t.mock.method(fs, 'readFileSync'); });", false],
      ['const fake = mock.fn();', false],
      ['// process.on( in a comment', false],
      ['/* afterEach(\n) */', false],
      ["const disk = desiredStoreFileEachTest('homeostat-x-');", true],
      ['  const disk = desiredStoreFileEachTest(); // inside a describe: its own hooks', false],
    ];
    for (const [source, leaks] of table) assert.equal(leaksOf(source).length > 0, leaks, source);
  });
});
