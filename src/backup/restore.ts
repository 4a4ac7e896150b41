/**
 * `homeostat restore`: puts a checked backup (read-archive.ts) in place. Nothing is deleted:
 * the database, config and secret files found there are renamed to `<file>.before-restore-<time>`
 * first. The daemon's lock is held throughout, so a restore is refused while a daemon runs on
 * that database, and no daemon can start in the middle of one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDirectory, fsyncFile, writeFileDurably } from '../durable-file.js';
import { makeDirs } from '../make-dirs.js';
import { currentOwner, DaemonLock } from '../store/daemon-lock.js';
import { STORE_DIR_MODE, STORE_FILE_MODE } from '../store/database.js';
import { configFacts } from './config-files.js';
import { describeManifest, fileStamp } from './manifest.js';
import { type OpenedBackup, openBackup } from './read-archive.js';

/** A secret comes back with its owner's and group's bits only: no set-id, sticky or world bits. */
const SECRET_MODE_MASK = 0o770;

/** A database and the files SQLite keeps beside it, moved together. */
const DATABASE_FILES = ['', '-wal', '-shm'];

export interface RestoreOptions {
  archivePath: string;
  dbPath: string;
  configPath: string;
  /** Leave the config and the secret files as they are. */
  databaseOnly: boolean;
  nowMs: number;
}

/** Restores; returns the lines to print. Throws what stopped it (nothing moved by then). */
export async function restoreBackup(options: RestoreOptions): Promise<string[]> {
  const dbDir = path.dirname(path.resolve(options.dbPath));
  makeDirs(dbDir, STORE_DIR_MODE);
  const lock = DaemonLock.acquire(options.dbPath, currentOwner('restore', options.nowMs));
  try {
    const backup = await openBackup(options.archivePath, dbDir);
    try {
      return putInPlace(backup, options);
    } finally {
      backup.remove();
    }
  } finally {
    lock.release();
  }
}

function putInPlace(backup: OpenedBackup, options: RestoreOptions): string[] {
  const stamp = fileStamp(options.nowMs);
  const lines = [
    backup.manifest === undefined
      ? `restoring the database ${options.archivePath} (schema ${backup.facts.schemaVersion}, generation ${backup.facts.lastGeneration})`
      : `restoring ${describeManifest(backup.manifest)}`,
  ];
  const dbPath = path.resolve(options.dbPath);
  const kept = moveAside(dbPath, stamp, DATABASE_FILES);
  try {
    placeDatabase(backup.databaseFile, dbPath);
  } catch (err) {
    // A full disk, say: the database that was there goes back, as if nothing had been tried.
    if (kept)
      for (const suffix of DATABASE_FILES)
        if (fs.existsSync(kept + suffix)) fs.renameSync(kept + suffix, dbPath + suffix);
    throw err;
  }
  if (kept) lines.push(`  the database that was at ${dbPath} is kept as ${kept}`);
  lines.push(`  database → ${dbPath}`);
  if (options.databaseOnly) return lines;
  if (backup.config) {
    lines.push(
      placeFile(backup.config.file, path.resolve(options.configPath), stamp, { mode: 0o640 }, 'config'),
    );
  }
  const allowed = secretTargets(backup, path.resolve(options.configPath));
  for (const secret of backup.secrets) {
    const target = secret.entry.path;
    if (target === undefined) continue;
    if (!allowed.has(target)) {
      lines.push(
        `  secret ${target}: not restored (only files the restored config names, under ${path.dirname(path.resolve(options.configPath))}, are); it is ${secret.entry.name} in the archive`,
      );
      continue;
    }
    const mode = (secret.entry.mode ?? 0o600) & SECRET_MODE_MASK;
    lines.push(placeFile(secret.file, target, stamp, { ...secret.entry, mode }, 'secret'));
  }
  return lines;
}

/**
 * Where secrets may be written: a path the archive's own config names, under the directory the
 * config is restored to. An archive is not trusted to name a place (restore runs as root; a
 * crafted manifest could otherwise write /etc/shadow).
 */
function secretTargets(backup: OpenedBackup, configTarget: string): Set<string> {
  if (backup.config === undefined) return new Set();
  const dir = path.dirname(configTarget) + path.sep;
  return new Set(configFacts(backup.config.file).secretFiles.filter((file) => file.startsWith(dir)));
}

/** Renames `file` (and its companions by suffix) aside; returns the new name, or undefined. */
function moveAside(file: string, stamp: string, suffixes: readonly string[]): string | undefined {
  if (!fs.existsSync(file)) return undefined;
  const aside = `${file}.before-restore-${stamp}`;
  for (const suffix of suffixes) {
    if (fs.existsSync(file + suffix)) fs.renameSync(file + suffix, aside + suffix);
  }
  return aside;
}

/** Copies the snapshot into place under a temporary name, then renames it (a cut leaves none). */
function placeDatabase(source: string, dbPath: string): void {
  const temporary = `${dbPath}.restore-tmp-${process.pid}`;
  try {
    fs.copyFileSync(source, temporary);
    fs.chmodSync(temporary, STORE_FILE_MODE);
    ownLikeDirectory(temporary, path.dirname(dbPath));
    fsyncFile(temporary);
    fs.renameSync(temporary, dbPath);
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  fsyncDirectory(path.dirname(dbPath));
}

/** As root, the database belongs to whoever owns its directory (the service's user). */
function ownLikeDirectory(file: string, dir: string): void {
  if (process.getuid?.() !== 0) return;
  const owner = fs.statSync(dir);
  fs.chownSync(file, owner.uid, owner.gid);
}

function placeFile(
  source: string,
  target: string,
  stamp: string,
  how: { mode?: number | undefined; uid?: number | undefined; gid?: number | undefined },
  what: 'config' | 'secret',
): string {
  const content = fs.readFileSync(source);
  const existing = fs.existsSync(target) ? fs.statSync(target) : undefined;
  if (existing && fs.readFileSync(target).equals(content)) return `  ${what} ${target}: unchanged`;
  // Without an owner of its own (the config), the new file takes the one it replaces.
  if (how.uid === undefined && existing)
    how = { mode: existing.mode & 0o7777, uid: existing.uid, gid: existing.gid };
  const kept = moveAside(target, stamp, ['']);
  makeDirs(path.dirname(target), 0o750);
  writeFileDurably(target, content, how.mode ?? 0o600);
  if (how.mode !== undefined) fs.chmodSync(target, how.mode);
  if (process.getuid?.() === 0 && how.uid !== undefined && how.gid !== undefined) {
    fs.chownSync(target, how.uid, how.gid);
  }
  return `  ${what} → ${target}${kept ? ` (the one there is kept as ${kept})` : ''}`;
}
