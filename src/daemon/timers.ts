import type { Logger } from 'pino';
import type { LoopStatus } from '../core/status.js';
import {
  formatStatusLine,
  statusLineChange,
  type WrittenStatusLine,
  writtenStatusLine,
} from '../status-line.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { DaemonStore } from './store.js';

/** A loop as the periodic status line sees it. */
export interface StatusLineSource {
  status: LoopStatus | undefined;
  /** The unit of its measurement in the running config ('' when none). */
  unit: string;
}

export interface DaemonTimersOptions {
  clock: Clock;
  logger: Logger;
  store: DaemonStore;
  /** Batched state is written this often, ms (read when the timers start). */
  flushEveryMs: () => number;
  /**
   * Each loop's status is looked at this often (clock time), ms; 0 disables status lines. A
   * loop gets a line when it changed meaningfully (status-line.ts: statusLineChange) or when
   * its last line is `statusHeartbeatMs` old.
   */
  statusEveryMs: number;
  /** A loop whose status did not change meaningfully still gets a line this often, ms. Default 1 h. */
  statusHeartbeatMs?: number;
  /** The running loops, read at every status-line tick. */
  statusLines: () => Iterable<StatusLineSource>;
}

/**
 * Default time between two status lines of a loop that did not change, ms: an hour. With lines
 * on change, about 24 lines (≈2 kB) per loop per day in steady state, where one every minute
 * wrote 1,440 (npm run bench:journal).
 */
export const STATUS_HEARTBEAT_MS = 3_600_000;

/**
 * The daemon's periodic work, all in one place: the batched flush of loop state, history
 * retention and the status lines (on change and hourly: the journal is on an SD card).
 * Whatever spreads that work over time (many loops stall the event loop when it all runs in one
 * tick) changes only this file.
 */
export class DaemonTimers {
  private flushTimer: TimerHandle | undefined;
  private pruneTimer: TimerHandle | undefined;
  private statusTimer: TimerHandle | undefined;
  private stopped = false;
  /** Flushes failing in a row (logged once per streak). */
  private flushFailures = 0;
  /** The last status line written for each loop. */
  private readonly written = new Map<string, WrittenStatusLine>();
  /** Each loop's action at the last tick, and the tick it was first seen at (clock ms). */
  private readonly actions = new Map<string, { action: string; sinceMs: number }>();

  constructor(private readonly opts: DaemonTimersOptions) {}

  /** Status lines, flushes, then retention (which also runs once now). */
  start(): void {
    this.scheduleStatusLines();
    this.scheduleFlushes();
    this.schedulePruning();
  }

  /** Cancels every timer; a flush can still be asked for (the daemon's last one, after driving safe). */
  stop(): void {
    this.stopped = true;
    if (this.statusTimer) this.opts.clock.clearTimer(this.statusTimer);
    if (this.flushTimer) this.opts.clock.clearTimer(this.flushTimer);
    if (this.pruneTimer) this.opts.clock.clearTimer(this.pruneTimer);
  }

  /** Writes batched state; a storage failure is logged, never stops regulation. */
  /** Writes the batched state now; `durable`: fsynced before it returns (StateStore.flush). */
  flush(opts: { durable?: boolean } = {}): void {
    const store = this.opts.store;
    try {
      store.state.flush(opts);
      if (this.flushFailures > 0 && !store.health) {
        this.opts.logger.info({ failures: this.flushFailures }, 'loop state written to the database again');
      }
      this.flushFailures = 0;
    } catch (error) {
      this.flushFailures++;
      // Once per streak of failures, never once per flush; a supervised store logs it itself.
      const once = this.flushFailures === 1 && !store.health;
      if (once)
        this.opts.logger.error({ err: error }, 'could not write loop state to the database; will retry');
      else this.opts.logger.debug({ err: error }, 'loop state still not written; will retry');
    }
    try {
      store.check?.();
    } catch (error) {
      // Reported (and a damaged file recovered) by the store itself.
      this.opts.logger.debug({ err: error }, 'desired state could not be read back');
    }
  }

  private scheduleFlushes(): void {
    const everyMs = this.opts.flushEveryMs();
    const tick = () => {
      this.flushTimer = this.opts.clock.setTimer(tick, everyMs);
      this.flushInSlices(0);
    };
    this.flushTimer = this.opts.clock.setTimer(tick, everyMs);
  }

