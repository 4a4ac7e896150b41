import type Database from 'better-sqlite3';
import type { LoopStatus } from '../core/status.js';
import { DesiredStore, type StoredEvent } from './desired-store.js';
import { EventFeed } from './event-feed.js';
import type { StateStore } from './state-store.js';

/**
 * Handing the daemon's state over to another database (a fresh file after damage, the file once
 * it opens, or the in-memory stand-in): what StoreSupervisor writes into the new database before
 * and after it moves its stores there. Nothing the daemon holds is lost in the swap: the running
 * config, the desired state (generations continue), every loop's memory and status, latched
 * faults, and the saved memory of loops not running yet.
 */

/**
 * What the daemon holds in memory and a new database must get: the running config (applied as
 * it would be at a start) and every loop's memory and status (latched faults included).
 */
export interface RunningState {
  /** Applies the running config text to `target` (a DesiredStore on the new file). */
  applyConfig(target: DesiredStore): void;
  loops(): Array<{ loop: string; memory: unknown; status: LoopStatus | undefined; atMs: number }>;
  /**
   * The database taking over holds a latched fault for a running loop that the loop does not
   * have (it started on the stand-in, without the file's memory): the loop takes it on.
   */
  adoptLatchedFault?(loop: string, fault: unknown): void;
}

/** What the new database is to record about the swap ('database-recovered', 'database-opened'). */
export interface HandoverEvent {
  kind: string;
  message: string;
  data?: unknown;
}

/**
 * Before the swap: writes into `db` the running config and the desired state `current` holds,
 * with generations continuing from it, and `event`. Returns the events it recorded there, for
 * the caller to announce once the stores moved to `db`. Throws (with `db` closed) when `db`
 * cannot take them; the stores then stay where they were (and nothing is to be announced).
 */
export function writeDesiredInto(
  db: Database.Database,
  nowMs: () => number,
  current: DesiredStore,
  running: RunningState | undefined,
  event?: HandoverEvent,
): StoredEvent[] {
  const remembered = current.allDesired();
  const recorded: StoredEvent[] = [];
  const feed = new EventFeed();
  feed.subscribe((written) => recorded.push(written));
  const target = new DesiredStore(db, nowMs, { feed });
  try {
    target.raiseGenerationFloor(current.highestGeneration());
    running?.applyConfig(target);
    target.restoreDesired(remembered);
    if (event) target.recordEvent(event);
  } catch (error) {
    closeQuietly(db);
    throw error;
  }
  return recorded;
}

/**
 * After the swap (`state` already on `db`): queues every running loop's memory and status for
 * the next flush, and copies from `previous` the saved memory of loops not running.
 */
export function carryLoopStates(
  previous: Database.Database,
  db: Database.Database,
  state: StateStore,
  running: RunningState | undefined,
): void {
  const loops = running?.loops() ?? [];
  // What the daemon does not hold in memory is not lost in the swap: the saved memory of loops
  // not running yet (a start that fell back to the stand-in before its loops existed) …
  copyMissingLoopStates(previous, db, new Set(loops.map((loop) => loop.loop)));
  for (const loop of loops) {
    // … and a latched fault the file holds for a loop that started without it.
    const memory = withStoredLatch(state, running, loop.loop, loop.memory);
    if (loop.status) state.saveState(loop.loop, memory, loop.status, loop.atMs);
  }
}

/**
 * `memory` with the latched fault the current database holds for `loop`, when `memory` has
 * none; the daemon's loop is told to take it on. A latch is never lost to a database swap.
 */
function withStoredLatch(
  state: StateStore,
  runningState: RunningState | undefined,
  loop: string,
  memory: unknown,
): unknown {
  const running = memory as { latchedFault?: unknown } | undefined;
  if (running?.latchedFault) return memory;
  let stored: { latchedFault?: unknown } | undefined;
  try {
    stored = state.load(loop)?.memory as { latchedFault?: unknown } | undefined;
  } catch {
    return memory; // unreadable: nothing to carry
  }
  if (!stored?.latchedFault) return memory;
  runningState?.adoptLatchedFault?.(loop, stored.latchedFault);
  return { ...(running ?? {}), latchedFault: stored.latchedFault };
}

export function closeQuietly(db: Database.Database | undefined): void {
  try {
    if (db?.open) db.close();
  } catch {
    // A damaged or full file can fail to close too; what matters was reported already.
  }
}

/**
 * Copies the `loop_state` rows of `from` that `to` does not have, except those of `skip`: the
 * saved memory of loops the daemon does not run yet survives a swap of databases. Best effort:
 * a damaged `from` gives nothing.
 */
function copyMissingLoopStates(from: Database.Database, to: Database.Database, skip: Set<string>): void {
  if (from === to || !from.open) return;
  try {
    const rows = from.prepare('SELECT * FROM loop_state').all() as Array<Record<string, unknown>>;
    for (const row of rows) {
      const loop = String(row.loop);
      if (skip.has(loop)) continue;
      const columns = Object.keys(row);
      to.prepare(
        `INSERT OR IGNORE INTO loop_state (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`,
      ).run(row);
    }
  } catch {
    // Nothing to carry from a file that cannot be read.
  }
}
