import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { openStoreReadOnly, STORE_BUSY_TIMEOUT_MS } from './database.js';
import { decodeSamples, type Sample } from './samples-codec.js';

/**
 * History for the HTTP API without holding the daemon's event loop: regulation must never wait
 * on a page. better-sqlite3 is synchronous and the samples table has no index but its rowid (on
 * purpose: SD-card writes), so one query over a week of readings held the loop for 170 ms on
 * x86 (1–2 s on a Pi), once per chart. Here a read:
 * - opens its own read-only connection to the file per request (correct across the store
 *   supervisor's recovery or reopen, which change the daemon's connection), in one read
 *   transaction: one snapshot however long the read takes;
 * - walks the table in rowid slices (the primary key: a slice's cost is bounded however few of
 *   its rows match) with `.iterate()`, and gives the event loop a turn every ~2 ms of work;
 * - hands every sample in range to `sink` (a HistoryBuckets: nothing held per sample), then the
 *   samples still waiting for a flush, taken in the same turn as the snapshot (each sample is in
 *   one or the other; one in both, a flush retried after it wrote, is given once);
 * - runs one at a time: other requests wait in a bounded queue, beyond which they are refused.
 * Rows come in insertion order, not time order: the sink must not care.
 */

/** How far back a request may reach from its end: the 365 days of downsampled retention, and some. */
export const MAX_HISTORY_SPAN_MS = 400 * 86_400_000;
/**
 * Requests that may wait for the one running; more are refused (HistoryBusyError). The dashboard
 * asks for every loop's chart at once: a node of 10 or 20 loops must not see refusals.
 */
export const MAX_WAITING_READS = 32;
/** Work between two turns given to the event loop, ms. */
const SLICE_WORK_MS = 2;
/** Rows between two looks at the clock. */
const ROWS_PER_CHECK = 16;
/** Rowids per statement: bounds the rows a single step may skip (other loops, other times). */
const ROWIDS_PER_SLICE = 1_024;

/** Where the history is: the daemon's store (StoreSupervisor), as far as a read needs it. */
export interface HistorySource {
  /** The database file to open, or why there is none to read (the in-memory stand-in). */
  file(): { path: string } | { unavailable: string };
  /** A loop's samples waiting for a flush (a copy). */
  pendingSamples(loop: string): readonly Sample[];
}

export interface HistoryRead {
  loop: string;
  /** Both ends included. */
  fromMs: number;
  untilMs: number;
}

/** How a read went: `memoryOnly` says why the stored samples are missing from it. */
export interface HistoryReadResult {
  storedSamples: number;
  pendingSamples: number;
  memoryOnly?: string;
}

/** Too many requests already wait: try again (HTTP 503). */
export class HistoryBusyError extends Error {
  constructor(waiting: number) {
    super(`history busy: ${waiting} requests already wait for the one being read; try again shortly`);
    this.name = 'HistoryBusyError';
  }
}

export interface HistoryReaderOptions {
  maxWaiting?: number;
  /** Opens the file read-only (tests pass a failing or counting one). */
  open?: (path: string) => Database.Database;
  /** Work between turns, ms (tests: 0, a turn at every check). */
  sliceWorkMs?: number;
}

export class HistoryReader {
  private running = false;
  private readonly waiting: Array<() => void> = [];
  private readonly maxWaiting: number;
  private readonly open: (path: string) => Database.Database;
  private readonly sliceWorkMs: number;

  constructor(
    private readonly source: HistorySource,
    options: HistoryReaderOptions = {},
  ) {
    this.maxWaiting = options.maxWaiting ?? MAX_WAITING_READS;
    this.open = options.open ?? openStoreReadOnly;
    this.sliceWorkMs = options.sliceWorkMs ?? SLICE_WORK_MS;
  }

