import type { LoopStatus } from '../core/status.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { Notifier } from './notify.js';

/** What the daemon tells about its loops' liveness (the gate implements it). */
export interface LoopLiveness {
  /**
   * A loop exists and should complete a cycle at least every `maxSilenceMs` (e.g. 3 × its
   * resync period). Its silence counts from now until its first success. Re-adding resets it.
   */
  addLoop(name: string, maxSilenceMs: number): void;
  /** A loop was removed: it no longer holds back READY or the pings. */
  removeLoop(name: string): void;
  /** A loop completed a cycle successfully (LoopRunner's `onCycleSuccess`). Unknown names are ignored. */
  cycleSucceeded(name: string): void;
}

/** A loop that has not succeeded within its `maxSilenceMs`. */
export interface SilentLoop {
  name: string;
  /** Time since its last success (or since it was added), ms of the gate's clock. */
  silentMs: number;
  maxSilenceMs: number;
}

export interface WatchdogGateOptions {
  /**
   * Times silences and schedules ticks. Production passes `monotonicClock`: the wall clock of a
   * Raspberry Pi without RTC jumps by months at its first NTP sync, which would look like
   * silence; tests pass a ManualClock.
   */
  clock: Clock;
  notifier: Pick<Notifier, 'ready' | 'watchdog' | 'status'>;
  /**
   * `WATCHDOG=1` is sent this often (ms) while every loop is alive: the notifier's
   * `watchdogIntervalMs`. Undefined: no watchdog, the gate only sends READY and STATUS.
   */
  pingEveryMs: number | undefined;
  /** How often STATUS= is refreshed when there is no watchdog, ms. Default 30 000. */
  statusEveryMs?: number;
  /** The one-line STATUS= text, e.g. `() => systemdStatusLine(daemon.statuses(), unitOf)`. */
  summary?: () => string;
  /**
   * Called at each tick whose ping was withheld, with the loops to blame (log them: they explain
   * the restart). Never called without a watchdog; silent loops then only show in STATUS=.
   */
  onWithheld?: (silent: SilentLoop[]) => void;
}

interface LoopEntry {
  maxSilenceMs: number;
  /** Last success, or when the loop was added: silence is measured from here. */
  aliveSinceMs: number;
  succeededOnce: boolean;
}

/**
 * Decides what systemd hears: READY=1 once every loop has completed its first cycle (not
 * before: "active" then means regulating), WATCHDOG=1 at each tick only while every loop has
 * succeeded within its `maxSilenceMs`, and a STATUS= line when it changes. A hung loop (or a
 * blocked event loop) therefore stops the pings and systemd restarts the process, which
 * re-commands every actuator.
 */
export class WatchdogGate implements LoopLiveness {
  readonly #opts: WatchdogGateOptions;
  readonly #loops = new Map<string, LoopEntry>();
  #started = false;
  #stopped = false;
  #ready = false;
  #timer: TimerHandle | undefined;
  #lastStatus: string | undefined;

  constructor(opts: WatchdogGateOptions) {
    for (const [name, value] of [
      ['pingEveryMs', opts.pingEveryMs],
      ['statusEveryMs', opts.statusEveryMs],
    ] as const) {
      if (value !== undefined && !(value > 0 && Number.isFinite(value))) {
        throw new RangeError(`WatchdogGate: ${name} must be a finite number > 0, got ${value}`);
      }
    }
    this.#opts = opts;
  }

  /** True once READY=1 was sent. */
  get ready(): boolean {
    return this.#ready;
  }

  addLoop(name: string, maxSilenceMs: number): void {
    if (!(maxSilenceMs > 0) || !Number.isFinite(maxSilenceMs)) {
      throw new RangeError(`WatchdogGate: loop ${name}: maxSilenceMs must be a finite number > 0`);
    }
    this.#loops.set(name, { maxSilenceMs, aliveSinceMs: this.#opts.clock.nowMs(), succeededOnce: false });
  }

  removeLoop(name: string): void {
    this.#loops.delete(name);
    this.#maybeReady();
  }

  cycleSucceeded(name: string): void {
    const loop = this.#loops.get(name);
    if (!loop) return;
    loop.aliveSinceMs = this.#opts.clock.nowMs();
    loop.succeededOnce = true;
    this.#maybeReady();
  }

