/**
 * The latest time a database holds a record of (a sample, an event, a saved loop state): where
 * a simulation at `--speed N` got to. Read-only and forgiving: a file that is missing, locked,
 * damaged or from before a table existed gives what it can, or undefined.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';

const QUERIES = [
  'SELECT max(until_ms) AS t FROM samples',
  'SELECT max(at_ms) AS t FROM events',
  'SELECT max(saved_at_ms) AS t FROM loop_state',
];

export function latestRecordedMs(dbPath: string): number | undefined {
  if (!fs.existsSync(dbPath)) return undefined;
  let db: Database.Database;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true });
  } catch {
    return undefined;
  }
  try {
    let latest: number | undefined;
    for (const sql of QUERIES) {
      try {
        const t = db.prepare<[], { t: number | null }>(sql).get()?.t;
        if (typeof t === 'number' && (latest === undefined || t > latest)) latest = t;
      } catch {
        // A table this file does not have (yet): the others tell.
      }
    }
    return latest;
  } finally {
    db.close();
  }
}