  /**
   * The periodic flush without one long stall: the loops' states are encoded (deflated)
   * FLUSH_ENCODE_SLICE at a time with a turn of the event loop between slices, then written in
   * one transaction as before (one commit per flush spares the SD card). After stop() the
   * daemon's own last flush writes everything. Bounded: after FLUSH_MAX_SLICES turns (loops
   * cycling faster than the slices encode) the flush encodes the rest itself; an encoding
   * error is left to the flush, which logs it as a failed flush and keeps the state pending.
   */
  private flushInSlices(slices: number): void {
    if (this.stopped) return;
    let encodedAll = true;
    try {
      encodedAll = slices >= FLUSH_MAX_SLICES || this.opts.store.state.encodeSome(FLUSH_ENCODE_SLICE);
    } catch {
      encodedAll = true;
    }
    if (encodedAll) this.flush();
    else setImmediate(() => this.flushInSlices(slices + 1));
  }

  /** History retention now and every hour; a failure is logged and retried next hour. */
  private schedulePruning(): void {
    const store = this.opts.store;
    if (!store.prune) return;
    const tick = () => {
      try {
        // Called on the store (a method of the supervisor, not a free function).
        store.prune?.(this.opts.clock.nowMs());
      } catch (error) {
        // A supervised store logs storage failures once per streak itself.
        const log = store.health ? 'debug' : 'error';
        this.opts.logger[log]({ err: error }, 'history retention failed; will retry in an hour');
      }
      this.pruneTimer = this.opts.clock.setTimer(tick, 3_600_000);
    };
    tick();
  }

  private scheduleStatusLines(): void {
    const everyMs = this.opts.statusEveryMs;
    if (everyMs <= 0) return;
    const tick = () => {
      const lines = [...this.opts.statusLines()];
      this.forgetGoneLoops(lines);
      this.writeStatusLines(lines);
      this.statusTimer = this.opts.clock.setTimer(tick, everyMs);
    };
    this.statusTimer = this.opts.clock.setTimer(tick, everyMs);
  }

  /**
   * STATUS_LINES_PER_TURN lines per turn of the event loop: 200 lines at once (each a status
   * object serialized by pino and written synchronously) stall it for 10–40 ms here.
   */
  private writeStatusLines(lines: StatusLineSource[]): void {
    if (this.stopped) return;
    const nowMs = this.opts.clock.nowMs();
    const heartbeatMs = this.opts.statusHeartbeatMs ?? STATUS_HEARTBEAT_MS;
    for (const { status, unit } of lines.splice(0, STATUS_LINES_PER_TURN)) {
      if (!status) continue;
      const last = this.written.get(status.loop);
      const why =
        statusLineChange(last, status, nowMs, this.actionSince(status.loop, status.action, nowMs)) ??
        (last && nowMs - last.atMs >= heartbeatMs ? 'interval' : undefined);
      if (!why) continue;
      this.written.set(status.loop, writtenStatusLine(status, nowMs));
      this.opts.logger.info({ status, why }, formatStatusLine(status, unit));
    }
    if (lines.length > 0) setImmediate(() => this.writeStatusLines(lines));
  }

  /** When the loop's current action was first seen at a tick (a changed action counts once it held). */
  private actionSince(loop: string, action: string, nowMs: number): number {
    const seen = this.actions.get(loop);
    if (seen?.action === action) return seen.sinceMs;
    this.actions.set(loop, { action, sinceMs: nowMs });
    return nowMs;
  }

  /** A removed loop's last line is forgotten (added again, it starts with a first line). */
  private forgetGoneLoops(lines: StatusLineSource[]): void {
    const running = new Set(lines.flatMap(({ status }) => (status ? [status.loop] : [])));
    for (const loop of this.written.keys()) if (!running.has(loop)) this.written.delete(loop);
    for (const loop of this.actions.keys()) if (!running.has(loop)) this.actions.delete(loop);
  }
}

/** Loop states encoded per turn of the event loop before a periodic flush (see flushInSlices). */
const FLUSH_ENCODE_SLICE = 20;
/** Turns a periodic flush waits for the slices at most (1,000 loops at FLUSH_ENCODE_SLICE). */
const FLUSH_MAX_SLICES = 50;
/** Status lines looked at per turn of the event loop (see writeStatusLines). */
const STATUS_LINES_PER_TURN = 10;
