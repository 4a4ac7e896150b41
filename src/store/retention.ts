import type Database from 'better-sqlite3';
import { STORAGE_DEFAULTS } from '../config/schema/storage.js';
import { getOrAdd, pruneRecorded } from './recorded-retention.js';
import { decodeSamples, type Sample } from './samples-codec.js';
import { insertSamples } from './state-store.js';

/**
 * History retention: readings older than `rawRetentionS` are replaced by one average per loop
 * and `downsampleS` bucket, averages older than `downsampledRetentionS` deleted, and events
 * older than `eventRetentionS` deleted. Limits move in whole UTC days, so of the daemon's hourly
 * calls the first after midnight does a day's work in one transaction and the others write
 * nothing. Freed pages are reused by later writes: the file stops growing once every limit is
 * reached.
 */

/**
 * Retention settings (config `storage`, resolved: the daemon passes them all), in seconds.
 * A field left out takes the config's default (storage.ts: 7 days raw, 300 s buckets, 365 days
 * of buckets, 90 days of events).
 */
export interface RetentionOptions {
  /** Readings are kept as they are for this long, s. */
  rawRetentionS?: number;
  /** Older readings become one average per bucket of this length, s; 0 deletes them instead. */
  downsampleS?: number;
  /** Downsampled buckets are kept this long (counted from their time), s. */
  downsampledRetentionS?: number;
  /** Events are kept this long, s. */
  eventRetentionS?: number;
}

/** The config's defaults, read from its schema rather than written a second time. */
export const RETENTION_DEFAULTS: Required<RetentionOptions> = {
  rawRetentionS: STORAGE_DEFAULTS.rawRetentionS,
  downsampleS: STORAGE_DEFAULTS.downsampleS,
  downsampledRetentionS: STORAGE_DEFAULTS.downsampledRetentionS,
  eventRetentionS: STORAGE_DEFAULTS.eventRetentionS,
};

/** What one pruneHistory run did. */
export interface PruneResult {
  /** Readings replaced by bucket averages (or deleted, with downsampleS 0). */
  readingsDownsampled: number;
  /** Bucket averages written. */
  bucketsWritten: number;
  /** Bucket averages deleted for being older than downsampledRetentionS. */
  bucketsDeleted: number;
  /** Events deleted for age or, beyond MAX_EVENT_ROWS, oldest first. */
  eventsDeleted: number;
}

const DAY_MS = 86_400_000;

/**
 * Most rows the events table keeps; beyond it the oldest go first, whatever their age. Sized for
 * 90 days of a busy node (four relay loops switching every few minutes write ~1,000 events a
 * day), about 10–15 MB of 512-byte pages: a flood of commands or faults cannot grow the file
 * without bound. Enforced at every prune (hourly) and, when the table may be over, every flush.
 */
export const MAX_EVENT_ROWS = 100_000;

/** Downsampled buckets packed into one samples row at most (~10 bytes each: a row fits a 512-byte page). */
const MAX_BUCKETS_PER_ROW = 36;

/**
 * Applies retention as of `nowMs`. Buckets are aligned to multiples of `downsampleS` since the
 * epoch and the raw limit is rounded down to a bucket boundary, so a bucket is always averaged
 * from all its readings at once. A bucket's action is its most frequent one; its measured value
 * is the mean of the readings that had one (none: no value).
 */
export function pruneHistory(
  db: Database.Database,
  nowMs: number,
  options: RetentionOptions = {},
  maxEventRows = MAX_EVENT_ROWS,
): PruneResult {
  const o = { ...RETENTION_DEFAULTS, ...options };
  const bucketMs = o.downsampleS * 1000;
  let rawCutoffMs = cutoff(nowMs, o.rawRetentionS);
  if (bucketMs > 0) rawCutoffMs = Math.floor(rawCutoffMs / bucketMs) * bucketMs;
  const bucketCutoffMs = cutoff(nowMs, o.downsampledRetentionS);
  const eventCutoffMs = cutoff(nowMs, o.eventRetentionS);

  const statements = prepareSampleStatements(db);
  const result: PruneResult = {
    readingsDownsampled: 0,
    bucketsWritten: 0,
    bucketsDeleted: 0,
    eventsDeleted: 0,
  };

  db.transaction(() => {
    downsampleReadings(statements, rawCutoffMs, o.downsampleS, result);
    deleteExpired(db, statements.deleteRow, { bucketCutoffMs, eventCutoffMs, maxEventRows }, result);
    // Recorded sensors' values (loops.<id>.record) keep the loop's history's limits.
    pruneRecorded(db, { rawCutoffMs, bucketCutoffMs, downsampleS: o.downsampleS });
  }).immediate();
  return result;
}

type InsertSamplesStatement = Database.Statement<[string, number, number, number, Buffer]>;

function prepareSampleStatements(db: Database.Database) {
  return {
    oldRows: db.prepare<[number], { id: number; loop: string; data: Buffer }>(
      'SELECT id, loop, data FROM samples WHERE resolution_s = 0 AND at_ms < ? ORDER BY id',
    ),
    deleteRow: db.prepare<[number]>('DELETE FROM samples WHERE id = ?'),
    insert: db.prepare<[string, number, number, number, Buffer]>(
      'INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?)',
    ),
  };
}

/**
 * Replaces the readings before `rawCutoffMs` by one average per loop and `downsampleS` bucket
 * (deletes them with downsampleS 0): each old row is deleted, its readings newer than the
 * limit written back as readings, then the averages written.
 */
