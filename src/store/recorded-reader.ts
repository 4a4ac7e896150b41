import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { openStoreReadOnly, STORE_BUSY_TIMEOUT_MS } from './database.js';
import {
  RECORDED_IN_RANGE,
  RecordedMerge,
  type RecordedRow,
  type RecordedSeriesPoints,
} from './recorded-store.js';

/**
 * A loop's recorded values (loops.<id>.record) for the HTTP API without holding the daemon's
 * event loop, as HistoryReader does for its samples: its own read-only connection per request,
 * one read transaction, a turn given to the event loop every ~2 ms of work, then the points
 * still waiting for a flush (taken in the same turn as the snapshot, each point given once).
 */

/** Where the recorded values are: the daemon's store, as far as a read needs it. */
export interface RecordedSource {
  /** The database file to open, or why there is none to read (the in-memory stand-in). */
  file(): { path: string } | { unavailable: string };
  pendingRecorded(loop: string): RecordedSeriesPoints[];
}

const SLICE_WORK_MS = 2;
const ROWS_PER_CHECK = 16;

/**
 * Every recorded point of `loop` from `fromMs` to `untilMs` (both included), per sensor, oldest
 * first. Without a file to read (or one that cannot be opened) only the pending points, and
 * `memoryOnly` says why; a read that fails once open throws.
 */
export async function readRecordedYielding(
  source: RecordedSource,
  read: { loop: string; fromMs: number; untilMs: number },
  open: (path: string) => Database.Database = openStoreReadOnly,
): Promise<{ series: RecordedSeriesPoints[]; memoryOnly?: string }> {
  const merge = new RecordedMerge(read);
  const file = source.file();
  let db: Database.Database | undefined;
  let memoryOnly = 'unavailable' in file ? file.unavailable : undefined;
  if ('path' in file) {
    try {
      db = open(file.path);
    } catch (error) {
      memoryOnly = error instanceof Error ? error.message : String(error);
    }
  }
  if (!db) {
    for (const { sensor, points } of source.pendingRecorded(read.loop)) merge.add(sensor, points, true);
    return { series: merge.series(), ...(memoryOnly === undefined ? {} : { memoryOnly }) };
  }
  try {
    db.pragma(`busy_timeout = ${STORE_BUSY_TIMEOUT_MS}`);
    db.exec('BEGIN');
    const rows = db
      .prepare<[string, number, number], RecordedRow>(RECORDED_IN_RANGE)
      .iterate(read.loop, read.fromMs, Math.min(read.untilMs, Number.MAX_SAFE_INTEGER));
    // The first step fixes the snapshot; the pending points are taken in the same turn.
    const pending = source.pendingRecorded(read.loop);
    let sliceStart = performance.now();
    let sinceCheck = 0;
    for (const row of rows) {
      merge.addRow(row);
      if (++sinceCheck >= ROWS_PER_CHECK && performance.now() - sliceStart >= SLICE_WORK_MS) {
        sinceCheck = 0;
        await nextTurn();
        sliceStart = performance.now();
      }
    }
    db.exec('COMMIT');
    for (const { sensor, points } of pending) merge.add(sensor, points, true);
    return { series: merge.series() };
  } finally {
    db.close();
  }
}
