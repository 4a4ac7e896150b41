import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fsyncDirectory, fsyncFile, writeFileDurably } from '../src/durable-file.js';
import { makeTempDir } from './support/tmp.js';

describe('writeFileDurably', () => {
  test('given no file, when written, then the file has the content and the mode, and no temporary is left', (t) => {
    const { dir, remove } = makeTempDir('homeostat-durable-');
    t.after(remove);
    const path = join(dir, 'safe.json');
    writeFileDurably(path, '{"a":1}\n', 0o600);
    assert.equal(readFileSync(path, 'utf8'), '{"a":1}\n');
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['safe.json']);
  });

  test('given a file, when written again, then the new content replaces the old whole', (t) => {
    const { dir, remove } = makeTempDir('homeostat-durable-');
    t.after(remove);
    const path = join(dir, 'config.yaml');
    writeFileSync(path, 'old content that is longer than the new one\n');
    writeFileDurably(path, Buffer.from('new\n'));
    assert.equal(readFileSync(path, 'utf8'), 'new\n');
  });

  test('given a directory that does not exist, when written, then it throws naming the path and leaves nothing', (t) => {
    const { dir, remove } = makeTempDir('homeostat-durable-');
    t.after(remove);
    assert.throws(() => writeFileDurably(join(dir, 'missing', 'x.json'), 'x'), /missing/);
    assert.deepEqual(readdirSync(dir), []);
  });

  test('given a file and its directory, fsyncFile and fsyncDirectory flush them; a missing file throws naming it', (t) => {
    const { dir, remove } = makeTempDir('homeostat-durable-');
    t.after(remove);
    const path = join(dir, 'x');
    writeFileSync(path, 'x');
    fsyncFile(path);
    fsyncDirectory(dir);
    assert.throws(() => fsyncFile(join(dir, 'missing')), /missing/);
  });
});