  /**
   * Call once the daemon has started (every loop added): sends READY now if every loop has
   * already cycled (or there is none), else on the last first cycle; then ticks every
   * `pingEveryMs` (or `statusEveryMs`). Calling it again, or after `stop()`, does nothing.
   */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#maybeReady();
    this.#arm();
  }

  /** No more ticks, pings or READY (call when shutdown begins). Safe to call twice. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#opts.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  /** Loops silent for longer than their `maxSilenceMs` now, in the order they were added. */
  silentLoops(): SilentLoop[] {
    const nowMs = this.#opts.clock.nowMs();
    const silent: SilentLoop[] = [];
    for (const [name, loop] of this.#loops) {
      const silentMs = nowMs - loop.aliveSinceMs;
      if (silentMs > loop.maxSilenceMs) silent.push({ name, silentMs, maxSilenceMs: loop.maxSilenceMs });
    }
    return silent;
  }

  #maybeReady(): void {
    if (this.#ready || !this.#started || this.#stopped) return;
    for (const loop of this.#loops.values()) if (!loop.succeededOnce) return;
    this.#ready = true;
    this.#sendStatus();
    this.#opts.notifier.ready();
    // The watchdog timer starts at READY; an immediate ping gives the first interval a margin.
    if (this.#opts.pingEveryMs !== undefined && this.silentLoops().length === 0)
      this.#opts.notifier.watchdog();
  }

  #arm(): void {
    const everyMs = this.#opts.pingEveryMs ?? this.#opts.statusEveryMs ?? 30_000;
    this.#timer = this.#opts.clock.setTimer(() => this.#tick(), everyMs);
  }

  #tick(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    const silent = this.silentLoops();
    if (silent.length === 0) {
      this.#sendStatus();
      if (this.#opts.pingEveryMs !== undefined) this.#opts.notifier.watchdog();
    } else if (this.#opts.pingEveryMs !== undefined) {
      this.#sendStatus(`watchdog withheld: ${silenceText(silent)}`);
      this.#opts.onWithheld?.(silent);
    } else {
      this.#sendStatus(silenceText(silent));
    }
    this.#arm();
  }

  /** Sends STATUS= when the text changed; a broken summary must not stop the pings. */
  #sendStatus(text?: string): void {
    let line = text;
    if (line === undefined) {
      try {
        line = this.#opts.summary?.();
      } catch (error) {
        line = `status unavailable: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    if (line === undefined || line === this.#lastStatus) return;
    this.#lastStatus = line;
    this.#opts.notifier.status(line);
  }
}

function silenceText(silent: SilentLoop[]): string {
  const names = silent.map((loop) => `${loop.name} (${Math.round(loop.silentMs / 1000)} s)`).join(', ');
  return `no successful cycle from ${names}`;
}

/**
 * The STATUS= line: `3 loops: room 20.1/20 °C heating, cellar 11.8/12 °C idle, hum —/55 % off FAULT`.
 * Measured values get one decimal; `—` when there is no usable reading; FAULT when the loop's
 * Faulted condition is True. One entry per status given (a loop has none before its first cycle).
 *
 * @param unitOf the unit shown after a loop's values (config `loops.<id>.unit`), '' for none.
 */
export function systemdStatusLine(statuses: LoopStatus[], unitOf: (loop: string) => string): string {
  const parts = statuses.map((status) => {
    const measured = status.measured === undefined ? '—' : status.measured.toFixed(1);
    const unit = unitOf(status.loop);
    const faulted = status.conditions.some((c) => c.type === 'Faulted' && c.status === 'True');
    return `${status.loop} ${measured}/${status.setpoint}${unit ? ` ${unit}` : ''} ${status.action}${faulted ? ' FAULT' : ''}`;
  });
  const count = `${statuses.length} loop${statuses.length === 1 ? '' : 's'}`;
  return parts.length === 0 ? count : `${count}: ${parts.join(', ')}`;
}

/**
 * A clock on `performance.now()` (monotonic: immune to NTP steps) and `setTimeout`, for the
 * gate only. Its timers are `unref()`'d: they never keep a stopping daemon alive.
 */
export const monotonicClock: Clock = (() => {
  let nextId = 1;
  const timeouts = new Map<number, NodeJS.Timeout>();
  return {
    nowMs: () => performance.now(),
    monotonicMs: () => performance.now(),
    setTimer(fn: () => void, delayMs: number) {
      const id = nextId++;
      const timeout = setTimeout(
        () => {
          timeouts.delete(id);
          fn();
        },
        Math.max(0, delayMs),
      );
      timeout.unref();
      timeouts.set(id, timeout);
      return { id };
    },
    clearTimer(handle: TimerHandle) {
      clearTimeout(timeouts.get(handle.id));
      timeouts.delete(handle.id);
    },
  };
})();
