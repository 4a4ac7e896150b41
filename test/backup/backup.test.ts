/**
 * `homeostat backup` and `homeostat restore` on real files: an archive taken from a node's
 * database, config and secrets comes back where they were, with every generation, and a restore
 * touches nothing unless the whole archive checks out.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { list } from 'tar';
import { restoreBackup } from '../../src/backup/restore.js';
import { writeBackup } from '../../src/backup/write-archive.js';
import { currentOwner, DaemonLock } from '../../src/store/daemon-lock.js';
import { LATEST_VERSION } from '../../src/store/migrations.js';
import { tempDir } from '../support/tmp.js';
import { contentOf, NOW_MS, type NodeFiles, nodeFiles, restoreOnto } from './support.js';

async function members(archivePath: string): Promise<string[]> {
  const names: string[] = [];
  await list({ file: archivePath, onReadEntry: (entry) => names.push(`${entry.type} ${entry.path}`) });
  return names;
}

async function backUp(node: NodeFiles, includeSecrets: boolean): Promise<string> {
  const archivePath = path.join(node.dir, `backup-${includeSecrets ? 'secrets' : 'plain'}.tar.gz`);
  await writeBackup({
    dbPath: node.dbPath,
    configPath: node.configPath,
    archivePath,
    includeSecrets,
    nowMs: NOW_MS,
  });
  return archivePath;
}

/** The same node's places on another machine (a fresh install): nothing there yet. */
function freshInstall(dir: string): { dbPath: string; configPath: string } {
  return {
    dbPath: path.join(dir, 'new', 'var', 'homeostat.db'),
    configPath: path.join(dir, 'new', 'etc', 'config.yaml'),
  };
}

describe('homeostat backup', () => {
  test('given a node, when backed up, then one archive holds the manifest, the database and the config, and no secret', async (t) => {
    const node = nodeFiles(tempDir(t));
    const archivePath = path.join(node.dir, 'b.tar.gz');
    const { manifest } = await writeBackup({
      dbPath: node.dbPath,
      configPath: node.configPath,
      archivePath,
      includeSecrets: false,
      nowMs: NOW_MS,
    });
    assert.deepEqual(await members(archivePath), [
      'File manifest.json',
      'File homeostat.db',
      'File config.yaml',
    ]);
    assert.equal(manifest.nodeId, 'cellar');
    assert.equal(manifest.schemaVersion, LATEST_VERSION);
    assert.equal(manifest.lastGeneration, 2);
    assert.deepEqual(manifest.loops, { cellar: 1, room: 2 });
    assert.equal(manifest.createdAt, '2026-12-04T03:00:00.000Z');
    assert.equal(manifest.includesSecrets, false);
    assert.equal(fs.statSync(archivePath).mode & 0o777, 0o640);
    assert.deepEqual(
      fs.readdirSync(node.dir).filter((name) => name.startsWith('.')),
      [],
      'no staging directory or temporary file left',
    );
  });

  test('with includeSecrets, the files the config names are in it, each once', async (t) => {
    const node = nodeFiles(tempDir(t));
    const archivePath = await backUp(node, true);
    assert.deepEqual(await members(archivePath), [
      'File manifest.json',
      'File homeostat.db',
      'File config.yaml',
      'File secrets/2',
      'File secrets/3',
    ]);
  });
});

describe('homeostat restore', () => {
  test('given a backup, when restored onto a fresh install, then desired state, generations and events are as they were', async (t) => {
    const node = nodeFiles(tempDir(t));
    const before = contentOf(node.dbPath);
    const archivePath = await backUp(node, false);
    const target = freshInstall(node.dir);
    const lines = await restoreBackup({ archivePath, ...target, databaseOnly: false, nowMs: NOW_MS });
    assert.deepEqual(contentOf(target.dbPath), before);
    assert.equal(before.generation, 2);
    assert.equal(fs.readFileSync(target.configPath, 'utf8'), fs.readFileSync(node.configPath, 'utf8'));
    assert.match(
      lines[0] ?? '',
      /^restoring node cellar, taken 2026-12-04T03:00:00\.000Z by homeostat .*: schema \d+, generation 2, 2 loop\(s\)$/,
    );
    assert.equal(fs.statSync(target.dbPath).mode & 0o777, 0o640);
  });

  test('the secrets of a backup that has them come back where they were, with their modes', async (t) => {
    const node = nodeFiles(tempDir(t));
    const archivePath = await backUp(node, true);
    for (const file of [node.passwordFile, node.tokenFile, node.configPath, node.dbPath]) fs.rmSync(file);
    await restoreOnto(node, archivePath);
    assert.equal(fs.readFileSync(node.passwordFile, 'utf8'), 'broker-secret\n');
    assert.equal(fs.statSync(node.passwordFile).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(node.tokenFile, 'utf8'), 'api-secret\n');
    assert.equal(fs.statSync(node.tokenFile).mode & 0o777, 0o640);
  });

  test('a secret the config names outside the directory the config goes to is not written, and the output says where it is', async (t) => {
    const node = nodeFiles(tempDir(t));
    const archivePath = await backUp(node, true);
    const target = freshInstall(node.dir);
    const lines = await restoreBackup({ archivePath, ...target, databaseOnly: false, nowMs: NOW_MS });
    assert.ok(
      lines.some((line) =>
        line.includes(
          `secret ${node.passwordFile}: not restored (only files the restored config names, under ${path.dirname(target.configPath)}, are); it is secrets/2 in the archive`,
        ),
      ),
      lines.join('\n'),
    );
    assert.deepEqual(fs.readdirSync(path.dirname(target.configPath)), ['config.yaml']);
  });

  test('over an existing database and config, both are kept as .before-restore-<time>, not deleted', async (t) => {
    const node = nodeFiles(tempDir(t));
    const archivePath = await backUp(node, false);
    const oldDb = fs.readFileSync(node.dbPath);
    fs.appendFileSync(node.configPath, '# edited after the backup\n');
    const oldConfig = fs.readFileSync(node.configPath, 'utf8');
    const lines = await restoreOnto(node, archivePath);
    const stamp = '20261204T030000Z';
    assert.deepEqual(fs.readFileSync(`${node.dbPath}.before-restore-${stamp}`), oldDb);
    assert.equal(fs.readFileSync(`${node.configPath}.before-restore-${stamp}`, 'utf8'), oldConfig);
    assert.doesNotMatch(fs.readFileSync(node.configPath, 'utf8'), /edited after/);
    assert.ok(
      lines.some((line) => line.includes(`kept as ${node.configPath}.before-restore-${stamp}`)),
      lines.join('\n'),
    );
  });

  test('databaseOnly leaves the config as it is', async (t) => {
    const node = nodeFiles(tempDir(t));
    const archivePath = await backUp(node, true);
    fs.writeFileSync(node.configPath, 'node: {id: other}\n');
    await restoreOnto(node, archivePath, true);
    assert.equal(fs.readFileSync(node.configPath, 'utf8'), 'node: {id: other}\n');
  });

  test('given a daemon holding the database, restore is refused and the database is not touched', async (t) => {
    const node = nodeFiles(tempDir(t));
    const archivePath = await backUp(node, false);
    const bytes = fs.readFileSync(node.dbPath);
    const lock = DaemonLock.acquire(node.dbPath, currentOwner('cellar'));
    t.after(() => lock.release());
    await assert.rejects(
      restoreOnto(node, archivePath),
      /another homeostat is already running on .*node id cellar; stop it first/,
    );
    assert.deepEqual(fs.readFileSync(node.dbPath), bytes);
  });
});
