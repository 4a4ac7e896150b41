import type Database from 'better-sqlite3';
import { decodeRecorded, encodeRecorded, type RecordedPoint } from './recorded-codec.js';

/**
 * The values of sensors a loop records without regulating (loops.<id>.record), in the table
 * `recorded_samples` (migration 8): like the loop's samples, one row per loop, sensor and flush
 * holding that flush's points packed (recorded-codec.ts), appended to a rowid table without a
 * secondary index (a flush touches the table's last page). Written in the StateStore's flush
 * transaction; pruned with the loop's history (recorded-retention.ts).
 */

/** A point as read back: `resolutionS` set (> 0) for a bucket mean written by retention. */
export type StoredRecordedPoint = RecordedPoint & { resolutionS?: number };

/** One recorded sensor's points of one loop. */
export interface RecordedSeriesPoints {
  sensor: string;
  points: StoredRecordedPoint[];
}

/** Points packed into one row at most (~4 bytes each: rows well inside a 512-byte page). */
const MAX_POINTS_PER_ROW = 48;
/** Pending points kept per loop and sensor while flushes fail: a day at one a minute, and more. */
const MAX_PENDING_POINTS = 8640;

type Key = string;
const keyOf = (loop: string, sensor: string): Key => `${loop}\u0000${sensor}`;

export interface RecordedBatch {
  series: { loop: string; sensor: string; points: RecordedPoint[] }[];
}

/** What waits for the next flush; a failed flush puts it back. */
export class RecordedWrites {
  private readonly pending = new Map<Key, { loop: string; sensor: string; points: RecordedPoint[] }>();

  add(loop: string, sensor: string, point: RecordedPoint): void {
    const key = keyOf(loop, sensor);
    const entry = this.pending.get(key);
    if (entry) entry.points.push(point);
    else this.pending.set(key, { loop, sensor, points: [point] });
  }

  get dirty(): boolean {
    return this.pending.size > 0;
  }

  /** A loop's points that wait for a flush, per sensor (copies). */
  pendingOf(loop: string): RecordedSeriesPoints[] {
    return [...this.pending.values()]
      .filter((entry) => entry.loop === loop)
      .map((entry) => ({ sensor: entry.sensor, points: [...entry.points] }));
  }

  take(): RecordedBatch {
    const series = [...this.pending.values()];
    this.pending.clear();
    return { series };
  }

  /** Puts back what a failed flush took, ahead of what came since; the oldest beyond the cap go. */
  requeue({ series }: RecordedBatch): void {
    for (const older of series) {
      const key = keyOf(older.loop, older.sensor);
      const newer = this.pending.get(key)?.points ?? [];
      const points = [...older.points, ...newer].slice(-MAX_PENDING_POINTS);
      this.pending.set(key, { loop: older.loop, sensor: older.sensor, points });
    }
  }
}

export type InsertRecordedStatement = Database.Statement<[string, string, number, number, number, Buffer]>;

export function prepareInsertRecorded(db: Database.Database): InsertRecordedStatement {
  return db.prepare(
    'INSERT INTO recorded_samples (loop, sensor, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?, ?)',
  );
}

/** Writes `points` as rows of MAX_POINTS_PER_ROW; returns the rows written. */
export function insertRecorded(
  insert: InsertRecordedStatement,
  loop: string,
  sensor: string,
  points: readonly RecordedPoint[],
  resolutionS: number,
): number {
  let rows = 0;
  for (let i = 0; i < points.length; i += MAX_POINTS_PER_ROW) {
    const row = points.slice(i, i + MAX_POINTS_PER_ROW);
    let fromMs = Infinity;
    let untilMs = -Infinity;
    for (const { atMs } of row) {
      fromMs = Math.min(fromMs, atMs);
      untilMs = Math.max(untilMs, atMs);
    }
    insert.run(loop, sensor, fromMs, untilMs, resolutionS, encodeRecorded(row));
    rows++;
  }
  return rows;
}

/** Every row of one flush (inside its transaction); returns the rows written. */
export function writeRecorded(insert: InsertRecordedStatement, { series }: RecordedBatch): number {
  let rows = 0;
  for (const { loop, sensor, points } of series) rows += insertRecorded(insert, loop, sensor, points, 0);
  return rows;
}

/**
 * A loop's stored recorded points from `fromMs` to `untilMs` (both included), per sensor, oldest
 * first, with `pending` (those waiting for a flush) merged in: a point at the time of a stored
 * one is that one (a flush retried after it wrote). For the command line's database fallback
 * and tests; the HTTP API reads through recorded-reader.ts, which yields.
 */
export function readRecorded(
  db: Database.Database,
  loop: string,
  range: { fromMs: number; untilMs: number },
  pending: readonly RecordedSeriesPoints[] = [],
): RecordedSeriesPoints[] {
  const rows = db
    .prepare<[string, number, number], RecordedRow>(RECORDED_IN_RANGE)
    .iterate(loop, range.fromMs, Math.min(range.untilMs, Number.MAX_SAFE_INTEGER));
  const merged = new RecordedMerge(range);
  for (const row of rows) merged.addRow(row);
  for (const { sensor, points } of pending) merged.add(sensor, points, true);
  return merged.series();
}

/** The rows of one loop that may hold points of a range: loop, range start, range end. */
export const RECORDED_IN_RANGE =
  'SELECT sensor, resolution_s, data FROM recorded_samples WHERE loop = ? AND until_ms >= ? AND at_ms <= ? ORDER BY id';

export interface RecordedRow {
  sensor: string;
  resolution_s: number;
  data: Buffer;
}

/** Points per sensor within a range; pending ones skip times already stored. */
export class RecordedMerge {
  private readonly bySensor = new Map<string, { points: StoredRecordedPoint[]; storedAt: Set<number> }>();

  constructor(private readonly range: { fromMs: number; untilMs: number }) {}

  /** A stored row's points (bucket means tagged with their resolution). */
  addRow(row: RecordedRow): void {
    const points = decodeRecorded(row.data);
    const resolutionS = row.resolution_s;
    this.add(row.sensor, resolutionS > 0 ? points.map((p) => ({ ...p, resolutionS })) : points);
  }

  add(sensor: string, points: readonly StoredRecordedPoint[], pending = false): void {
    let entry = this.bySensor.get(sensor);
    if (!entry) {
      entry = { points: [], storedAt: new Set() };
      this.bySensor.set(sensor, entry);
    }
    for (const point of points) {
      if (point.atMs < this.range.fromMs || point.atMs > this.range.untilMs) continue;
      if (pending && entry.storedAt.has(point.atMs)) continue;
      if (!pending) entry.storedAt.add(point.atMs);
      entry.points.push(point);
    }
  }

  /** Per sensor in the order first seen, points in time order (stable at equal times). */
  series(): RecordedSeriesPoints[] {
    return [...this.bySensor].map(([sensor, { points }]) => ({
      sensor,
      points: points.sort((a, b) => a.atMs - b.atMs),
    }));
  }
}