function downsampleReadings(
  { oldRows, deleteRow, insert }: ReturnType<typeof prepareSampleStatements>,
  rawCutoffMs: number,
  downsampleS: number,
  result: PruneResult,
): void {
  const bucketMs = downsampleS * 1000;
  const buckets = new Map<string, Map<number, Bucket>>();
  const keep = new Map<string, Sample[]>();
  for (const row of oldRows.all(rawCutoffMs)) {
    for (const sample of decodeSamples(row.data)) {
      if (sample.atMs >= rawCutoffMs) {
        // The row straddles the limit: its newer readings stay as readings.
        getOrAdd(keep, row.loop, () => []).push(sample);
        continue;
      }
      result.readingsDownsampled++;
      if (bucketMs === 0) continue;
      const startMs = Math.floor(sample.atMs / bucketMs) * bucketMs;
      const loopBuckets = getOrAdd(buckets, row.loop, () => new Map<number, Bucket>());
      getOrAdd(loopBuckets, startMs, () => new Bucket(startMs)).add(sample);
    }
    deleteRow.run(row.id);
  }
  for (const [loop, samples] of keep) insertRows(insert, loop, samples, 0);
  for (const [loop, loopBuckets] of buckets) {
    const averages = [...loopBuckets.values()].sort((a, b) => a.startMs - b.startMs).map((b) => b.average());
    insertRows(insert, loop, averages, downsampleS);
    result.bucketsWritten += averages.length;
  }
}

/** Deletes bucket averages and events past their retention, then events beyond the cap. */
function deleteExpired(
  db: Database.Database,
  deleteRow: Database.Statement<[number]>,
  limits: { bucketCutoffMs: number; eventCutoffMs: number; maxEventRows: number },
  result: PruneResult,
): void {
  for (const row of db
    .prepare<[number], { id: number; data: Buffer }>(
      'SELECT id, data FROM samples WHERE resolution_s > 0 AND until_ms < ?',
    )
    .all(limits.bucketCutoffMs)) {
    result.bucketsDeleted += decodeSamples(row.data).length;
    deleteRow.run(row.id);
  }
  result.eventsDeleted = db
    .prepare<[number]>('DELETE FROM events WHERE at_ms < ?')
    .run(limits.eventCutoffMs).changes;
  result.eventsDeleted += capEvents(db, limits.maxEventRows);
}

/**
 * Deletes the oldest events beyond `maxRows` (insertion order: a clock set back does not
 * matter); returns how many. Cheap when under the cap: min and max of the rowid tell that
 * without counting (ids only grow, so max − min + 1 bounds the row count).
 */
export function capEvents(db: Database.Database, maxRows = MAX_EVENT_ROWS): number {
  const range = db
    .prepare<[], { lo: number | null; hi: number | null }>('SELECT min(id) AS lo, max(id) AS hi FROM events')
    .get();
  if (!range || range.lo === null || range.hi === null || range.hi - range.lo + 1 <= maxRows) return 0;
  const newestDropped = db
    .prepare<[number], { id: number }>('SELECT id FROM events ORDER BY id DESC LIMIT 1 OFFSET ?')
    .get(maxRows);
  if (!newestDropped) return 0;
  return db.prepare<[number]>('DELETE FROM events WHERE id <= ?').run(newestDropped.id).changes;
}

/**
 * `nowMs − retentionS`, rounded down to a whole UTC day (to the retention itself if shorter):
 * the limit moves once a day, so of hourly calls one a day writes — a day's worth at once, in
 * far fewer pages than 24 small runs (each run rewrites the edges of the b-trees it trims).
 */
function cutoff(nowMs: number, retentionS: number): number {
  const stepMs = Math.min(DAY_MS, retentionS * 1000);
  const limitMs = nowMs - retentionS * 1000;
  return stepMs > 0 ? Math.floor(limitMs / stepMs) * stepMs : limitMs;
}

function insertRows(
  insert: InsertSamplesStatement,
  loop: string,
  samples: Sample[],
  resolutionS: number,
): void {
  for (let i = 0; i < samples.length; i += MAX_BUCKETS_PER_ROW) {
    insertSamples(insert, loop, samples.slice(i, i + MAX_BUCKETS_PER_ROW), resolutionS);
  }
}

/** Running sums of one loop's readings in one bucket. */
class Bucket {
  private count = 0;
  private setpointSum = 0;
  private outputSum = 0;
  private measuredSum = 0;
  private measuredCount = 0;
  /** Insertion order breaks ties between equally frequent actions: the first seen wins. */
  private readonly actions = new Map<string, number>();

  constructor(readonly startMs: number) {}

  add(sample: Sample): void {
    this.count++;
    this.setpointSum += sample.setpoint;
    this.outputSum += sample.output;
    if (sample.measured !== undefined) {
      this.measuredSum += sample.measured;
      this.measuredCount++;
    }
    this.actions.set(sample.action, (this.actions.get(sample.action) ?? 0) + 1);
  }

  average(): Sample {
    let action = 'idle';
    let best = 0;
    for (const [name, n] of this.actions) {
      if (n > best) {
        action = name;
        best = n;
      }
    }
    return {
      atMs: this.startMs,
      setpoint: this.setpointSum / this.count,
      measured: this.measuredCount > 0 ? this.measuredSum / this.measuredCount : undefined,
      output: this.outputSum / this.count,
      action,
    };
  }
}
