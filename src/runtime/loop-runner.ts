import type { Logger } from 'pino';
import { backoffDelayMs } from '../time/backoff.js';
import type { Clock, TimerHandle } from '../time/clock.js';

/** What a cycle tells the runner about its next run. */
export interface CycleResult {
  /**
   * Absolute clock time (ms) when the loop wants to run again, e.g. a relay's next switch
   * moment. Capped by the periodic resync; in the past means as soon as possible.
   */
  nextWakeMs?: number;
}

export interface LoopRunnerOptions {
  /** Loop name, for logs. */
  name: string;
  /** The only source of time the runner uses. */
  clock: Clock;
  /** Reads everything fresh, reconciles, acts; throws on failure (the runner retries with backoff). */
  cycle: () => Promise<CycleResult>;
  /** Period (ms, > 0) of a resync cycle when nothing triggers one; callers default to 30 s. */
  resyncMs: number;
  /** Retry delays after failed cycles (ms), see `backoffDelayMs`. */
  backoff: { initialMs: number; maxMs: number };
  logger: Logger;
  /** Called with the clock time after each successful cycle: liveness (systemd watchdog). */
  onCycleSuccess?: (atMs: number) => void;
}

/** Counters of a runner; `lastError` is kept after recovery for diagnostics. */
export interface LoopRunnerStats {
  /** Cycles run to completion, failed or not. */
  cycles: number;
  failures: number;
  /** Length of the current failure streak; 0 after a success. */
  consecutiveFailures: number;
  lastSuccessMs?: number;
  lastError?: string;
}

/**
 * Schedules one loop's cycle, like controller-runtime's work queue for a single key: never two
 * cycles at once, triggers coalesce, failures requeue with capped exponential backoff, and a
 * periodic resync runs even when nothing happens. Triggers carry no data: the cycle reads state.
 *
 * Its due times and the backoff's not-before are monotonic clock times (Clock.monotonicMs), so
 * a step of the wall clock moves none of them: a cycle's wake-up request, a wall-clock time, is
 * turned into a delay from now when it comes.
 */
export class LoopRunner {
  readonly stats: LoopRunnerStats = { cycles: 0, failures: 0, consecutiveFailures: 0 };
  readonly #opts: LoopRunnerOptions;
  #started = false;
  #stopped = false;
  #running = false;
  #triggeredWhileRunning = false;
  #timer: TimerHandle | undefined;
  /** Monotonic. */
  #timerDueMs = Number.POSITIVE_INFINITY;
  /** The current (or last) cycle; `stop()` waits on it. Never rejects. */
  #inFlight: Promise<void> = Promise.resolve();
  /** No cycle starts before this monotonic time during a failure streak, whatever triggers it. */
  #notBeforeMs = Number.NEGATIVE_INFINITY;

  constructor(opts: LoopRunnerOptions) {
    if (!(opts.resyncMs > 0) || !Number.isFinite(opts.resyncMs)) {
      throw new RangeError(`loop ${opts.name}: resyncMs must be a finite number > 0, got ${opts.resyncMs}`);
    }
    backoffDelayMs(1, opts.backoff); // validates the backoff options now rather than on the first failure
    this.#opts = opts;
  }

