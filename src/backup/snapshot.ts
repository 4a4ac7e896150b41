/**
 * A consistent copy of the daemon's database, taken while it runs: `VACUUM INTO` reads the
 * file in one read transaction (under WAL it never blocks the daemon's writes, nor they it) and
 * writes a compact new file holding exactly what was committed when it began. A file copy
 * would not do: the newest commits live in the -wal, and a copy taken between a commit's pages
 * is a damaged database.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { schemaVersion } from '../store/migrations.js';
import { needsWriterRecovery, openRecoveredCopy } from '../store/recovered-copy.js';

/** A read waits this long on a checkpoint or recovery holding the file (the CLI is not the daemon). */
const READ_BUSY_TIMEOUT_MS = 5_000;

/** What a snapshot holds, for the manifest and the lines printed. */
export interface SnapshotFacts {
  schemaVersion: number;
  lastGeneration: number;
  loops: Record<string, number>;
}

/**
 * Writes the snapshot of `dbPath` to `destPath` (which must not exist) and returns what it
 * holds. Throws an Error naming the file: missing, not a homeostat database, damaged.
 */
export function snapshotDatabase(dbPath: string, destPath: string): SnapshotFacts {
  if (!fs.existsSync(dbPath)) throw new Error(`no database at ${dbPath}: give the daemon's with --db`);
  const source = openSource(dbPath);
  try {
    source.prepare('VACUUM INTO ?').run(destPath);
  } catch (err) {
    throw new Error(`cannot snapshot ${dbPath}: ${(err as Error).message}`, { cause: err });
  } finally {
    source.close();
  }
  return readFacts(destPath, dbPath);
}

/**
 * The facts of a database file: its schema, generation counter and loops. Throws when it is
 * not a sound homeostat database (quick_check, no generation counter).
 */
export function readFacts(file: string, shownAs: string = file): SnapshotFacts {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma('quick_check') as Array<{ quick_check: string }>;
    const problems = check.map((row) => row.quick_check).filter((line) => line !== 'ok');
    if (problems.length > 0) throw new Error(`${shownAs} is damaged: ${problems.slice(0, 3).join('; ')}`);
    const version = schemaVersion(db);
    const tables = new Set(
      db
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((row) => row.name),
    );
    if (version === 0 || !tables.has('meta') || !tables.has('loop_desired')) {
      throw new Error(`${shownAs} is not a homeostat database (no desired state in it)`);
    }
    const generation = db
      .prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'lastGeneration'")
      .get()?.value;
    const loops = db
      .prepare<[], { loop: string; generation: number }>(
        'SELECT loop, generation FROM loop_desired WHERE removed_at_ms IS NULL ORDER BY loop',
      )
      .all();
    return {
      schemaVersion: version,
      lastGeneration: generation === undefined ? 0 : Number(generation),
      loops: Object.fromEntries(loops.map((row) => [row.loop, row.generation])),
    };
  } finally {
    db.close();
  }
}

/** The database opened for reading; a WAL index only a writer can rebuild: a recovered copy. */
function openSource(dbPath: string): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true, timeout: READ_BUSY_TIMEOUT_MS });
  } catch (err) {
    throw new Error(`cannot open ${dbPath}: ${(err as Error).message}`, { cause: err });
  }
  try {
    schemaVersion(db);
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (err) {
    db.close();
    if (!needsWriterRecovery(err)) throw new Error(`cannot read ${dbPath}: ${(err as Error).message}`);
    return openRecoveredCopy(dbPath, err);
  }
}
