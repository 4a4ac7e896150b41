/**
 * Opening a backup for `homeostat restore` without trusting it: the archive's members are
 * listed before anything is extracted (regular files with the names a backup has, nothing
 * else), extracted into a directory of their own, and each checked against the manifest's size
 * and SHA-256; the database must pass quick_check and be one this homeostat can migrate. Only
 * then does restore touch the machine. A plain SQLite file (the copy the daemon keeps before a
 * schema migration) is accepted as a database alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { extract, list } from 'tar';
import { z } from 'zod';
import { LATEST_VERSION } from '../store/migrations.js';
import { hashFile } from './hash-file.js';
import {
  type BackupFileEntry,
  type BackupManifest,
  CONFIG_NAME,
  DATABASE_NAME,
  MANIFEST_NAME,
  manifestSchema,
} from './manifest.js';
import { readFacts, type SnapshotFacts } from './snapshot.js';

/** A manifest is a few kB; a config at most the loader's cap. Anything bigger is not ours. */
const MAX_MANIFEST_BYTES = 1 << 20;
const MEMBER_NAME = /^(manifest\.json|homeostat\.db|config\.yaml|secrets\/[1-9][0-9]{0,3})$/;

export interface OpenedBackup {
  /** Undefined for a plain database file. */
  manifest?: BackupManifest;
  facts: SnapshotFacts;
  databaseFile: string;
  config?: { file: string; entry: BackupFileEntry };
  secrets: Array<{ file: string; entry: BackupFileEntry }>;
  /** Deletes what was extracted. */
  remove(): void;
}

export class BadBackupError extends Error {
  constructor(archivePath: string, why: string) {
    super(`${archivePath} cannot be restored: ${why}`);
    this.name = 'BadBackupError';
  }
}

/** Opens `archivePath`, extracting into a new directory under `stageParent`. */
export async function openBackup(archivePath: string, stageParent: string): Promise<OpenedBackup> {
  const fail = (why: string) => new BadBackupError(archivePath, why);
  const kind = fileKind(archivePath);
  if (kind === 'sqlite') {
    const facts = checkedFacts(archivePath, archivePath, fail);
    return { facts, databaseFile: archivePath, secrets: [], remove: () => undefined };
  }
  if (kind !== 'gzip') throw fail('neither a homeostat backup (.tar.gz) nor a database file');
  const declaredBytes = await listMembers(archivePath, fail);
  requireSpace(stageParent, declaredBytes, fail);
  const stage = fs.mkdtempSync(path.join(stageParent, '.homeostat-restore-'));
  const remove = () => fs.rmSync(stage, { recursive: true, force: true });
  try {
    await extract({
      file: archivePath,
      cwd: stage,
      strict: true,
      filter: (name, entry) => MEMBER_NAME.test(name) && 'type' in entry && entry.type === 'File',
    });
    const manifest = readManifest(stage, fail);
    const entries = manifest.files.map((entry) => ({ file: verified(stage, entry, fail), entry }));
    const database = entries.find((e) => e.entry.name === DATABASE_NAME);
    if (database === undefined) throw fail('the manifest lists no database');
    const facts = checkedFacts(database.file, `the archive's ${DATABASE_NAME}`, fail);
    if (facts.schemaVersion !== manifest.schemaVersion) {
      throw fail(
        `the database has schema ${facts.schemaVersion}, the manifest says ${manifest.schemaVersion}`,
      );
    }
    const config = entries.find((e) => e.entry.name === CONFIG_NAME);
    const secrets = entries.filter((e) => e.entry.name !== DATABASE_NAME && e.entry.name !== CONFIG_NAME);
    return { manifest, facts, databaseFile: database.file, ...(config ? { config } : {}), secrets, remove };
  } catch (err) {
    remove();
    if (err instanceof BadBackupError) throw err;
    throw fail((err as Error).message);
  }
}

function fileKind(file: string): 'gzip' | 'sqlite' | 'other' {
  const head = Buffer.alloc(16);
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw new BadBackupError(file, (err as Error).message);
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new BadBackupError(file, 'not a regular file');
    const read = fs.readSync(fd, head, 0, head.length, 0);
    if (read >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
    if (read === 16 && head.toString('latin1') === 'SQLite format 3\0') return 'sqlite';
    return 'other';
  } finally {
    fs.closeSync(fd);
  }
}

/** Lists the archive; refuses a member a backup never has. Returns the bytes it would extract. */
async function listMembers(archivePath: string, fail: (why: string) => Error): Promise<number> {
  let bytes = 0;
  const problems: string[] = [];
  try {
    await list({
      file: archivePath,
      strict: true,
      onReadEntry: (entry) => {
        if (entry.type !== 'File' || !MEMBER_NAME.test(entry.path)) {
          problems.push(`${entry.type} ${JSON.stringify(entry.path)}`);
        } else if (entry.path === MANIFEST_NAME && (entry.size ?? 0) > MAX_MANIFEST_BYTES) {
          problems.push(`a manifest of ${entry.size} bytes`);
        }
        bytes += entry.size ?? 0;
      },
    });
  } catch (err) {
    throw fail(`not a readable archive (${(err as Error).message})`);
  }
  if (problems.length > 0)
    throw fail(`it holds what a backup never does: ${problems.slice(0, 3).join(', ')}`);
  return bytes;
}

function requireSpace(dir: string, bytes: number, fail: (why: string) => Error): void {
  const stats = fs.statfsSync(dir);
  const freeBytes = stats.bavail * stats.bsize;
  // Room to extract it and to copy the database into place once more.
  if (freeBytes < bytes * 2) {
    throw fail(
      `it needs ${Math.ceil((bytes * 2) / 1e6)} MB free in ${dir}, ${Math.floor(freeBytes / 1e6)} MB are`,
    );
  }
}

function readManifest(stage: string, fail: (why: string) => Error): BackupManifest {
  const file = path.join(stage, MANIFEST_NAME);
  if (!fs.existsSync(file)) throw fail(`no ${MANIFEST_NAME} in it`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw fail(`${MANIFEST_NAME} is not JSON (${(err as Error).message})`);
  }
  const format = (parsed as { format?: unknown } | null)?.format;
  if (typeof format === 'number' && format > 1) {
    throw fail(`it is backup format ${format}, written by a newer homeostat: restore it with that version`);
  }
  const result = manifestSchema.safeParse(parsed);
  if (!result.success) throw fail(`${MANIFEST_NAME}: ${z.prettifyError(result.error).replace(/\n/g, '; ')}`);
  return result.data;
}

function verified(stage: string, entry: BackupFileEntry, fail: (why: string) => Error): string {
  const file = path.join(stage, entry.name);
  if (!fs.existsSync(file)) throw fail(`${entry.name} is in the manifest, not in the archive`);
  const found = hashFile(file);
  if (found.bytes !== entry.bytes || found.sha256 !== entry.sha256) {
    throw fail(
      `${entry.name} is not what the manifest says (${found.bytes} bytes, ${entry.bytes} expected, or another SHA-256): the archive is damaged`,
    );
  }
  return file;
}

function checkedFacts(file: string, shownAs: string, fail: (why: string) => Error): SnapshotFacts {
  let facts: SnapshotFacts;
  try {
    facts = readFacts(file, shownAs);
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (facts.schemaVersion > LATEST_VERSION) {
    throw fail(
      `its database has schema ${facts.schemaVersion}, this homeostat knows ${LATEST_VERSION}: restore it with the version that wrote it (homeostat --version names the schema)`,
    );
  }
  return facts;
}
