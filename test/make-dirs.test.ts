import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { makeDirs } from '../src/make-dirs.js';
import { tempDir } from './support/tmp.js';

describe('makeDirs (mkdir -p that cannot spin)', () => {
  test('given two missing levels, then both are made with the mode and the topmost is returned', (t) => {
    const root = tempDir(t);
    const previous = process.umask(0o027);
    try {
      assert.equal(makeDirs(path.join(root, 'a', 'b'), 0o750), path.join(root, 'a'));
    } finally {
      process.umask(previous);
    }
    for (const dir of ['a', 'a/b']) assert.equal(fs.statSync(path.join(root, dir)).mode & 0o777, 0o750, dir);
  });

  test('given an existing directory, then nothing is made and undefined is returned', (t) => {
    assert.equal(makeDirs(tempDir(t), 0o750), undefined);
  });

  test('given a parent that refuses children with ENOENT (procfs), then it throws at once instead of looping', () => {
    // Node 20's fs.mkdirSync(…, { recursive: true }) never returns here.
    assert.throws(() => makeDirs('/proc/homeostat-no-such/dir', 0o750), { code: 'ENOENT' });
  });

  test('given a file where a directory should be, then it throws', (t) => {
    const file = path.join(tempDir(t), 'file');
    fs.writeFileSync(file, '');
    assert.throws(() => makeDirs(path.join(file, 'sub'), 0o750), { code: 'ENOTDIR' });
  });
});