  /** Requests waiting for the one being read. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Gives `sink` every sample of `read.loop` from `fromMs` to `untilMs`, stored or waiting for a
   * flush, in no particular order. Rejects with a RangeError for a span beyond
   * MAX_HISTORY_SPAN_MS, a HistoryBusyError when the queue is full, and the database's error
   * when the file opened but could not be read.
   */
  async read(read: HistoryRead, sink: (sample: Sample) => void): Promise<HistoryReadResult> {
    const { fromMs, untilMs } = read;
    if (!Number.isFinite(fromMs) || !Number.isFinite(untilMs) || fromMs > untilMs) {
      throw new RangeError(`history range ${fromMs}..${untilMs} is not a range`);
    }
    if (untilMs - fromMs > MAX_HISTORY_SPAN_MS) {
      throw new RangeError(`history range longer than ${MAX_HISTORY_SPAN_MS / 86_400_000} days`);
    }
    if (this.running) {
      if (this.waiting.length >= this.maxWaiting) throw new HistoryBusyError(this.waiting.length);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.running = true;
    try {
      return await this.readNow(read, sink);
    } finally {
      // The next one runs in the same turn: `running` stays true for it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running = false;
    }
  }

  private async readNow(read: HistoryRead, sink: (sample: Sample) => void): Promise<HistoryReadResult> {
    const file = this.source.file();
    if ('unavailable' in file) return this.pendingOnly(read, sink, file.unavailable);
    let db: Database.Database;
    try {
      db = this.open(file.path);
    } catch (error) {
      return this.pendingOnly(read, sink, error instanceof Error ? error.message : String(error));
    }
    try {
      // A read never waits on a lock for long: the wait would hold the event loop.
      db.pragma(`busy_timeout = ${STORE_BUSY_TIMEOUT_MS}`);
      return await this.scan(db, read, sink);
    } finally {
      db.close();
    }
  }

  /** Stored, then pending, samples to `sink`, inside one read transaction of `db`. */
  private async scan(
    db: Database.Database,
    read: HistoryRead,
    sink: (sample: Sample) => void,
  ): Promise<HistoryReadResult> {
    const { loop, fromMs, untilMs } = read;
    db.exec('BEGIN');
    // The first read fixes the snapshot; the pending samples are taken in the same turn. Two
    // queries: SQLite finds a lone min() or max() of the rowid in the b-tree, both at once by a scan.
    const rowid = (sql: string) => (db.prepare(sql).get() as { id: number | null }).id;
    const bounds = {
      low: rowid('SELECT min(id) AS id FROM samples'),
      high: rowid('SELECT max(id) AS id FROM samples'),
    };
    const pending = this.source.pendingSamples(loop).filter((s) => s.atMs >= fromMs && s.atMs <= untilMs);
    const pendingAt = new Set(pending.map((s) => s.atMs));
    const alsoStored = new Set<number>();
    const rows = db.prepare<[number, number, string, number, number], { data: Buffer }>(
      'SELECT data FROM samples WHERE id >= ? AND id < ? AND loop = ? AND until_ms >= ? AND at_ms <= ?',
    );
    let storedSamples = 0;
    let sliceStart = performance.now();
    let sinceCheck = 0;
    for (let low = bounds.low ?? 0; bounds.high !== null && low <= bounds.high; low += ROWIDS_PER_SLICE) {
      for (const row of rows.iterate(low, low + ROWIDS_PER_SLICE, loop, fromMs, untilMs)) {
        for (const sample of decodeSamples(row.data)) {
          if (sample.atMs < fromMs || sample.atMs > untilMs) continue;
          if (pendingAt.has(sample.atMs)) alsoStored.add(sample.atMs);
          sink(sample);
          storedSamples++;
        }
        if (++sinceCheck >= ROWS_PER_CHECK) {
          sinceCheck = 0;
          if (performance.now() - sliceStart >= this.sliceWorkMs) {
            await nextTurn();
            sliceStart = performance.now();
          }
        }
      }
      if (performance.now() - sliceStart >= this.sliceWorkMs) {
        await nextTurn();
        sliceStart = performance.now();
      }
    }
    db.exec('COMMIT');
    let pendingSamples = 0;
    for (const sample of pending) {
      if (alsoStored.has(sample.atMs)) continue;
      sink(sample);
      pendingSamples++;
    }
    return { storedSamples, pendingSamples };
  }

  private pendingOnly(read: HistoryRead, sink: (sample: Sample) => void, why: string): HistoryReadResult {
    let pendingSamples = 0;
    for (const sample of this.source.pendingSamples(read.loop)) {
      if (sample.atMs < read.fromMs || sample.atMs > read.untilMs) continue;
      sink(sample);
      pendingSamples++;
    }
    return { storedSamples: 0, pendingSamples, memoryOnly: why };
  }
}
