/**
 * `homeostat backup`'s archive: a gzipped tar (readable with `tar tzf`) of the manifest, the
 * database snapshot, the config and, only when asked, the secret files the config names. It is
 * staged in a directory beside the archive (not /tmp: a Pi's /tmp is RAM, and a year of history
 * may not fit), written under a temporary name, fsynced and renamed: a power cut leaves the
 * previous archive or the new one, never half of one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { create } from 'tar';
import { fsyncDirectory, fsyncFile } from '../durable-file.js';
import { homeostatVersion } from '../version.js';
import { configFacts } from './config-files.js';
import { hashFile } from './hash-file.js';
import {
  BACKUP_FORMAT,
  type BackupFileEntry,
  type BackupManifest,
  CONFIG_NAME,
  DATABASE_NAME,
  MANIFEST_NAME,
  SECRET_PREFIX,
} from './manifest.js';
import { snapshotDatabase } from './snapshot.js';

export interface WriteBackupOptions {
  dbPath: string;
  /** The config file; none there: the archive holds the database alone. */
  configPath: string;
  archivePath: string;
  includeSecrets: boolean;
  nowMs: number;
}

/** Writes the archive; returns its manifest and the notes worth telling (a secret not found). */
export async function writeBackup(
  options: WriteBackupOptions,
): Promise<{ manifest: BackupManifest; notes: string[] }> {
  const archiveDir = path.dirname(path.resolve(options.archivePath));
  const stage = fs.mkdtempSync(path.join(archiveDir, '.homeostat-backup-'));
  const temporary = `${options.archivePath}.tmp-${process.pid}`;
  try {
    const staged = stageMembers(stage, options);
    fs.writeFileSync(path.join(stage, MANIFEST_NAME), `${JSON.stringify(staged.manifest, null, 2)}\n`);
    const members = [MANIFEST_NAME, ...staged.manifest.files.map((file) => file.name)];
    await create({ gzip: true, file: temporary, cwd: stage, portable: true, mode: 0o640 }, members);
    fs.chmodSync(temporary, 0o640);
    fsyncFile(temporary);
    fs.renameSync(temporary, options.archivePath);
    fsyncDirectory(archiveDir);
    return staged;
  } finally {
    fs.rmSync(temporary, { force: true });
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

function stageMembers(
  stage: string,
  options: WriteBackupOptions,
): { manifest: BackupManifest; notes: string[] } {
  const notes: string[] = [];
  const facts = snapshotDatabase(options.dbPath, path.join(stage, DATABASE_NAME));
  const files: BackupFileEntry[] = [entryOf(stage, DATABASE_NAME)];
  const config = configFacts(options.configPath);
  notes.push(...config.notes);
  if (config.text !== undefined) {
    fs.writeFileSync(path.join(stage, CONFIG_NAME), config.text);
    files.push({ ...entryOf(stage, CONFIG_NAME), path: path.resolve(options.configPath) });
  }
  if (options.includeSecrets) {
    fs.mkdirSync(path.join(stage, SECRET_PREFIX));
    for (const secretPath of config.secretFiles) {
      const name = `${SECRET_PREFIX}${files.length}`;
      try {
        const stat = fs.statSync(secretPath);
        if (!stat.isFile()) throw new Error('not a regular file');
        fs.copyFileSync(secretPath, path.join(stage, name));
        files.push({
          ...entryOf(stage, name),
          path: secretPath,
          mode: stat.mode & 0o7777,
          uid: stat.uid,
          gid: stat.gid,
        });
      } catch (err) {
        notes.push(`secret file ${secretPath} left out: ${(err as Error).message}`);
      }
    }
  }
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    homeostatVersion: homeostatVersion(),
    schemaVersion: facts.schemaVersion,
    createdAt: new Date(options.nowMs).toISOString(),
    ...(config.nodeId === undefined ? {} : { nodeId: config.nodeId }),
    lastGeneration: facts.lastGeneration,
    loops: facts.loops,
    databasePath: path.resolve(options.dbPath),
    includesSecrets: options.includeSecrets,
    files,
  };
  return { manifest, notes };
}

function entryOf(stage: string, name: string): BackupFileEntry {
  return { name, ...hashFile(path.join(stage, name)) };
}
