/**
 * A restore trusts nothing in the archive: each archive below is one `homeostat backup` never
 * writes (a path out of the staging directory, a link, a damaged or newer database, a manifest
 * that lies). Each is refused with a reason a person can act on, and the node's database and
 * config are exactly as they were, with no staging directory or kept copy left behind.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { extract } from 'tar';
import { BadBackupError } from '../../src/backup/read-archive.js';
import { writeBackup } from '../../src/backup/write-archive.js';
import { LATEST_VERSION } from '../../src/store/migrations.js';
import { tempDir } from '../support/tmp.js';
import { type RawMember, rawTarGz } from './raw-tar.js';
import { NOW_MS, type NodeFiles, nodeFiles, restoreOnto } from './support.js';

/** The members of a real backup of `node`, by name. */
async function realMembers(node: NodeFiles): Promise<Map<string, Buffer>> {
  const archivePath = path.join(node.dir, 'real.tar.gz');
  await writeBackup({
    dbPath: node.dbPath,
    configPath: node.configPath,
    archivePath,
    includeSecrets: false,
    nowMs: NOW_MS,
  });
  const out = path.join(node.dir, 'real');
  fs.mkdirSync(out);
  await extract({ file: archivePath, cwd: out });
  fs.rmSync(archivePath);
  const members = new Map<string, Buffer>();
  for (const name of ['manifest.json', 'homeostat.db', 'config.yaml']) {
    members.set(name, fs.readFileSync(path.join(out, name)));
  }
  fs.rmSync(out, { recursive: true });
  return members;
}

type Manifest = {
  format: number;
  schemaVersion: number;
  files: Array<{ name: string; bytes: number; sha256: string }>;
};

function manifestOf(members: Map<string, Buffer>): Manifest {
  return JSON.parse(String(members.get('manifest.json'))) as Manifest;
}

/** The manifest edited by `change`, and every listed file's size and hash made true again. */
function withManifest(members: Map<string, Buffer>, change: (manifest: Manifest) => void): RawMember[] {
  const manifest = manifestOf(members);
  change(manifest);
  for (const entry of manifest.files) {
    const content = members.get(entry.name);
    if (content === undefined) continue;
    entry.bytes = content.length;
    entry.sha256 = createHash('sha256').update(content).digest('hex');
  }
  return [
    { name: 'manifest.json', content: JSON.stringify(manifest) },
    ...[...members]
      .filter(([name]) => name !== 'manifest.json')
      .map(([name, content]) => ({ name, content })),
  ];
}

function asMembers(members: Map<string, Buffer>): RawMember[] {
  return [...members].map(([name, content]) => ({ name, content }));
}

/** The database with its schema version set to `version`. */
function databaseAtVersion(dir: string, bytes: Buffer, version: number): Buffer {
  const file = path.join(dir, 'newer.db');
  fs.writeFileSync(file, bytes);
  const db = new Database(file);
  db.pragma(`user_version = ${version}`);
  db.close();
  const out = fs.readFileSync(file);
  fs.rmSync(file);
  return out;
}

interface HostileCase {
  given: string;
  /** The archive's bytes, from a real backup's members. */
  archive: (members: Map<string, Buffer>, dir: string) => Buffer;
  refusal: RegExp;
}

