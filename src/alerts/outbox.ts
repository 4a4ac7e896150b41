/**
 * The alert outbox: per channel, the alerts it has not yet taken, oldest first, in memory and in
 * the database (store/alert-outbox.ts). Delivery works from memory, so a database that cannot
 * be written (full, damaged: itself an alert) never holds an alert back; the database makes
 * them survive a kill or a restart. Bounded: beyond `limit` undelivered alerts on a channel the
 * oldest is dropped and counted.
 */
import type { Logger } from 'pino';
import type { AlertOutboxTable, OutboxRow } from '../store/alert-outbox.js';
import type { AlertNotice } from './notice.js';

export interface QueuedAlert {
  /** Its row, once written (undefined: not yet: written again at the next chance). */
  rowId: number | undefined;
  channel: string;
  notice: AlertNotice;
  createdAtMs: number;
  attempts: number;
  lastError?: string;
}

/** One alert on one channel as the recent alerts show it (GET /api/alerts). */
export interface AlertDelivery {
  channel: string;
  notice: AlertNotice;
  createdAtMs: number;
  attempts: number;
  lastError: string | undefined;
  /** Undefined: not taken yet. */
  deliveredAtMs: number | undefined;
}

export interface RecentDeliveries {
  /** Newest first. */
  deliveries: AlertDelivery[];
  /** Why the database could not be read: then only the undelivered alerts in memory are listed. */
  unreadable?: string;
}

/** Delivered rows kept for the recent alerts shown. */
const DELIVERED_KEPT = 200;

export class AlertOutbox {
  readonly #queues = new Map<string, QueuedAlert[]>();
  readonly #droppedSinceStart = new Map<string, number>();
  #storageFailing = false;

  constructor(
    private readonly table: AlertOutboxTable,
    private readonly limit: number,
    private readonly logger: Logger,
  ) {}

