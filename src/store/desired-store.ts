import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { StoredFaultReset } from '../core/fault-reset.js';
import type { Mode } from '../core/types.js';
import { refusedChange } from './health.js';
import { observed, type StoreObserver } from './observer.js';

/**
 * Versioned desired state: what each loop is asked to do (setpoint, mode), where that came from,
 * and the generation at which it last changed.
 *
 * Generations are one monotonic counter for the node (meta 'lastGeneration'), shared by applied
 * configs and runtime changes, so every change of desired state has a unique, increasing number;
 * a loop's `generation` is the number of the last change that concerned it, and its status
 * reports the generation it has acted on (`observedGeneration`).
 *
 * Precedence between the file and runtime changes (MQTT, CLI, Home Assistant): the newer intent
 * wins, per field. Re-applying a file overrides a runtime setpoint only if the file itself changed
 * that setpoint since it was last applied; otherwise the runtime value stays in force, across
 * restarts (the failure "restored setpoint overridden by the file" of other thermostats).
 *
 * Every change is committed before the method returns: these writes are rare and critical.
 *
 * The live desired state is also kept in memory, updated only after a commit: `desired()` and
 * `allDesired()` answer from it and never touch SQLite, so the control path (every loop cycle
 * reads its desired state) neither blocks on nor fails with the database. The file is written
 * through, and read only when the store is opened or moved to another file (`useDatabase`).
 */

/** Who asked for a change of desired state. */
export type ChangeSource = 'file' | 'mqtt' | 'cli' | 'homeassistant';

/** A loop's current desired state. */
export interface LoopDesiredRow {
  loop: string;
  /** In the unit of the loop's sensor (°C, %RH). */
  setpoint: number;
  setpointSource: ChangeSource;
  mode: Mode;
  modeSource: ChangeSource;
  /** The generation of the last change to this loop's desired state or config section. */
  generation: number;
  /** When that change was stored, ms since epoch. */
  updatedAtMs: number;
  /**
   * The last fault reset asked for (absent: never): the clock time it was received and the
   * generation it got. The loop applies it once, to a fault latched at or before that time
   * (core/fault-reset.ts).
   */
  faultReset?: StoredFaultReset;
}

/** One line of the event log; `data` is any JSON value. */
export interface StoredEvent {
  atMs: number;
  loop?: string;
  kind: string;
  source?: string;
  message: string;
  data?: unknown;
}

/** What applyConfig did. */
export interface ApplyConfigResult {
  /** The generation of the applied config (unchanged when the text was already the latest). */
  generation: number;
  /** False when the text had the same hash as the latest applied config: nothing was written. */
  changed: boolean;
  /** Loops new to the store (or re-added after a removal): they start from the file's values. */
  addedLoops: string[];
  /** Loops whose desired setpoint/mode or config section changed: they got `generation`. */
  changedLoops: string[];
  /** Loops no longer in the file: the daemon runs their finalizer, then markRemovalFinalized. */
  removedLoops: string[];
}

/** The file's view of one loop, as applyConfig takes it. */
export interface ConfigLoop {
  setpoint: number;
  mode: Mode;
  /** Hash of the loop's config section (e.g. sha256 of its canonical JSON). */
  sectionHash: string;
}

/** Hex SHA-256 of a UTF-8 text. */
export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A `loop_desired` row as stored (also read directly by tests that inspect the file). */
export interface DesiredRecord {
  loop: string;
  setpoint: number;
  setpoint_source: string;
  file_setpoint: number;
  mode: string;
  mode_source: string;
  file_mode: string;
  section_hash: string;
  generation: number;
  updated_at_ms: number;
  removed_at_ms: number | null;
  /** Schema version 4; NULL when never reset. */
  fault_reset_at_ms: number | null;
  fault_reset_generation: number | null;
}

interface EventRecord {
  at_ms: number;
  loop: string | null;
  kind: string;
  source: string | null;
  message: string;
  data_json: string | null;
}

