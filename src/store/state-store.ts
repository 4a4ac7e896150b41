import type Database from 'better-sqlite3';
import type { LoopStatus } from '../core/status.js';
import { asRecorded, writeEvent } from './desired-events.js';
import type { StoredEvent } from './desired-records.js';
import { durably } from './durability.js';
import type { EventFeed } from './event-feed.js';
import { decodeStateRow, encodeLoopState, type StateRow } from './loop-state-codec.js';
import { observed, type StoreObserver } from './observer.js';
import type { RecordedPoint } from './recorded-codec.js';
import {
  prepareInsertRecorded,
  type RecordedSeriesPoints,
  RecordedWrites,
  writeRecorded,
} from './recorded-store.js';
import { decodeSamples, encodeSamples, type Sample } from './samples-codec.js';
import { type Batch, type BufferedEvent, PendingWrites } from './state-batch.js';

/**
 * Controller memory, last status, history samples and routine events: written in batches, one
 * transaction per flush (the daemon calls `flush()` every `storage.memoryFlushS`), to spare SD
 * cards. A crash loses at most one flush period of these — by design: the desired state, which
 * must never be lost, is committed at once by DesiredStore. Single writer: the daemon.
 *
 * What a write costs: SQLite writes whole pages, so a commit costs (page size + 24 bytes) in the
 * WAL for every b-tree page it touches, however few bytes changed, and about as much again when
 * the page is checkpointed (test/bench/storage.ts measures it). Hence the layout:
 * - samples: one row per loop per flush holding that flush's readings packed (encodeSamples,
 *   ~5 bytes a reading), appended to a rowid table without a secondary index: a flush touches
 *   the table's last page. History queries scan the table (a few MB after a year).
 * - memory and status: one deflated blob per loop (encodeLoopState, ~250 bytes: one page
 *   where the JSON text would spill over five).
 * Writing a loop's state only when it changed beyond noise was measured too: at the default
 * flush interval it saves under 4 % and loses the "one flush period at most" guarantee, so
 * every flush writes the latest state of every loop that saved one.
 *
 * The pieces: what waits for a flush in state-batch.ts, the blob in loop-state-codec.ts, the
 * packed readings in samples-codec.ts (on byte-codec.ts).
 */

// Importers keep this module's path for the codecs and the batch's event type.
export { encodeLoopState, STATE_DICTIONARY_1 } from './loop-state-codec.js';
export { decodeSamples, encodeSamples, type Sample } from './samples-codec.js';

/** A sample as stored: `resolutionS` 0 for a reading, else the length of the bucket it averages. */
export interface StoredSample extends Sample {
  resolutionS: number;
}

/**
 * Readings packed into one samples row at most: ~150 bytes, so three rows share a 512-byte page
 * (a row a byte too big for the page's free space would take a page of its own).
 */
const MAX_SAMPLES_PER_ROW = 32;

/** Options of a StateStore run by the daemon. */
export interface StateStoreOptions {
  /** Told of every event added (`addEvent`), at once: it waits for a flush but happened now. */
  feed?: EventFeed;
}

interface SamplesRow {
  resolution_s: number;
  data: Buffer;
}

export class StateStore {
  private readonly pending = new PendingWrites();
  /** Values of the sensors loops record (loops.<id>.record), flushed with the rest. */
  private readonly recorded = new RecordedWrites();
  private statements;

  /** `observer`: told of every operation's outcome (the store supervisor). */
  constructor(
    private db: Database.Database,
    private readonly observer?: StoreObserver,
    private readonly options: StateStoreOptions = {},
  ) {
    this.statements = StateStore.prepare(db);
  }

  /**
   * Moves the store to another (migrated) database: a recovered or reopened file. What waits
   * for a flush stays pending and goes to the new file.
   */
  useDatabase(db: Database.Database): void {
    this.statements = StateStore.prepare(db);
    this.db = db;
  }

