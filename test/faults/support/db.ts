import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { withReadOnlyDb } from '../../integration/helpers.js';

/**
 * Reading a daemon's database file from the test process (read-only; WAL lets the daemon go on
 * writing). Plain SQL on the tables of the store's contract: loop_desired, events, meta.
 */

/** `PRAGMA integrity_check` lines: ['ok'] for a sound file. */
export function integrity(dbPath: string): string[] {
  return withReadOnlyDb(dbPath, (db) =>
    (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check),
  );
}

export interface DesiredRow {
  loop: string;
  setpoint: number;
  mode: string;
  generation: number;
}

export function desiredRows(dbPath: string): Map<string, DesiredRow> {
  return withReadOnlyDb(
    dbPath,
    (db) =>
      new Map(
        db
          .prepare<[], DesiredRow>('SELECT loop, setpoint, mode, generation FROM loop_desired')
          .all()
          .map((row) => [row.loop, row]),
      ),
  );
}

/** Rows in the events table (all kinds), or 0 when there is no file yet. */
export function eventCount(dbPath: string): number {
  if (!existsSync(dbPath)) return 0;
  return withReadOnlyDb(
    dbPath,
    (db) => db.prepare<[], { n: number }>('SELECT count(*) AS n FROM events').get()!.n,
  );
}

/** The events table's highest id: rows written since a previous reading, even after pruning. */
export function lastEventId(dbPath: string): number {
  if (!existsSync(dbPath)) return 0;
  return withReadOnlyDb(
    dbPath,
    (db) => db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM events').get()!.id ?? 0,
  );
}

/** Files the store moved aside next to `dbPath` (`<db>.corrupt-…`, `<db>.newer-…`). */
export function movedAside(dbPath: string): string[] {
  const name = basename(dbPath);
  return readdirSync(dirname(dbPath)).filter(
    (f) => f.startsWith(`${name}.`) && /\.(corrupt|newer)-/.test(f) && !/-(wal|shm)$/.test(f),
  );
}

/**
 * History rows (table `samples`) of loops other than `exceptLoop` whose readings reach into
 * [fromMs, toMs] (clock time): proof that those loops kept cycling when nothing else shows it.
 */
export function historyRowsBetween(dbPath: string, fromMs: number, toMs: number, exceptLoop: string): number {
  return withReadOnlyDb(
    dbPath,
    (db) =>
      db
        .prepare<[string, number, number], { n: number }>(
          'SELECT count(*) AS n FROM samples WHERE loop <> ? AND until_ms >= ? AND at_ms <= ?',
        )
        .get(exceptLoop, fromMs, toMs)!.n,
  );
}

/** Whether the file has a table `name` yet (a daemon killed while creating it leaves none). */
export function hasTable(dbPath: string, name: string): boolean {
  return withReadOnlyDb(
    dbPath,
    (db) =>
      db
        .prepare<[string], { n: number }>(
          "SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = ?",
        )
        .get(name)!.n > 0,
  );
}

/** Events with an id above `afterId` (kind and message, oldest first). */
export function eventsAfter(
  dbPath: string,
  afterId: number,
): { kind: string; loop: string | null; message: string }[] {
  return withReadOnlyDb(dbPath, (db) =>
    db
      .prepare<[number], { kind: string; loop: string | null; message: string }>(
        'SELECT kind, loop, message FROM events WHERE id > ? ORDER BY id',
      )
      .all(afterId),
  );
}
