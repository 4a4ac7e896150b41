/**
 * Reading a database whose WAL index only a writer can rebuild. A reader that cannot write the
 * -shm (a member of the daemon's group: the file is 0640) reads it read-only, which SQLite
 * allows, except in one state a killed daemon can leave behind: the WAL header written and the
 * index not yet filled in (seen when the daemon is killed in its first second, on a WAL it has
 * just started). Every read then fails with SQLITE_PROTOCOL ("locking protocol") until a writer
 * opens the file, so `homeostat status --db` would fail while the service is down. Such a
 * reader reads a private copy instead: the file and its -wal copied into a directory of its
 * own, opened read-write there (SQLite rebuilds the index from the WAL, as the daemon would at
 * its next start), taken into memory, and the copy deleted. It sees every committed change.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

/** The errors of a read that needs a writer to rebuild the WAL index first. */
const NEEDS_WRITER = new Set(['SQLITE_PROTOCOL', 'SQLITE_READONLY_RECOVERY', 'SQLITE_READONLY_CANTINIT']);

export function needsWriterRecovery(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && NEEDS_WRITER.has(code);
}

/**
 * The database at `dbPath` with its WAL applied, in memory and read-only. Throws `cause` (the
 * error of the direct read) when the copy is not sound either: the daemon may have been writing
 * while it was copied.
 */
export function openRecoveredCopy(dbPath: string, cause: unknown): Database.Database {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeostat-read-'));
  try {
    const copyPath = path.join(dir, 'copy.db');
    fs.copyFileSync(dbPath, copyPath);
    if (fs.existsSync(`${dbPath}-wal`)) fs.copyFileSync(`${dbPath}-wal`, `${copyPath}-wal`);
    const copy = new Database(copyPath);
    let image: Buffer;
    try {
      const check = copy.pragma('quick_check') as Array<{ quick_check: string }>;
      if (check[0]?.quick_check !== 'ok') throw cause;
      // Out of WAL mode (the WAL checkpointed into the file): an image in memory has no -wal.
      copy.pragma('journal_mode = DELETE');
      image = copy.serialize();
    } finally {
      copy.close();
    }
    return new Database(image, { readonly: true });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
