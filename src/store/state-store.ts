import type Database from 'better-sqlite3';
import type { LoopStatus } from '../core/status.js';

/** One history sample: what a loop saw and did when it used a reading. */
export interface Sample {
  atMs: number;
  setpoint: number;
  measured: number | undefined;
  output: number;
  action: string;
}

/** A history event that may wait for the next batch (actuator switched, fault raised…). */
export interface BufferedEvent {
  atMs: number;
  loop?: string;
  kind: string;
  source?: string;
  message: string;
  data?: unknown;
}

/**
 * Controller memory, last status, history samples and routine events: written in batches,
 * one transaction per flush (`storage.memoryFlushS`), to spare SD cards. A crash loses at most
 * one flush period of these — by design: the desired state, which must never be lost, is
 * committed at once by DesiredStore. Single writer: the daemon.
 */
export class StateStore {
  private readonly pendingState = new Map<string, { memory: unknown; status: LoopStatus; atMs: number }>();
  private readonly pendingSamples: { loop: string; sample: Sample }[] = [];
  private readonly pendingEvents: BufferedEvent[] = [];
  private readonly statements;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      upsertState: db.prepare(
        `INSERT INTO loop_state (loop, memory_json, status_json, saved_at_ms) VALUES (?, ?, ?, ?)
         ON CONFLICT (loop) DO UPDATE SET memory_json = excluded.memory_json,
           status_json = excluded.status_json, saved_at_ms = excluded.saved_at_ms`,
      ),
      insertSample: db.prepare(
        `INSERT OR REPLACE INTO samples (loop, at_ms, setpoint, measured, output, action, resolution_s)
         VALUES (?, ?, ?, ?, ?, ?, 0)`,
      ),
      insertEvent: db.prepare(
        'INSERT INTO events (at_ms, loop, kind, source, message, data_json) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      loadState: db.prepare('SELECT memory_json, status_json, saved_at_ms FROM loop_state WHERE loop = ?'),
    };
  }

  /** Remembers the loop's latest memory and status; written at the next flush (latest wins). */
  saveState(loop: string, memory: unknown, status: LoopStatus, atMs: number): void {
    this.pendingState.set(loop, { memory, status, atMs });
  }

  addSample(loop: string, sample: Sample): void {
    this.pendingSamples.push({ loop, sample });
  }

  addEvent(event: BufferedEvent): void {
    this.pendingEvents.push(event);
  }

  /** Whether anything waits for a flush. */
  get dirty(): boolean {
    return this.pendingState.size + this.pendingSamples.length + this.pendingEvents.length > 0;
  }

  /** Writes everything pending in one transaction. Returns the number of rows written. */
  flush(): number {
    if (!this.dirty) return 0;
    const states = [...this.pendingState.entries()];
    const samples = this.pendingSamples.splice(0);
    const events = this.pendingEvents.splice(0);
    this.pendingState.clear();
    this.db
      .transaction(() => {
        for (const [loop, { memory, status, atMs }] of states) {
          this.statements.upsertState.run(loop, JSON.stringify(memory), JSON.stringify(status), atMs);
        }
        for (const { loop, sample } of samples) {
          this.statements.insertSample.run(
            loop,
            sample.atMs,
            sample.setpoint,
            sample.measured ?? null,
            sample.output,
            sample.action,
          );
        }
        for (const event of events) {
          this.statements.insertEvent.run(
            event.atMs,
            event.loop ?? null,
            event.kind,
            event.source ?? null,
            event.message,
            event.data === undefined ? null : JSON.stringify(event.data),
          );
        }
      })
      .immediate();
    return states.length + samples.length + events.length;
  }

  /** The stored memory and status of a loop (what the last flush wrote), if any. */
  load(loop: string): { memory: unknown; status: LoopStatus | undefined; savedAtMs: number } | undefined {
    const row = this.statements.loadState.get(loop) as
      | { memory_json: string | null; status_json: string | null; saved_at_ms: number }
      | undefined;
    if (!row) return undefined;
    return {
      memory: row.memory_json === null ? undefined : JSON.parse(row.memory_json),
      status: row.status_json === null ? undefined : (JSON.parse(row.status_json) as LoopStatus),
      savedAtMs: row.saved_at_ms,
    };
  }
}
