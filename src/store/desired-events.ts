import type Database from 'better-sqlite3';
import type { ChangeSource, StoredEvent } from './desired-records.js';

/**
 * The event log as the stores write and read it: one row per event, `data` as JSON text.
 * DesiredStore writes its events in the transaction of the change they describe; StateStore
 * writes the batched ones at a flush.
 */

/** `INSERT INTO events (at_ms, loop, kind, source, message, data_json) VALUES (?, ?, ?, ?, ?, ?)`. */
export type InsertEventStatement = Database.Statement<
  [number, string | null, string, string | null, string, string | null]
>;

/** An `events` row as stored. */
export interface EventRecord {
  at_ms: number;
  loop: string | null;
  kind: string;
  source: string | null;
  message: string;
  data_json: string | null;
}

/**
 * Where a store writes events: the insert statement, and for DesiredStore the events its current
 * operation wrote so far (as stored): they are announced on its EventFeed once the operation
 * committed, and dropped when it rolled back.
 */
export interface EventLog {
  insertEvent: InsertEventStatement;
  written?: StoredEvent[];
}

/** Writes one event; `data` must be JSON-serializable (absent: no data). */
export function writeEvent(log: EventLog, event: StoredEvent): void {
  const row = toEventRecord(event);
  log.insertEvent.run(row.at_ms, row.loop, row.kind, row.source, row.message, row.data_json);
  log.written?.push(toStoredEvent(row));
}

/**
 * `event` as the log holds it and `DesiredStore.events` returns it: no absent fields, `data`
 * through JSON (a copy the caller cannot change afterwards). Throws when `data` cannot be
 * serialized.
 */
export function asRecorded(event: StoredEvent): StoredEvent {
  return toStoredEvent(toEventRecord(event));
}

function toEventRecord(event: StoredEvent): EventRecord {
  const { atMs, loop, kind, source, message, data } = event;
  const dataJson = data === undefined ? null : JSON.stringify(data);
  return { at_ms: atMs, loop: loop ?? null, kind, source: source ?? null, message, data_json: dataJson };
}

/** What changed in a desired setpoint or mode, for its 'setpoint-changed'/'mode-changed' event. */
export interface DesiredChange {
  now: number;
  loop: string;
  /** A setpoint or a mode: the event says which. */
  from: number | string;
  to: number | string;
  source: ChangeSource;
  generation: number;
  requestId?: string;
}

/** Writes the 'setpoint-changed' or 'mode-changed' event of `change`. */
export function writeDesiredChangeEvent(
  log: EventLog,
  field: 'setpoint' | 'mode',
  change: DesiredChange,
): void {
  const { now, loop, from, to, source, generation, requestId } = change;
  writeEvent(log, {
    atMs: now,
    loop,
    kind: `${field}-changed`,
    source,
    message: `${field} ${from} → ${to} (${source})`,
    data: { from, to, generation, ...(requestId === undefined ? {} : { requestId }) },
  });
}

/** Which events `DesiredStore.events` returns (see there); times both included. */
export interface EventsFilter {
  sinceMs?: number;
  untilMs?: number;
  loop?: string;
  kind?: string;
  limit?: number;
}

/** The query for `filter`: the newest matching events first (the caller reverses them). */
export function eventsQuery(filter: EventsFilter): { sql: string; params: Array<string | number> } {
  const where: string[] = [];
  const params: Array<string | number> = [];
  const conditions: Array<[clause: string, value: string | number | undefined]> = [
    ['at_ms >= ?', filter.sinceMs],
    ['at_ms <= ?', filter.untilMs],
    ['loop = ?', filter.loop],
    ['kind = ?', filter.kind],
  ];
  for (const [clause, value] of conditions) {
    if (value === undefined) continue;
    where.push(clause);
    params.push(value);
  }
  // Insertion order (id), not at_ms: a wall clock set back must not reorder the log.
  let sql = `SELECT at_ms, loop, kind, source, message, data_json FROM events
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC`;
  if (filter.limit !== undefined) {
    sql += ' LIMIT ?';
    params.push(filter.limit);
  }
  return { sql, params };
}

export function toStoredEvent(row: EventRecord): StoredEvent {
  const event: StoredEvent = { atMs: row.at_ms, kind: row.kind, message: row.message };
  if (row.loop !== null) event.loop = row.loop;
  if (row.source !== null) event.source = row.source;
  if (row.data_json !== null) event.data = JSON.parse(row.data_json);
  return event;
}