/** The statements DesiredStore runs, prepared once (the tables exist once the db is migrated). */
function prepareStatements(db: Database.Database) {
  return {
    getGeneration: db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'lastGeneration'"),
    setGeneration: db.prepare<[string]>(
      "INSERT INTO meta (key, value) VALUES ('lastGeneration', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ),
    latestConfig: db.prepare<[], { generation: number; hash: string; text: string; applied_at_ms: number }>(
      'SELECT generation, hash, text, applied_at_ms FROM configs ORDER BY generation DESC LIMIT 1',
    ),
    insertConfig: db.prepare<[number, string, string, number]>(
      'INSERT INTO configs (generation, hash, text, applied_at_ms) VALUES (?, ?, ?, ?)',
    ),
    anyRow: db.prepare<[string], DesiredRecord>('SELECT * FROM loop_desired WHERE loop = ?'),
    liveRows: db.prepare<[], DesiredRecord>(
      'SELECT * FROM loop_desired WHERE removed_at_ms IS NULL ORDER BY loop',
    ),
    upsert: db.prepare<[DesiredRecord]>(
      `INSERT OR REPLACE INTO loop_desired (loop, setpoint, setpoint_source, file_setpoint, mode, mode_source,
         file_mode, section_hash, generation, updated_at_ms, removed_at_ms, fault_reset_at_ms, fault_reset_generation)
       VALUES (@loop, @setpoint, @setpoint_source, @file_setpoint, @mode, @mode_source,
         @file_mode, @section_hash, @generation, @updated_at_ms, @removed_at_ms, @fault_reset_at_ms, @fault_reset_generation)`,
    ),
    markRemoved: db.prepare<[number, string]>('UPDATE loop_desired SET removed_at_ms = ? WHERE loop = ?'),
    deleteRemoved: db.prepare<[string]>(
      'DELETE FROM loop_desired WHERE loop = ? AND removed_at_ms IS NOT NULL',
    ),
    deleteLoopState: db.prepare<[string]>('DELETE FROM loop_state WHERE loop = ?'),
    pending: db.prepare<[], { loop: string }>(
      'SELECT loop FROM loop_desired WHERE removed_at_ms IS NOT NULL ORDER BY loop',
    ),
    insertEvent: db.prepare<[number, string | null, string, string | null, string, string | null]>(
      'INSERT INTO events (at_ms, loop, kind, source, message, data_json) VALUES (?, ?, ?, ?, ?, ?)',
    ),
  };
}

/** Options of a DesiredStore run by the daemon. */
export interface DesiredStoreOptions {
  /** Told of every operation's outcome (health, recovery of a damaged file). */
  observer?: StoreObserver;
  /**
   * An event `recordEvent` could not write at once (disk full, locked): handed here to be
   * written later (the batched state store retries it at every flush) instead of throwing.
   * Without it, recordEvent throws like every other write.
   */
  deferEvent?: (event: StoredEvent) => void;
}

export class DesiredStore {
  private stmt: ReturnType<typeof prepareStatements>;
  /** Live loops' desired state as last committed, by loop (see the module comment). */
  private readonly live = new Map<string, LoopDesiredRow>();

  /** `db` must be migrated (openStore does it); `nowMs` stamps every row. */
  constructor(
    private db: Database.Database,
    private readonly nowMs: () => number,
    private readonly options: DesiredStoreOptions = {},
  ) {
    this.stmt = prepareStatements(db);
    this.reloadLive(this.stmt.liveRows.all());
  }

  /**
   * Moves the store to another (migrated) database: a recovered or reopened file. The desired
   * state in memory becomes that file's; carry what must survive over first (`restoreDesired`
   * on a DesiredStore of the new file).
   */
  useDatabase(db: Database.Database): void {
    const stmt = prepareStatements(db);
    const rows = stmt.liveRows.all();
    this.db = db;
    this.stmt = stmt;
    this.reloadLive(rows);
  }

  /**
   * Applies a validated config text (see the module comment for precedence). The same content
   * hash as the latest applied config changes nothing; otherwise the config gets the next
   * generation, and so does each loop whose desired setpoint/mode or section actually changed.
   * One transaction, committed before returning.
   */
  applyConfig(input: { text: string; loops: Record<string, ConfigLoop> }): ApplyConfigResult {
    const hash = sha256(input.text);
    let liveAfter: DesiredRecord[] | undefined;
    const applied = this.observe('applyConfig', () =>
      this.db
        .transaction((): ApplyConfigResult => {
          const latest = this.stmt.latestConfig.get();
          if (latest?.hash === hash) {
            return {
              generation: latest.generation,
              changed: false,
              addedLoops: [],
              changedLoops: [],
              removedLoops: [],
            };
          }
          const now = this.nowMs();
          const generation = this.nextGeneration();
          this.stmt.insertConfig.run(generation, hash, input.text, now);
          const result: ApplyConfigResult = {
            generation,
            changed: true,
            addedLoops: [],
            changedLoops: [],
            removedLoops: [],
          };

          for (const [loop, file] of Object.entries(input.loops)) {
            assertFiniteSetpoint(loop, file.setpoint);
            const row = this.stmt.anyRow.get(loop);
            // A loop removed earlier but not yet finalized counts as new: it starts from the file,
            // not from runtime changes made before it was removed.
            if (row === undefined || row.removed_at_ms !== null) {
              this.stmt.upsert.run({
                loop,
                setpoint: file.setpoint,
                setpoint_source: 'file',
                file_setpoint: file.setpoint,
                mode: file.mode,
                mode_source: 'file',
                file_mode: file.mode,
                section_hash: file.sectionHash,
                generation,
                updated_at_ms: now,
                removed_at_ms: null,
                // A loop (re-)added starts without a reset: a latch of its earlier life is gone.
                fault_reset_at_ms: null,
                fault_reset_generation: null,
              });
              result.addedLoops.push(loop);
              this.event(now, loop, 'loop-added', 'file', `loop ${loop} added (generation ${generation})`, {
                generation,
                setpoint: file.setpoint,
                mode: file.mode,
              });
              continue;
            }

            const next: DesiredRecord = {
              ...row,
              file_setpoint: file.setpoint,
              file_mode: file.mode,
              section_hash: file.sectionHash,
            };
            // Newer intent wins: the file's value takes over only when the file changed that field.
            if (file.setpoint !== row.file_setpoint) {
              next.setpoint = file.setpoint;
              next.setpoint_source = 'file';
            }
            if (file.mode !== row.file_mode) {
              next.mode = file.mode;
              next.mode_source = 'file';
            }
            const setpointChanged = next.setpoint !== row.setpoint;
            const modeChanged = next.mode !== row.mode;
            const sectionChanged = next.section_hash !== row.section_hash;
            if (setpointChanged || modeChanged || sectionChanged) {
              next.generation = generation;
              next.updated_at_ms = now;
              result.changedLoops.push(loop);
            }
            this.stmt.upsert.run(next);

            if (setpointChanged)
              this.setpointEvent(now, loop, row.setpoint, next.setpoint, 'file', generation);
            if (modeChanged) this.modeEvent(now, loop, row.mode, next.mode, 'file', generation);
            if (sectionChanged && !setpointChanged && !modeChanged) {
              this.event(now, loop, 'loop-config-changed', 'file', `loop ${loop} configuration changed`, {
                generation,
              });
            }
          }

          for (const row of this.stmt.liveRows.all()) {
            if (Object.hasOwn(input.loops, row.loop)) continue;
            this.stmt.markRemoved.run(now, row.loop);
            result.removedLoops.push(row.loop);
            this.event(now, row.loop, 'loop-removed', 'file', `loop ${row.loop} removed from the config`, {
              generation,
            });
          }

          this.event(now, undefined, 'config-applied', 'file', `config generation ${generation} applied`, {
            generation,
            hash,
            addedLoops: result.addedLoops,
            changedLoops: result.changedLoops,
            removedLoops: result.removedLoops,
          });
          liveAfter = this.stmt.liveRows.all();
          return result;
        })
        .immediate(),
    );
    if (liveAfter) this.reloadLive(liveAfter);
    return applied;
  }

  /**
   * A runtime change of setpoint and/or mode (already validated by the caller). Asking for the
   * current values is a no-op (QoS 1 redelivery): `{ changed: false, generation: <the loop's> }`.
   * Otherwise the change gets the next generation and is committed before returning.
   * Throws for an unknown or removed loop.
   */
  setDesired(
    loop: string,
    change: { setpoint?: number; mode?: Mode },
    source: ChangeSource,
    requestId?: string,
  ): { changed: boolean; generation: number } {
    if (change.setpoint !== undefined) assertFiniteSetpoint(loop, change.setpoint);
    let committed: DesiredRecord | undefined;
    let outcome: { changed: boolean; generation: number };
    try {
      outcome = this.observe('setDesired', () =>
        this.db
          .transaction(() => {
            const row = this.stmt.anyRow.get(loop);
            if (row === undefined) throw new Error(`unknown loop "${loop}"`);
            if (row.removed_at_ms !== null) throw new Error(`loop "${loop}" was removed from the config`);
            const setpointChanged = change.setpoint !== undefined && change.setpoint !== row.setpoint;
            const modeChanged = change.mode !== undefined && change.mode !== row.mode;
            if (!setpointChanged && !modeChanged) return { changed: false, generation: row.generation };

            const now = this.nowMs();
            const generation = this.nextGeneration();
            const next: DesiredRecord = { ...row, generation, updated_at_ms: now };
            if (setpointChanged && change.setpoint !== undefined) {
              next.setpoint = change.setpoint;
              next.setpoint_source = source;
              this.setpointEvent(now, loop, row.setpoint, change.setpoint, source, generation, requestId);
            }
            if (modeChanged && change.mode !== undefined) {
              next.mode = change.mode;
              next.mode_source = source;
              this.modeEvent(now, loop, row.mode, change.mode, source, generation, requestId);
            }
            this.stmt.upsert.run(next);
            committed = next;
            return { changed: true, generation };
          })
          .immediate(),
      );
    } catch (error) {
      throw refusedChange(error, this.db.name);
    }
    if (committed) this.live.set(loop, toDesiredRow(committed));
    return outcome;
  }

  /**
   * A person's fault reset (MQTT fault/reset, the Home Assistant button), stored as desired
   * state: the clock time it was received (`requestedAtMs`) with the next generation, and a
   * 'fault-reset' event, in one transaction committed before returning, so a crash right after
   * cannot bring the latch back while the event log says it was reset. The loop applies it once
   * (core/fault-reset.ts). Whether anything is latched is the caller's to check (the daemon).
   * Throws for an unknown or removed loop, and when the database refuses the write.
   */
  resetFault(
    loop: string,
    reset: { requestedAtMs: number; source: string; requestId?: string; fault?: string },
  ): { generation: number } {
    const { requestedAtMs, source, requestId, fault } = reset;
    if (!Number.isFinite(requestedAtMs))
      throw new Error(`loop "${loop}": fault reset time must be a finite number, got ${requestedAtMs}`);
    let committed: DesiredRecord | undefined;
    let generation: number;
    try {
      generation = this.observe('resetFault', () =>
        this.db
          .transaction(() => {
            const row = this.stmt.anyRow.get(loop);
            if (row === undefined) throw new Error(`unknown loop "${loop}"`);
            if (row.removed_at_ms !== null) throw new Error(`loop "${loop}" was removed from the config`);
            const now = this.nowMs();
            const next = this.nextGeneration();
            committed = {
              ...row,
              generation: next,
              updated_at_ms: now,
              fault_reset_at_ms: requestedAtMs,
              fault_reset_generation: next,
            };
            this.stmt.upsert.run(committed);
            const what = fault === undefined ? 'latched fault' : `latched fault ${fault}`;
            this.event(now, loop, 'fault-reset', source, `${what} reset (${source})`, {
              generation: next,
              requestedAtMs,
              ...(fault === undefined ? {} : { fault }),
              ...(requestId === undefined ? {} : { requestId }),
            });
            return next;
          })
          .immediate(),
      );
    } catch (error) {
      throw refusedChange(error, this.db.name);
    }
    if (committed) this.live.set(loop, toDesiredRow(committed));
    return { generation };
  }

  /**
   * Writes the runtime changes kept in memory into this store's file (a fresh one after a
   * damaged file was moved aside, or the real file opened after running on a stand-in). Apply
   * the config first: values from the file come from there. A setpoint or mode whose source is
   * not the file (MQTT, CLI, Home Assistant) and differs from the stored one is taken over with
   * its source, a new generation and a 'desired-restored' event. One transaction. Loops the file
   * does not know are skipped. Returns the loops it changed.
   */
  restoreDesired(rows: readonly LoopDesiredRow[]): string[] {
    const restored: string[] = [];
    let liveAfter: DesiredRecord[] | undefined;
    this.observe('restoreDesired', () =>
      this.db
        .transaction(() => {
          for (const want of rows) {
            const row = this.stmt.anyRow.get(want.loop);
            if (row === undefined || row.removed_at_ms !== null) continue;
            const next: DesiredRecord = { ...row };
            if (want.setpointSource !== 'file' && want.setpoint !== row.setpoint) {
              next.setpoint = want.setpoint;
              next.setpoint_source = want.setpointSource;
            }
            if (want.modeSource !== 'file' && want.mode !== row.mode) {
              next.mode = want.mode;
              next.mode_source = want.modeSource;
            }
            // The reset in memory is the latest. It keeps its generation: a loop's memory names
            // the reset it applied by it, so no loop applies it twice.
            const resetChanged = want.faultReset !== undefined && !sameReset(want.faultReset, row);
            if (resetChanged && want.faultReset) {
              next.fault_reset_at_ms = want.faultReset.atMs;
              next.fault_reset_generation = want.faultReset.generation;
            }
            if (next.setpoint === row.setpoint && next.mode === row.mode && !resetChanged) continue;
            next.generation = this.nextGeneration();
            next.updated_at_ms = this.nowMs();
            this.stmt.upsert.run(next);
            this.event(
              next.updated_at_ms,
              want.loop,
              'desired-restored',
              undefined,
              `setpoint ${next.setpoint} (${next.setpoint_source}), mode ${next.mode} (${next.mode_source}) carried over from memory`,
              { generation: next.generation, setpoint: next.setpoint, mode: next.mode },
            );
            restored.push(want.loop);
          }
          liveAfter = this.stmt.liveRows.all();
        })
        .immediate(),
    );
    if (liveAfter) this.reloadLive(liveAfter);
    return restored;
  }

  /**
   * A loop's current desired state; undefined for unknown and removed loops. From memory: never
   * touches SQLite (the control path calls it every cycle).
   */
  desired(loop: string): LoopDesiredRow | undefined {
    const row = this.live.get(loop);
    return row === undefined ? undefined : { ...row };
  }

  /** Every live loop's desired state, by loop name (from memory, like `desired`). */
  allDesired(): LoopDesiredRow[] {
    return [...this.live.values()].sort((a, b) => (a.loop < b.loop ? -1 : 1)).map((row) => ({ ...row }));
  }

  /**
   * Makes the next generation at least `floor + 1`: a fresh file continues the numbering the
   * loops have seen (generations never go back, even across a recovery).
   */
  raiseGenerationFloor(floor: number): void {
    this.observe('raiseGenerationFloor', () => {
      const stored = Number(this.stmt.getGeneration.get()?.value ?? 0);
      if (stored < floor) this.stmt.setGeneration.run(String(floor));
    });
  }

  /**
   * Reads the live rows back from the file and returns the loops whose stored desired state
   * differs from memory. The control path never reads the file, so damage to these pages
   * would go unseen until the next command; the daemon calls this at every flush to find it
   * early (the observer then recovers the file).
   */
  readBack(): string[] {
    const stored = this.observe('readBack', () => this.stmt.liveRows.all());
    const differing = stored
      .filter((row) => {
        const live = this.live.get(row.loop);
        return (
          !live ||
          live.setpoint !== row.setpoint ||
          live.mode !== row.mode ||
          live.generation !== row.generation ||
          !sameReset(live.faultReset, row)
        );
      })
      .map((row) => row.loop);
    if (stored.length !== this.live.size)
      differing.push(...[...this.live.keys()].filter((l) => !stored.some((r) => r.loop === l)));
    return differing;
  }

  /** The highest generation any live loop has (0 without loops). */
  highestGeneration(): number {
    let highest = 0;
    for (const row of this.live.values()) highest = Math.max(highest, row.generation);
    return highest;
  }

  /** The most recently applied config; undefined before the first. */
  latestConfig(): { generation: number; hash: string; text: string; appliedAtMs: number } | undefined {
    const row = this.observe('latestConfig', () => this.stmt.latestConfig.get());
    if (row === undefined) return undefined;
    return { generation: row.generation, hash: row.hash, text: row.text, appliedAtMs: row.applied_at_ms };
  }

  /**
   * A small piece of node state that must survive restarts (e.g. what MQTT last published);
   * undefined when it was never stored or cannot be read now (it never throws).
   */
  getMeta(key: string): string | undefined {
    try {
      const row = this.observe('getMeta', () =>
        this.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key),
      );
      return row?.value;
    } catch {
      // Unknown, as if never stored: what reads it (what MQTT last published) redoes its work.
      // The observer has the error (a damaged file is recovered).
      return undefined;
    }
  }

  /** Stores it at once (one small transaction). */
  setMeta(key: string, value: string): void {
    this.observe('setMeta', () =>
      this.db
        .prepare(
          'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
        )
        .run(key, value),
    );
  }

  /** Applied config texts, newest first (for finding the last one that defined a removed loop). */
  configsNewestFirst(): Array<{ generation: number; text: string }> {
    return this.observe('configsNewestFirst', () =>
      this.db
        .prepare<[], { generation: number; text: string }>(
          'SELECT generation, text FROM configs ORDER BY generation DESC',
        )
        .all(),
    ).map((row) => ({ generation: row.generation, text: row.text }));
  }

  /**
   * Forgets a removed loop once its finalizer ran: deletes its desired row and its saved memory
   * (a loop added later under the same name starts clean), and records 'loop-finalized'.
   * A no-op for a loop that is not pending removal (e.g. re-added meanwhile).
   */
  markRemovalFinalized(loop: string): void {
    this.observe('markRemovalFinalized', () =>
      this.db
        .transaction(() => {
          if (this.stmt.deleteRemoved.run(loop).changes === 0) return;
          this.stmt.deleteLoopState.run(loop);
          this.event(this.nowMs(), loop, 'loop-finalized', undefined, `loop ${loop} finalized`, undefined);
        })
        .immediate(),
    );
  }

  /** Loops removed from the config whose finalizer has not completed (kept across restarts). */
  pendingRemovals(): string[] {
    return this.observe('pendingRemovals', () => this.stmt.pending.all()).map((row) => row.loop);
  }

  /** Appends to the event log, stamped now. `data` must be JSON-serializable. */
  recordEvent(event: {
    loop?: string;
    kind: string;
    source?: string;
    message: string;
    data?: unknown;
  }): void {
    const atMs = this.nowMs();
    try {
      this.observe('recordEvent', () =>
        this.event(atMs, event.loop, event.kind, event.source, event.message, event.data),
      );
    } catch (error) {
      const defer = this.options.deferEvent;
      if (!defer) throw error;
      // An event is history, not desired state: it waits for the next flush rather than fail
      // the caller (a rejected command must still get its result).
      defer({ atMs, ...event });
    }
  }

  /**
   * Events, oldest first. `sinceMs`: at or after that time; `loop`: that loop's only;
   * `limit`: the newest `limit` of those.
   */
  events(opts: { sinceMs?: number; loop?: string; limit?: number } = {}): StoredEvent[] {
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (opts.sinceMs !== undefined) {
      where.push('at_ms >= ?');
      params.push(opts.sinceMs);
    }
    if (opts.loop !== undefined) {
      where.push('loop = ?');
      params.push(opts.loop);
    }
    // Insertion order (id), not at_ms: a wall clock set back must not reorder the log.
    let sql = `SELECT at_ms, loop, kind, source, message, data_json FROM events
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC`;
    if (opts.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(opts.limit);
    }
    const rows = this.observe('events', () =>
      this.db.prepare<Array<string | number>, EventRecord>(sql).all(...params),
    );
    return rows.reverse().map((row) => {
      const event: StoredEvent = { atMs: row.at_ms, kind: row.kind, message: row.message };
      if (row.loop !== null) event.loop = row.loop;
      if (row.source !== null) event.source = row.source;
      if (row.data_json !== null) event.data = JSON.parse(row.data_json);
      return event;
    });
  }

  private observe<T>(operation: string, run: () => T): T {
    return observed(this.options.observer, operation, run);
  }

  private reloadLive(rows: readonly DesiredRecord[]): void {
    this.live.clear();
    for (const row of rows) this.live.set(row.loop, toDesiredRow(row));
  }

  private nextGeneration(): number {
    const generation = Number(this.stmt.getGeneration.get()?.value ?? 0) + 1;
    this.stmt.setGeneration.run(String(generation));
    return generation;
  }

  private event(
    atMs: number,
    loop: string | undefined,
    kind: string,
    source: string | undefined,
    message: string,
    data: unknown,
  ): void {
    const dataJson = data === undefined ? null : JSON.stringify(data);
    this.stmt.insertEvent.run(atMs, loop ?? null, kind, source ?? null, message, dataJson);
  }

  private setpointEvent(
    now: number,
    loop: string,
    from: number,
    to: number,
    source: ChangeSource,
    generation: number,
    requestId?: string,
  ): void {
    this.event(now, loop, 'setpoint-changed', source, `setpoint ${from} → ${to} (${source})`, {
      from,
      to,
      generation,
      ...(requestId === undefined ? {} : { requestId }),
    });
  }

  private modeEvent(
    now: number,
    loop: string,
    from: string,
    to: string,
    source: ChangeSource,
    generation: number,
    requestId?: string,
  ): void {
    this.event(now, loop, 'mode-changed', source, `mode ${from} → ${to} (${source})`, {
      from,
      to,
      generation,
      ...(requestId === undefined ? {} : { requestId }),
    });
  }
}

function toDesiredRow(row: DesiredRecord): LoopDesiredRow {
  return {
    loop: row.loop,
    setpoint: row.setpoint,
    // Written only from ChangeSource/Mode values by this class.
    setpointSource: row.setpoint_source as ChangeSource,
    mode: row.mode as Mode,
    modeSource: row.mode_source as ChangeSource,
    generation: row.generation,
    updatedAtMs: row.updated_at_ms,
    ...(row.fault_reset_at_ms === null || row.fault_reset_generation === null
      ? {}
      : { faultReset: { atMs: row.fault_reset_at_ms, generation: row.fault_reset_generation } }),
  };
}

/** Whether `row` stores the reset `reset` (both absent counts as the same). */
function sameReset(reset: StoredFaultReset | undefined, row: DesiredRecord): boolean {
  if (reset === undefined) return row.fault_reset_generation === null;
  return row.fault_reset_at_ms === reset.atMs && row.fault_reset_generation === reset.generation;
}

function assertFiniteSetpoint(loop: string, setpoint: number): void {
  // SQLite stores NaN as NULL: reject it here with a message instead of a constraint error.
  if (!Number.isFinite(setpoint))
    throw new Error(`loop "${loop}": setpoint must be a finite number, got ${setpoint}`);
}