  private static prepare(db: Database.Database) {
    return {
      upsertState: db.prepare<[string, Buffer, number]>(
        `INSERT INTO loop_state (loop, state, saved_at_ms) VALUES (?, ?, ?)
         ON CONFLICT (loop) DO UPDATE SET state = excluded.state, saved_at_ms = excluded.saved_at_ms,
           memory_json = NULL, status_json = NULL`,
      ),
      insertSamples: db.prepare<[string, number, number, number, Buffer]>(
        'INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?)',
      ),
      insertEvent: db.prepare<[number, string | null, string, string | null, string, string | null]>(
        'INSERT INTO events (at_ms, loop, kind, source, message, data_json) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      loadState: db.prepare<[string], StateRow>(
        'SELECT state, memory_json, status_json, saved_at_ms FROM loop_state WHERE loop = ?',
      ),
      history: db.prepare<[string, number], SamplesRow>(
        'SELECT resolution_s, data FROM samples WHERE loop = ? AND until_ms >= ? ORDER BY at_ms, id',
      ),
      insertRecorded: prepareInsertRecorded(db),
      historyBetween: db.prepare<[string, number, number], SamplesRow>(
        'SELECT resolution_s, data FROM samples WHERE loop = ? AND until_ms >= ? AND at_ms <= ? ORDER BY at_ms, id',
      ),
    };
  }

  /** Remembers the loop's latest memory and status; written at the next flush (latest wins). */
  saveState(loop: string, memory: unknown, status: LoopStatus, atMs: number): void {
    this.pending.saveState(loop, { memory, status, atMs });
  }

  addSample(loop: string, sample: Sample): void {
    this.pending.addSample(loop, sample);
  }

  /** A value of a sensor `loop` records (not regulates on); written at the next flush. */
  addRecorded(loop: string, sensor: string, point: RecordedPoint): void {
    this.recorded.add(loop, sensor, point);
  }

  /** A loop's recorded values that wait for a flush, per sensor (copies). */
  pendingRecorded(loop: string): RecordedSeriesPoints[] {
    return this.recorded.pendingOf(loop);
  }

  /**
   * Queues `event` for the next flush, as it is now (its data copied: the caller changing it
   * afterwards changes neither the log nor what was told), and announces it on the feed now.
   * Never throws.
   */
  addEvent(event: BufferedEvent): void {
    let recorded: BufferedEvent | undefined;
    try {
      recorded = asRecorded(event);
    } catch {
      // Data that cannot be serialized: queued as given, the flush will say so; the caller (a
      // control cycle, a command) must not fail here, and there is nothing to tell.
    }
    this.pending.addEvent(recorded ?? event);
    // Listeners' errors are the feed's own (it catches them).
    if (recorded) this.options.feed?.announce(recorded);
  }

  /** Whether anything waits for a flush. */
  get dirty(): boolean {
    return this.pending.dirty || this.recorded.dirty;
  }

  /**
   * Encodes (deflates) up to `maxLoops` pending loop states ahead of the flush; true when all
   * are. Lets the daemon spread that work over turns of the event loop: 200 loops' states take
   * 20–120 ms to encode on a fast x64, several times that on a Pi, in one stall otherwise.
   */
  encodeSome(maxLoops: number): boolean {
    return this.pending.encodeSome(maxLoops, ({ memory, status }) => encodeLoopState(memory, status));
  }

  /**
   * Writes everything pending in one transaction. Returns the number of rows written. When the
   * write fails (full disk…), what it held stays pending for the next flush, and the error is
   * thrown. States encodeSome encoded are written as encoded; the others are encoded here.
   */
  flush(opts: { durable?: boolean } = {}): number {
    if (!this.dirty) return 0;
    const batch = this.pending.take();
    const recorded = this.recorded.take();
    let rows = 0;
    const write = () => {
      rows = this.writeBatch(batch) + writeRecorded(this.statements.insertRecorded, recorded);
    };
    try {
      // Durable (fsynced before it returns) for the rare flush a latched fault or an autotune's
      // end asks for: a power cut must not bring back a heater a thermal latch switched off.
      observed(this.observer, 'flush', () =>
        opts.durable ? durably(this.db, write) : this.db.transaction(write).immediate(),
      );
    } catch (error) {
      this.pending.requeue(batch);
      this.recorded.requeue(recorded);
      throw error;
    }
    return rows;
  }

  /** The stored memory and status of a loop (what the last flush wrote), if any. */
  load(loop: string): { memory: unknown; status: LoopStatus | undefined; savedAtMs: number } | undefined {
    const row = observed(this.observer, 'load', () => this.statements.loadState.get(loop));
    if (!row) return undefined;
    const { memory, status } = decodeStateRow(row);
    return { memory, status, savedAtMs: row.saved_at_ms };
  }