  /**
   * What the database holds undelivered (after a restart); rows of channels no longer configured,
   * or unreadable, are dropped and counted. Returns how many were loaded.
   */
  load(channels: readonly string[]): number {
    const rows = this.#stored(() => this.table.undelivered()) ?? [];
    let loaded = 0;
    for (const row of rows) {
      const notice = parseNotice(row.notice);
      if (!notice || !channels.includes(row.channel)) {
        this.#stored(() => this.table.remove(row.id));
        this.#countDropped(row.channel, 1);
        continue;
      }
      this.#queue(row.channel).push({
        rowId: row.id,
        channel: row.channel,
        notice,
        createdAtMs: row.createdAtMs,
        attempts: row.attempts,
        ...(row.lastError === null ? {} : { lastError: row.lastError }),
      });
      loaded++;
    }
    return loaded;
  }

  add(channel: string, notice: AlertNotice, nowMs: number): void {
    const entry: QueuedAlert = { rowId: undefined, channel, notice, createdAtMs: nowMs, attempts: 0 };
    entry.rowId = this.#stored(() => this.table.insert(channel, JSON.stringify(notice), nowMs));
    const queue = this.#queue(channel);
    queue.push(entry);
    const over = queue.length - this.limit;
    if (over > 0) {
      for (const dropped of queue.splice(0, over)) {
        const rowId = dropped.rowId;
        if (rowId !== undefined) this.#stored(() => this.table.remove(rowId));
      }
      this.#countDropped(channel, over);
      this.logger.warn(`alert channel ${channel}: outbox full (${this.limit}), the oldest ${over} dropped`);
    }
  }

  /** The oldest alert `channel` has not taken. */
  head(channel: string): QueuedAlert | undefined {
    return this.#queues.get(channel)?.[0];
  }

  delivered(entry: QueuedAlert, nowMs: number): void {
    const queue = this.#queue(entry.channel);
    const index = queue.indexOf(entry);
    if (index >= 0) queue.splice(index, 1);
    const rowId = entry.rowId;
    if (rowId === undefined) return;
    this.#stored(() => {
      this.table.markDelivered(rowId, entry.attempts + 1, nowMs);
      this.table.pruneDelivered(DELIVERED_KEPT);
    });
  }

  failed(entry: QueuedAlert, error: string): void {
    entry.attempts += 1;
    entry.lastError = error;
    const rowId = entry.rowId;
    if (rowId !== undefined) this.#stored(() => this.table.markFailed(rowId, entry.attempts, error));
  }

  /** Writes the alerts the database refused before (called before each delivery). */
  persistPending(): void {
    for (const queue of this.#queues.values()) {
      for (const entry of queue) {
        if (entry.rowId !== undefined) continue;
        const rowId = this.#stored(() =>
          this.table.insert(entry.channel, JSON.stringify(entry.notice), entry.createdAtMs),
        );
        if (rowId === undefined) return;
        entry.rowId = rowId;
      }
    }
  }

  /** Undelivered alerts per channel (channels with none left out). */
  backlog(): Record<string, number> {
    return Object.fromEntries(
      [...this.#queues].filter(([, queue]) => queue.length > 0).map(([c, q]) => [c, q.length]),
    );
  }

  /** Alerts dropped per channel since this process started. */
  droppedSinceStart(): Record<string, number> {
    return Object.fromEntries(this.#droppedSinceStart);
  }

  /**
   * The newest `limit` deliveries, taken or not, newest first: the database's rows, where memory
   * holds the alert still undelivered its attempts and error (fresher when a write failed), and
   * the undelivered alerts the database refused or lost (a stand-in after a damaged file).
   */
  recent(limit: number): RecentDeliveries {
    const waiting = new Map<string, QueuedAlert>();
    for (const queue of this.#queues.values()) {
      for (const entry of queue) waiting.set(deliveryKey(entry.channel, entry.notice), entry);
    }
    let rows: OutboxRow[] = [];
    let unreadable: string | undefined;
    try {
      rows = this.table.recent(limit);
    } catch (error) {
      unreadable = error instanceof Error ? error.message : String(error);
    }
    const found = new Map<string, AlertDelivery>();
    for (const row of rows) {
      const notice = parseNotice(row.notice);
      if (!notice) continue;
      const key = deliveryKey(row.channel, notice);
      const entry = waiting.get(key);
      found.set(key, entry ? queuedDelivery(entry) : storedDelivery(row, notice));
    }
    for (const [key, entry] of waiting) if (!found.has(key)) found.set(key, queuedDelivery(entry));
    // Stable: rows told at the same ms keep the database's order (newest first).
    const deliveries = [...found.values()].sort((a, b) => b.createdAtMs - a.createdAtMs).slice(0, limit);
    return unreadable === undefined ? { deliveries } : { deliveries, unreadable };
  }

  #queue(channel: string): QueuedAlert[] {
    let queue = this.#queues.get(channel);
    if (!queue) {
      queue = [];
      this.#queues.set(channel, queue);
    }
    return queue;
  }

  #countDropped(channel: string, count: number): void {
    this.#droppedSinceStart.set(channel, (this.#droppedSinceStart.get(channel) ?? 0) + count);
    this.#stored(() => this.table.addDropped(channel, count));
  }

  /** A database call that must not stop alerting: undefined when it failed (logged once per streak). */
  #stored<T>(write: () => T): T | undefined {
    try {
      const result = write();
      if (this.#storageFailing) this.logger.info('alert outbox: the database takes alerts again');
      this.#storageFailing = false;
      return result;
    } catch (error) {
      if (!this.#storageFailing) {
        this.logger.warn(
          { err: error },
          'alert outbox: the database refused a write; alerts are kept in memory',
        );
      }
      this.#storageFailing = true;
      return undefined;
    }
  }
}

/** An alert on a channel, the same in memory and in the database (a notice's id is unique). */
const deliveryKey = (channel: string, notice: AlertNotice) => `${channel}\u0000${notice.id}`;

const queuedDelivery = (entry: QueuedAlert): AlertDelivery => ({
  channel: entry.channel,
  notice: entry.notice,
  createdAtMs: entry.createdAtMs,
  attempts: entry.attempts,
  lastError: entry.lastError,
  deliveredAtMs: undefined,
});

const storedDelivery = (row: OutboxRow, notice: AlertNotice): AlertDelivery => ({
  channel: row.channel,
  notice,
  createdAtMs: row.createdAtMs,
  attempts: row.attempts,
  lastError: row.lastError ?? undefined,
  deliveredAtMs: row.deliveredAtMs ?? undefined,
});

/** A stored notice, or undefined when the row is not one (a damaged or foreign row). */
function parseNotice(json: string): AlertNotice | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null) return undefined;
    const notice = value as Partial<AlertNotice>;
    const valid =
      typeof notice.id === 'string' &&
      typeof notice.title === 'string' &&
      typeof notice.message === 'string' &&
      typeof notice.atMs === 'number';
    return valid ? (notice as AlertNotice) : undefined;
  } catch {
    return undefined;
  }
}
