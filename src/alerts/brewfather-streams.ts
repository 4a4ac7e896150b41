/**
 * The loops' Brewfather streams: every `everyS` (real time: Brewfather's 15-minute rule is) the
 * loop's values are taken and posted. A post that fails is retried with backoff until the next
 * one is due; then the newer reading replaces it. Readings are not queued as alerts are:
 * Brewfather stamps a post with its arrival and ignores a device posting more often than every
 * 15 minutes, so a backlog sent after an outage would be drawn at the wrong times or dropped.
 * Every post is asynchronous and bounded by a timeout: it never delays regulation.
 */
import type { Logger } from 'pino';
import type { BrewfatherConfig } from '../config/schema/brewfather.js';
import { type BackoffOptions, backoffDelayMs } from '../time/backoff.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { BrewfatherBody } from './brewfather.js';
import { DeliveryError, post } from './channels/http.js';

export interface StreamSpec {
  loop: string;
  config: BrewfatherConfig;
  /** Where to post, or why there is nowhere (the id file unreadable): nothing is posted then. */
  url: string | undefined;
}

export interface BrewfatherStreamsOptions {
  streams: readonly StreamSpec[];
  /** Real time (never the simulation's `--speed`). */
  clock: Pick<Clock, 'setTimer' | 'clearTimer'>;
  /** The post of `loop` now, or undefined when the loop is gone. */
  sample: (loop: string) => BrewfatherBody | undefined;
  logger: Logger;
  /** The first post's delay after the start, ms (the loop has a reading by then). Default 60 s. */
  firstAfterMs?: number;
  /** One attempt's limit, ms. Default 15 s. */
  timeoutMs?: number;
  /** Waits between attempts. Default 10 s doubling to 5 min. */
  backoff?: BackoffOptions;
  /** Told after every attempt, with its error (undefined: taken). */
  onAttempt?: (loop: string, error: string | undefined) => void;
}

/** A stream's figures since the start, as an alert channel's (`brewfather/<loop>`). */
export interface StreamFigures {
  channel: string;
  sent: number;
  failed: number;
  /** Readings replaced by a newer one before they could be posted. */
  dropped: number;
  undelivered: number;
}

interface StreamState {
  spec: StreamSpec;
  pending: BrewfatherBody | undefined;
  /** The reading being posted now. */
  sending: BrewfatherBody | undefined;
  retry: TimerHandle | undefined;
  failures: number;
  figures: StreamFigures;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 10_000, maxMs: 300_000, jitter: 0.2 };

export class BrewfatherStreams {
  readonly #states: StreamState[];
  readonly #timers = new Set<TimerHandle>();
  readonly #inFlight = new Set<AbortController>();
  #stopped = false;

  constructor(private readonly opts: BrewfatherStreamsOptions) {
    this.#states = opts.streams.map((spec) => ({
      spec,
      pending: undefined,
      sending: undefined,
      retry: undefined,
      failures: 0,
      figures: { channel: `brewfather/${spec.loop}`, sent: 0, failed: 0, dropped: 0, undelivered: 0 },
    }));
  }

  start(): void {
    for (const state of this.#states) {
      if (state.spec.url === undefined) continue;
      this.#every(state, this.opts.firstAfterMs ?? 60_000);
    }
  }

  figures(): StreamFigures[] {
    return this.#states.map((state) => ({ ...state.figures, undelivered: state.pending ? 1 : 0 }));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) this.opts.clock.clearTimer(timer);
    for (const state of this.#states) if (state.retry) this.opts.clock.clearTimer(state.retry);
    for (const controller of this.#inFlight) controller.abort();
  }

  /** Takes a reading after `delayMs`, then every everyS. */
  #every(state: StreamState, delayMs: number): void {
    const timer = this.opts.clock.setTimer(() => {
      this.#timers.delete(timer);
      if (this.#stopped) return;
      this.#take(state);
      this.#every(state, state.spec.config.everyS * 1000);
    }, delayMs);
    this.#timers.add(timer);
  }

  #take(state: StreamState): void {
    const body = this.opts.sample(state.spec.loop);
    if (!body) return;
    if (state.pending && state.pending !== state.sending) state.figures.dropped++;
    state.pending = body;
    if (state.retry) {
      // The newer reading goes now: the one that waited for its retry is replaced.
      this.opts.clock.clearTimer(state.retry);
      state.retry = undefined;
    }
    void this.#send(state);
  }

  async #send(state: StreamState): Promise<void> {
    const body = state.pending;
    const url = state.spec.url;
    if (!body || url === undefined || state.sending || state.retry || this.#stopped) return;
    state.sending = body;
    const error = await this.#attempt(url, body);
    state.sending = undefined;
    if (this.#stopped) return;
    const { loop } = state.spec;
    this.opts.onAttempt?.(loop, error?.message);
    if (error === undefined) {
      // A reading taken while this one was in flight is not posted right after it: Brewfather
      // would ignore a second post so soon. The next reading is due in everyS.
      if (state.pending !== body) state.figures.dropped++;
      state.pending = undefined;
      state.figures.sent++;
      if (state.failures > 0) this.opts.logger.info(`brewfather ${loop}: posting again`);
      state.failures = 0;
      return;
    }
    state.figures.failed++;
    state.failures++;
    const delayMs = this.#retryDelayMs(state, error);
    if (state.failures === 1) {
      this.opts.logger.warn(
        `brewfather ${loop}: post failed (${error.message}); retrying in ${Math.round(delayMs / 1000)} s`,
      );
    }
    state.retry = this.opts.clock.setTimer(() => {
      state.retry = undefined;
      void this.#send(state);
    }, delayMs);
  }

  /** One post bounded by the timeout: the error, or undefined when Brewfather took it. */
  async #attempt(url: string, body: BrewfatherBody): Promise<Error | undefined> {
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const timeoutMs = this.opts.timeoutMs ?? 15_000;
    const timer = this.opts.clock.setTimer(
      () => controller.abort(new DeliveryError(`Brewfather: no answer in ${Math.round(timeoutMs / 1000)} s`)),
      timeoutMs,
    );
    try {
      await post({
        service: 'Brewfather',
        url,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      return undefined;
    } catch (error) {
      if (controller.signal.aborted && controller.signal.reason instanceof Error)
        return controller.signal.reason;
      return error instanceof Error ? error : new Error(String(error));
    } finally {
      this.opts.clock.clearTimer(timer);
      this.#inFlight.delete(controller);
    }
  }

  /** Backoff, the server's Retry-After, or for a refusal (a wrong id) the next reading. */
  #retryDelayMs(state: StreamState, error: Error): number {
    const everyMs = state.spec.config.everyS * 1000;
    const details = error instanceof DeliveryError ? error.details : {};
    if (details.refused) return everyMs;
    const backoff = this.opts.backoff ?? DEFAULT_BACKOFF;
    const delayMs = details.retryAfterMs ?? backoffDelayMs(state.failures, backoff);
    return Math.min(everyMs, Math.max(delayMs, backoff.initialMs));
  }
}
