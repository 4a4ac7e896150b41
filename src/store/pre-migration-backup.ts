/**
 * Before the daemon migrates its database to a newer schema, it keeps a copy at the old one
 * beside it (`<db>.schema-<N>.backup`, for the last two versions it left): the way back when an
 * update has to be undone. An older homeostat cannot read a migrated file (it moves it aside and
 * starts from the config); `homeostat restore <db>.schema-<N>.backup` puts the copy back.
 */
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { fsyncDirectory, fsyncFile } from '../durable-file.js';
import { LATEST_VERSION, schemaVersion } from './migrations.js';

/** Copies kept: the one just made and the one before it (each is a whole database). */
const COPIES_KEPT = 2;

export function preMigrationBackupPath(dbPath: string, version: number): string {
  return `${dbPath}.schema-${version}.backup`;
}

/**
 * Writes the copy when `db` is about to be migrated (a file at a version between 1 and the
 * latest). A failure (a full disk) is logged and the migration goes on: regulating with the
 * new schema matters more than the way back.
 */
export function backupBeforeMigration(db: Database.Database, dbPath: string, logger: Logger): void {
  const from = schemaVersion(db);
  if (from === 0 || from >= LATEST_VERSION || db.memory) return;
  const target = preMigrationBackupPath(dbPath, from);
  const temporary = `${target}.tmp-${process.pid}`;
  try {
    fs.rmSync(temporary, { force: true });
    db.prepare('VACUUM INTO ?').run(temporary);
    fs.chmodSync(temporary, 0o640);
    fsyncFile(temporary);
    fs.renameSync(temporary, target);
    fsyncDirectory(path.dirname(target));
    const dropped = dropOlderCopies(dbPath, from);
    logger.info(
      { path: target, from, to: LATEST_VERSION, dropped },
      `database kept at schema ${from} as ${target} before migrating it (homeostat restore ${target} undoes the update)`,
    );
  } catch (err) {
    fs.rmSync(temporary, { force: true });
    logger.warn(
      { path: target, err: (err as Error).message },
      `could not keep a copy of the database at schema ${from} before migrating it (${(err as Error).message}): migrating anyway; going back to an older homeostat would start from the config`,
    );
  }
}

/** Deletes the copies of versions older than the last COPIES_KEPT; returns their names. */
function dropOlderCopies(dbPath: string, newestVersion: number): string[] {
  const dir = path.dirname(dbPath);
  const pattern = /^(.*)\.schema-(\d+)\.backup$/;
  const dropped: string[] = [];
  for (const name of fs.readdirSync(dir)) {
    const match = pattern.exec(name);
    if (match?.[1] !== path.basename(dbPath)) continue;
    if (Number(match[2]) > newestVersion - COPIES_KEPT) continue;
    fs.rmSync(path.join(dir, name), { force: true });
    dropped.push(name);
  }
  return dropped;
}