const CASES: HostileCase[] = [
  {
    given: 'a member named ../escaped',
    archive: (m) => rawTarGz([...asMembers(m), { name: '../escaped', content: 'x' }]),
    refusal: /holds what a backup never does: File "\.\.\/escaped"/,
  },
  {
    given: 'an absolute member name',
    archive: (m) => rawTarGz([{ name: '/etc/cron.d/evil', content: 'x' }, ...asMembers(m)]),
    refusal: /holds what a backup never does: File "(\/)?etc\/cron\.d\/evil"/,
  },
  {
    given: 'config.yaml as a symlink to /etc/shadow',
    archive: (m) =>
      rawTarGz([
        ...asMembers(m).filter((member) => member.name !== 'config.yaml'),
        { name: 'config.yaml', type: '2', linkTarget: '/etc/shadow' },
      ]),
    refusal: /holds what a backup never does: SymbolicLink "config\.yaml"/,
  },
  {
    given: 'a directory entry',
    archive: (m) => rawTarGz([{ name: 'secrets/', type: '5' }, ...asMembers(m)]),
    refusal: /holds what a backup never does: Directory "secrets\/"/,
  },
  {
    given: 'a database changed after the manifest was written',
    archive: (m) => {
      const damaged = Buffer.from(m.get('homeostat.db') ?? '');
      damaged[damaged.length - 1] = (damaged.at(-1) ?? 0) ^ 0xff;
      return rawTarGz(asMembers(new Map([...m, ['homeostat.db', damaged]])));
    },
    refusal: /homeostat\.db is not what the manifest says .*: the archive is damaged/,
  },
  {
    given: 'backup format 2',
    archive: (m) =>
      rawTarGz(
        withManifest(m, (manifest) => {
          manifest.format = 2;
        }),
      ),
    refusal: /backup format 2, written by a newer homeostat: restore it with that version/,
  },
  {
    given: 'a database of a newer schema than this homeostat knows',
    archive: (m, dir) => {
      const newer = databaseAtVersion(dir, m.get('homeostat.db') ?? Buffer.alloc(0), LATEST_VERSION + 1);
      return rawTarGz(
        withManifest(new Map([...m, ['homeostat.db', newer]]), (manifest) => {
          manifest.schemaVersion = LATEST_VERSION + 1;
        }),
      );
    },
    refusal: new RegExp(
      `database has schema ${LATEST_VERSION + 1}, this homeostat knows ${LATEST_VERSION}: restore it with the version that wrote it`,
    ),
  },
  {
    given: 'a manifest whose schema is not the database’s',
    archive: (m) =>
      rawTarGz(
        withManifest(m, (manifest) => {
          manifest.schemaVersion = 1;
        }),
      ),
    refusal: new RegExp(`the database has schema ${LATEST_VERSION}, the manifest says 1`),
  },
  {
    given: 'no manifest',
    archive: (m) => rawTarGz(asMembers(m).filter((member) => member.name !== 'manifest.json')),
    refusal: /no manifest\.json in it/,
  },
  {
    given: 'a manifest that is not JSON',
    archive: (m) => rawTarGz([{ name: 'manifest.json', content: '{"format": 1,' }, ...asMembers(m).slice(1)]),
    refusal: /manifest\.json is not JSON/,
  },
  {
    given: 'a member the manifest lists but the archive lacks',
    archive: (m) => rawTarGz(asMembers(m).filter((member) => member.name !== 'config.yaml')),
    refusal: /config\.yaml is in the manifest, not in the archive/,
  },
  {
    given: 'a text file',
    archive: () => Buffer.from('node:\n  id: cellar\n'),
    refusal: /neither a homeostat backup \(\.tar\.gz\) nor a database file/,
  },
  {
    given: 'gzip of something that is not a tar',
    archive: () => gzipSync(Buffer.from('just some words, not a tar archive at all\n'.repeat(40))),
    refusal: /not a readable archive/,
  },
  {
    given: 'a backup cut short',
    archive: (m) => rawTarGz(asMembers(m)).subarray(0, 300),
    refusal: /not a readable archive/,
  },
  {
    given: 'a SQLite file that is not a homeostat database',
    archive: (_m, dir) => {
      const file = path.join(dir, 'other.db');
      const db = new Database(file);
      db.exec('CREATE TABLE notes (text TEXT)');
      db.close();
      const bytes = fs.readFileSync(file);
      fs.rmSync(file);
      return bytes;
    },
    refusal: /is not a homeostat database \(no desired state in it\)/,
  },
];

/** The node's files, by hash and text, and what else is in their directories. */
function snapshotOf(node: NodeFiles): unknown {
  const dirs = [path.dirname(node.dbPath), path.dirname(node.configPath)];
  return {
    dbSha256: createHash('sha256').update(fs.readFileSync(node.dbPath)).digest('hex'),
    config: fs.readFileSync(node.configPath, 'utf8'),
    // The daemon lock's file stays, as it does after a daemon stops.
    listing: dirs.map((dir) =>
      fs
        .readdirSync(dir)
        .filter((name) => !name.endsWith('.lock'))
        .sort(),
    ),
  };
}

describe('restore refuses an archive homeostat backup never writes, and touches nothing', () => {
  for (const { given, archive, refusal } of CASES) {
    test(`given ${given}`, async (t) => {
      const node = nodeFiles(tempDir(t));
      const archivePath = path.join(node.dir, 'hostile.tar.gz');
      fs.writeFileSync(archivePath, archive(await realMembers(node), node.dir));
      const before = snapshotOf(node);
      await assert.rejects(restoreOnto(node, archivePath), (err: Error) => {
        assert.ok(err instanceof BadBackupError, `${err.name}: ${err.message}`);
        assert.match(err.message, refusal);
        assert.ok(err.message.startsWith(`${archivePath} cannot be restored: `), err.message);
        return true;
      });
      assert.deepEqual(snapshotOf(node), before);
      assert.equal(fs.existsSync(path.join(node.dir, 'escaped')), false);
    });
  }
});
