/** `homeostat backup` and `homeostat restore` as a person types them: what they print and return. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { archiveName, sizeText } from '../../src/commands/backup.js';
import { runCliHere } from '../support/cli.js';
import { tempDir } from '../support/tmp.js';
import { contentOf, nodeFiles } from './support.js';

describe('homeostat backup on the command line', () => {
  const usageErrors = [
    { args: ['a.tar.gz', '--dir', 'd'], says: 'homeostat backup: give FILE or --dir, not both' },
    { args: ['--keep', '3'], says: 'homeostat backup: --keep needs --dir' },
    {
      args: ['--dir', 'd', '--keep', '0'],
      says: 'homeostat backup: --keep must be a whole number from 1 to 9999, got "0"',
    },
    {
      args: ['--dir', 'd', '--keep', 'all'],
      says: 'homeostat backup: --keep must be a whole number from 1 to 9999, got "all"',
    },
  ];
  for (const { args, says } of usageErrors) {
    test(`backup ${args.join(' ')} is a usage error (exit 2): ${says}`, async () => {
      const result = await runCliHere(['backup', ...args]);
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr.trim(), says);
    });
  }

  test('given --dir and --keep 2, when backed up three times, then the two newest of this node are kept and another node’s are not touched', async (t) => {
    const node = nodeFiles(tempDir(t));
    const dir = path.join(node.dir, 'backups');
    fs.mkdirSync(dir);
    const older = [Date.parse('2026-11-01T03:00:00Z'), Date.parse('2026-11-02T03:00:00Z')];
    for (const atMs of older) fs.writeFileSync(path.join(dir, archiveName('cellar', atMs)), 'old');
    fs.writeFileSync(path.join(dir, archiveName('attic', older[0] ?? 0)), 'another node');
    const args = ['backup', '--config', node.configPath, '--db', node.dbPath, '--dir', dir, '--keep', '2'];
    const result = await runCliHere(args);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.match(
      lines[0] ?? '',
      /^backup written: .*homeostat-cellar-\d{8}T\d{6}Z\.tar\.gz \(\d+ kB\): node cellar, taken /,
    );
    assert.deepEqual(lines.slice(1), [
      '  secret files not included (--include-secrets takes the files the config names)',
      `  removed the older ${archiveName('cellar', older[0] ?? 0)}`,
    ]);
    assert.deepEqual(
      fs.readdirSync(dir).sort(),
      [
        archiveName('attic', older[0] ?? 0),
        archiveName('cellar', older[1] ?? 0),
        path.basename(lines[0]?.split(' ')[2] ?? ''),
      ].sort(),
    );
  });

  test('given FILE exists, backup refuses to overwrite it (exit 1) and leaves it as it was', async (t) => {
    const node = nodeFiles(tempDir(t));
    const file = path.join(node.dir, 'taken.tar.gz');
    fs.writeFileSync(file, 'someone else’s');
    const result = await runCliHere(['backup', file, '--config', node.configPath, '--db', node.dbPath]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr.trim(),
      `homeostat backup: ${file} exists; give another name (a backup never overwrites one)`,
    );
    assert.equal(fs.readFileSync(file, 'utf8'), 'someone else’s');
  });

  test('given no database where --db points, backup says so (exit 1) and writes no archive', async (t) => {
    const node = nodeFiles(tempDir(t));
    const file = path.join(node.dir, 'b.tar.gz');
    const missing = path.join(node.dir, 'nowhere.db');
    const result = await runCliHere(['backup', file, '--config', node.configPath, '--db', missing]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr.trim(),
      `homeostat backup: no database at ${missing}: give the daemon's with --db`,
    );
    assert.equal(fs.existsSync(file), false);
  });

  test('sizes read as kB below a megabyte and MB above', () => {
    assert.deepEqual([120, 12_345, 999_999, 3_456_789].map(sizeText), ['1 kB', '12 kB', '1000 kB', '3.5 MB']);
  });
});

describe('homeostat restore on the command line', () => {
  test('without FILE, restore says how to name one (exit 2)', async () => {
    const result = await runCliHere(['restore']);
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr.trim(),
      'homeostat restore: name the backup, e.g. homeostat restore homeostat-cellar-20261204T030000Z.tar.gz',
    );
  });

  test('given a backup, restore --database-only puts the database back and says to start the daemon', async (t) => {
    const node = nodeFiles(tempDir(t));
    const before = contentOf(node.dbPath);
    const file = path.join(node.dir, 'b.tar.gz');
    const backedUp = await runCliHere(['backup', file, '--config', node.configPath, '--db', node.dbPath]);
    assert.equal(backedUp.code, 0, backedUp.stderr);
    const dbPath = path.join(node.dir, 'elsewhere', 'homeostat.db');
    const result = await runCliHere([
      'restore',
      file,
      '--db',
      dbPath,
      '--config',
      node.configPath,
      '--database-only',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(contentOf(dbPath), before);
    assert.equal(
      result.stdout.trim().split('\n').at(-1),
      'restored: start the daemon (sudo systemctl start homeostat); it goes on from the restored generations',
    );
  });

  test('given a file that is not a backup, restore names it and why (exit 1)', async (t) => {
    const node = nodeFiles(tempDir(t));
    const result = await runCliHere([
      'restore',
      node.configPath,
      '--db',
      node.dbPath,
      '--config',
      node.configPath,
    ]);
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr.trim(),
      `homeostat restore: ${node.configPath} cannot be restored: neither a homeostat backup (.tar.gz) nor a database file`,
    );
  });
});
