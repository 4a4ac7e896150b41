/**
 * The alert outbox's table (migration 9): one row per alert and channel, kept until the channel
 * took it, so an alert raised while the network or the server is down, or just before a kill,
 * is delivered later. Every call writes at once (alerts are rare, and the hourly cap bounds a
 * flapping sensor's); the database in use is asked for at each call, so a recovered file (the
 * supervisor moves a damaged one aside) is written from then on. Throws what SQLite throws: the
 * caller (alerts/outbox.ts) keeps what it could not write in memory and tries again.
 */
import type Database from 'better-sqlite3';

export interface OutboxRow {
  id: number;
  channel: string;
  /** The alert as JSON (alerts/notice.ts). */
  notice: string;
  createdAtMs: number;
  attempts: number;
  lastError: string | null;
  deliveredAtMs: number | null;
}

const ROW_COLUMNS =
  'id, channel, notice, created_at_ms AS createdAtMs, attempts, last_error AS lastError, delivered_at_ms AS deliveredAtMs';
const DROPPED_KEY = 'alertsDropped';

function statements(db: Database.Database) {
  return {
    insert: db.prepare<[string, string, number]>(
      'INSERT INTO alert_outbox (channel, notice, created_at_ms) VALUES (?, ?, ?)',
    ),
    delivered: db.prepare<[number, number, number]>(
      'UPDATE alert_outbox SET delivered_at_ms = ?, attempts = ?, last_error = NULL WHERE id = ?',
    ),
    failed: db.prepare<[number, string, number]>(
      'UPDATE alert_outbox SET attempts = ?, last_error = ? WHERE id = ?',
    ),
    remove: db.prepare<[number]>('DELETE FROM alert_outbox WHERE id = ?'),
    undelivered: db.prepare<[], OutboxRow>(
      `SELECT ${ROW_COLUMNS} FROM alert_outbox WHERE delivered_at_ms IS NULL ORDER BY id`,
    ),
    recent: db.prepare<[number], OutboxRow>(
      `SELECT ${ROW_COLUMNS} FROM alert_outbox ORDER BY id DESC LIMIT ?`,
    ),
    pruneDelivered: db.prepare<[number]>(
      `DELETE FROM alert_outbox WHERE delivered_at_ms IS NOT NULL AND id NOT IN
         (SELECT id FROM alert_outbox WHERE delivered_at_ms IS NOT NULL ORDER BY id DESC LIMIT ?)`,
    ),
    getDropped: db.prepare<[], { value: string }>(`SELECT value FROM meta WHERE key = '${DROPPED_KEY}'`),
    setDropped: db.prepare<[string]>(
      `INSERT INTO meta (key, value) VALUES ('${DROPPED_KEY}', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
    ),
  };
}

type Statements = ReturnType<typeof statements>;

/** The table, on whichever database is in use when called. */
export class AlertOutboxTable {
  readonly #prepared = new WeakMap<Database.Database, Statements>();

  constructor(private readonly database: () => Database.Database) {}

  #statements(): Statements {
    const db = this.database();
    let prepared = this.#prepared.get(db);
    if (!prepared) {
      prepared = statements(db);
      this.#prepared.set(db, prepared);
    }
    return prepared;
  }

  /** A new undelivered row; its id. */
  insert(channel: string, noticeJson: string, createdAtMs: number): number {
    return Number(this.#statements().insert.run(channel, noticeJson, createdAtMs).lastInsertRowid);
  }

  markDelivered(id: number, attempts: number, atMs: number): void {
    this.#statements().delivered.run(atMs, attempts, id);
  }

  markFailed(id: number, attempts: number, error: string): void {
    this.#statements().failed.run(attempts, error, id);
  }

  /** An undelivered row dropped (the outbox over its limit). */
  remove(id: number): void {
    this.#statements().remove.run(id);
  }

  /** Every undelivered row, oldest first. */
  undelivered(): OutboxRow[] {
    return this.#statements().undelivered.all();
  }

  /** The newest rows, delivered or not, newest first. */
  recent(limit: number): OutboxRow[] {
    return this.#statements().recent.all(limit);
  }

  /** Keeps the newest `keep` delivered rows (the recent alerts shown), deletes older ones. */
  pruneDelivered(keep: number): void {
    this.#statements().pruneDelivered.run(keep);
  }

  /** Alerts dropped per channel since the database was made (the outbox over its limit). */
  dropped(): Record<string, number> {
    const row = this.#statements().getDropped.get();
    if (!row) return {};
    try {
      const parsed: unknown = JSON.parse(row.value);
      return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, number>) : {};
    } catch {
      return {};
    }
  }

  addDropped(channel: string, count: number): void {
    const dropped = this.dropped();
    dropped[channel] = (dropped[channel] ?? 0) + count;
    this.#statements().setDropped.run(JSON.stringify(dropped));
  }
}