  /** Schedules the first cycle at delay 0. Calling it again, or after `stop()`, does nothing. */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#armAt(this.#opts.clock.monotonicMs());
  }

  /**
   * Asks for a cycle soon (sensor update, command, edge). While a cycle runs, any number of
   * triggers make one follow-up cycle; during a failure streak the cycle waits out the backoff.
   * Ignored before `start()` and after `stop()`.
   */
  trigger(reason: string): void {
    if (!this.#started || this.#stopped) return;
    this.#opts.logger.debug({ name: this.#opts.name, reason }, 'cycle triggered');
    if (this.#running) {
      this.#triggeredWhileRunning = true;
      return;
    }
    this.#armAt(Math.max(this.#opts.clock.monotonicMs(), this.#notBeforeMs));
  }

  /** Starts no new cycle; resolves once the in-flight cycle, if any, has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#disarm();
    await this.#inFlight;
  }

  /** Runs a cycle at `dueMs`, unless one is already scheduled at or before it. */
  #armAt(dueMs: number): void {
    if (this.#stopped) return;
    if (this.#timer !== undefined && this.#timerDueMs <= dueMs) return;
    this.#disarm();
    const { clock } = this.#opts;
    this.#timerDueMs = dueMs;
    this.#timer = clock.setTimer(() => this.#onTimer(), Math.max(0, dueMs - clock.monotonicMs()));
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#opts.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#timerDueMs = Number.POSITIVE_INFINITY;
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerDueMs = Number.POSITIVE_INFINITY;
    // A timer only exists while idle, but stay safe: a cycle never overlaps another.
    if (this.#stopped || this.#running) return;
    this.#running = true;
    this.#triggeredWhileRunning = false;
    this.#inFlight = this.#runCycle();
  }

  async #runCycle(): Promise<void> {
    let result: CycleResult | undefined;
    let failed = false;
    let error: unknown;
    try {
      result = await this.#opts.cycle();
    } catch (err) {
      failed = true;
      error = err;
    }
    const { clock } = this.#opts;
    const nowMs = clock.nowMs();
    const monoNowMs = clock.monotonicMs();
    this.stats.cycles++;
    let nextDueMs = failed
      ? this.#recordFailure(error, monoNowMs)
      : this.#recordSuccess(result, nowMs, monoNowMs);
    if (this.#triggeredWhileRunning) nextDueMs = Math.min(nextDueMs, Math.max(monoNowMs, this.#notBeforeMs));
    // Idle from here on, so triggers from the hook below take the idle path and are not lost.
    this.#running = false;
    this.#armAt(nextDueMs);
    if (!failed) this.#notifySuccess(nowMs);
  }

  /** Returns when the next cycle is due (monotonic); `nowMs` is wall time, `monoNowMs` the same moment. */
  #recordSuccess(result: CycleResult | undefined, nowMs: number, monoNowMs: number): number {
    const { name, logger, resyncMs } = this.#opts;
    const streak = this.stats.consecutiveFailures;
    this.stats.consecutiveFailures = 0;
    this.stats.lastSuccessMs = nowMs;
    this.#notBeforeMs = Number.NEGATIVE_INFINITY;
    if (streak > 0) logger.info({ name, failures: streak }, `${name}: recovered after ${streak} failures`);
    const resyncDueMs = monoNowMs + resyncMs;
    const wakeMs = result?.nextWakeMs;
    if (typeof wakeMs !== 'number' || Number.isNaN(wakeMs)) return resyncDueMs;
    return Math.min(monoNowMs + (wakeMs - nowMs), resyncDueMs);
  }

  /** Returns when the retry is due (monotonic). Logs at error level once per streak, not per retry. */
  #recordFailure(err: unknown, monoNowMs: number): number {
    const { name, logger, backoff } = this.#opts;
    this.stats.failures++;
    this.stats.consecutiveFailures++;
    this.stats.lastError = err instanceof Error ? err.message : String(err);
    const retryInMs = backoffDelayMs(this.stats.consecutiveFailures, backoff);
    if (this.stats.consecutiveFailures === 1) {
      logger.error({ err, name, retryInMs }, `${name}: cycle failed, retrying with backoff`);
    } else {
      logger.debug(
        { err, name, consecutiveFailures: this.stats.consecutiveFailures, retryInMs },
        `${name}: cycle failed again`,
      );
    }
    this.#notBeforeMs = monoNowMs + retryInMs;
    return this.#notBeforeMs;
  }

  #notifySuccess(atMs: number): void {
    const hook = this.#opts.onCycleSuccess;
    if (hook === undefined) return;
    try {
      hook(atMs);
    } catch (err) {
      // A broken liveness hook must not stop the loop from regulating.
      this.#opts.logger.warn({ err, name: this.#opts.name }, `${this.#opts.name}: onCycleSuccess hook threw`);
    }
  }
}