  /**
   * A loop's stored history at or after `sinceMs`, oldest first: readings, and bucket averages
   * (`resolutionS` > 0) where pruneHistory downsampled. Only what flushes wrote.
   */
  history(loop: string, sinceMs: number): StoredSample[] {
    const out: StoredSample[] = [];
    for (const row of observed(this.observer, 'history', () => this.statements.history.all(loop, sinceMs))) {
      for (const sample of decodeSamples(row.data)) {
        if (sample.atMs >= sinceMs) out.push({ ...sample, resolutionS: row.resolution_s });
      }
    }
    // Rows come in time order; a clock set back can interleave their samples.
    return out.sort((a, b) => a.atMs - b.atMs);
  }

  /**
   * A loop's history from `sinceMs` to `untilMs` (both included; default: no end), oldest first,
   * including the readings that wait for a flush (`resolutionS` 0), so a chart of the last hour
   * does not miss the last storage.memoryFlushS. A pending reading at the same time as a stored
   * sample is that sample (a flush retried after it wrote): it is left out. Throws when the
   * stored part cannot be read (the caller answers that).
   */
  recentHistory(loop: string, sinceMs: number, untilMs = Number.POSITIVE_INFINITY): StoredSample[] {
    const rows = observed(this.observer, 'history', () =>
      this.statements.historyBetween.all(loop, sinceMs, Math.min(untilMs, Number.MAX_SAFE_INTEGER)),
    );
    const stored: StoredSample[] = [];
    for (const row of rows) {
      for (const sample of decodeSamples(row.data)) {
        if (sample.atMs >= sinceMs && sample.atMs <= untilMs)
          stored.push({ ...sample, resolutionS: row.resolution_s });
      }
    }
    const storedAt = new Set(stored.map((sample) => sample.atMs));
    const pending = this.pending
      .pendingSamples(loop)
      .filter(({ atMs }) => atMs >= sinceMs && atMs <= untilMs && !storedAt.has(atMs))
      .map((sample) => ({ ...sample, resolutionS: 0 }));
    // Stable: at equal times stored samples stay ahead. A clock set back can interleave them.
    return [...stored, ...pending].sort((a, b) => a.atMs - b.atMs);
  }

  /** A loop's readings that wait for a flush, oldest first (a copy): for history reads of their own. */
  pendingSamples(loop: string): readonly Sample[] {
    return this.pending.pendingSamples(loop);
  }

  /**
   * The routine events (actuator switches, faults raised and cleared) that wait for a flush,
   * oldest first: `DesiredStore.events()` has only what was written.
   */
  pendingEvents(): readonly StoredEvent[] {
    return this.pending.pendingEventList();
  }

  /** The rows of one flush, inside its transaction: states, then samples, then events. */
  private writeBatch({ states, samples, events }: Batch): number {
    let rows = 0;
    for (const [loop, { memory, status, atMs, encoded }] of states) {
      this.statements.upsertState.run(loop, encoded ?? encodeLoopState(memory, status), atMs);
      rows++;
    }
    for (const [loop, loopSamples] of samples) {
      for (let i = 0; i < loopSamples.length; i += MAX_SAMPLES_PER_ROW) {
        const row = loopSamples.slice(i, i + MAX_SAMPLES_PER_ROW);
        insertSamples(this.statements.insertSamples, loop, row, 0);
        rows++;
      }
    }
    for (const event of events) {
      writeEvent(this.statements, event);
      rows++;
    }
    return rows;
  }
}

/** Writes one samples row (the caller keeps `samples` to a row's worth). */
export function insertSamples(
  statement: Database.Statement<[string, number, number, number, Buffer]>,
  loop: string,
  samples: readonly Sample[],
  resolutionS: number,
): void {
  if (samples.length === 0) return;
  let fromMs = Infinity;
  let untilMs = -Infinity;
  for (const { atMs } of samples) {
    fromMs = Math.min(fromMs, atMs);
    untilMs = Math.max(untilMs, atMs);
  }
  statement.run(loop, fromMs, untilMs, resolutionS, encodeSamples(samples));
}
