/**
 * Delivers the outbox, channel by channel, in order: one attempt at a time per channel, the
 * oldest alert first, the next only once it was taken (so "resolved" never arrives before its
 * alert). A failed attempt waits with capped exponential backoff (or the server's Retry-After)
 * and tries the same alert again; a refused one (a wrong token) waits the longest. Every send
 * is asynchronous and bounded by a timeout on the daemon's clock: delivery never blocks or
 * delays regulation.
 */
import type { Logger } from 'pino';
import { type BackoffOptions, backoffDelayMs } from '../time/backoff.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import { type AlertChannel, DeliveryError } from './channels/index.js';
import type { AlertOutbox } from './outbox.js';
import { sendUntilAborted } from './send.js';

export interface DeliveryCounts {
  sent: number;
  failed: number;
}

export interface DispatcherOptions {
  outbox: AlertOutbox;
  channels: ReadonlyMap<string, AlertChannel>;
  clock: Pick<Clock, 'nowMs' | 'setTimer' | 'clearTimer'>;
  logger: Logger;
  /** One attempt's limit, ms. Default 15 s. */
  timeoutMs?: number;
  /** Waits between attempts. Default 5 s doubling to 10 min, 20 % jitter. */
  backoff?: BackoffOptions;
  /** Told after every attempt (the AlertsDelivering condition). */
  onAttempt?: (channel: string, error: string | undefined) => void;
}

interface ChannelState {
  busy: boolean;
  failures: number;
  timer: TimerHandle | undefined;
  counts: DeliveryCounts;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 5_000, maxMs: 600_000, jitter: 0.2 };

export class AlertDispatcher {
  readonly #states = new Map<string, ChannelState>();
  readonly #running = new Set<Promise<void>>();
  readonly #inFlight = new Set<AbortController>();
  #stopped = false;

  constructor(private readonly opts: DispatcherOptions) {
    for (const id of opts.channels.keys()) {
      this.#states.set(id, { busy: false, failures: 0, timer: undefined, counts: { sent: 0, failed: 0 } });
    }
  }

  /** Delivers what waits on every idle channel (or on `channel`): call after adding to the outbox. */
  kick(channel?: string): void {
    if (this.#stopped) return;
    for (const [id, state] of this.#states) {
      if ((channel !== undefined && id !== channel) || state.busy || state.timer) continue;
      state.busy = true;
      const run = this.#drain(id, state).finally(() => this.#running.delete(run));
      this.#running.add(run);
    }
  }

  /** Tries `channel` now, without waiting for its backoff (the broker is back). */
  retryNow(channel: string): void {
    const state = this.#states.get(channel);
    if (state?.timer) this.opts.clock.clearTimer(state.timer);
    if (state) state.timer = undefined;
    this.kick(channel);
  }

  /** Sent and failed attempts per channel since the start. */
  counts(): Record<string, DeliveryCounts> {
    return Object.fromEntries([...this.#states].map(([id, state]) => [id, { ...state.counts }]));
  }

  /** Stops: no new attempt, the ones in flight aborted and awaited (they stay in the outbox). */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const state of this.#states.values()) {
      if (state.timer) this.opts.clock.clearTimer(state.timer);
      state.timer = undefined;
    }
    for (const controller of this.#inFlight) controller.abort();
    await Promise.allSettled([...this.#running]);
  }

  /**
   * Sends the channel's alerts until none is left or one fails. `busy` is cleared as it returns,
   * in the same turn as its last look at the outbox: an alert added after that look is kicked.
   */
  async #drain(id: string, state: ChannelState): Promise<void> {
    try {
      await this.#sendAll(id, state);
    } finally {
      state.busy = false;
    }
  }

  async #sendAll(id: string, state: ChannelState): Promise<void> {
    const channel = this.opts.channels.get(id);
    if (!channel) return;
    for (;;) {
      const entry = this.opts.outbox.head(id);
      if (!entry || this.#stopped) return;
      this.opts.outbox.persistPending();
      const error = await this.#attempt(channel, entry.notice);
      if (this.#stopped) return;
      this.opts.onAttempt?.(id, error?.message);
      if (error === undefined) {
        this.opts.outbox.delivered(entry, this.opts.clock.nowMs());
        state.counts.sent++;
        if (state.failures > 0) this.opts.logger.info(`alert channel ${id}: delivering again`);
        state.failures = 0;
        continue;
      }
      this.opts.outbox.failed(entry, error.message);
      state.counts.failed++;
      state.failures++;
      const delayMs = this.#retryDelayMs(state.failures, error);
      if (state.failures === 1) {
        this.opts.logger.warn(
          `alert channel ${id}: delivery failed (${error.message}); retrying in ${Math.round(delayMs / 1000)} s, the alerts wait in the outbox`,
        );
      }
      state.timer = this.opts.clock.setTimer(() => {
        state.timer = undefined;
        this.kick(id);
      }, delayMs);
      return;
    }
  }

  /** One send, bounded by the timeout; the error, or undefined when the channel took it. */
  async #attempt(
    channel: AlertChannel,
    notice: Parameters<AlertChannel['send']>[0],
  ): Promise<Error | undefined> {
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const timeoutMs = this.opts.timeoutMs ?? 15_000;
    const timer = this.opts.clock.setTimer(
      () =>
        controller.abort(
          new DeliveryError(`${channel.type}: no answer in ${Math.round(timeoutMs / 1000)} s`),
        ),
      timeoutMs,
    );
    try {
      await sendUntilAborted(channel, notice, controller.signal);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    } finally {
      this.opts.clock.clearTimer(timer);
      this.#inFlight.delete(controller);
    }
  }

  #retryDelayMs(failures: number, error: Error): number {
    const backoff = this.opts.backoff ?? DEFAULT_BACKOFF;
    const details = error instanceof DeliveryError ? error.details : {};
    if (details.refused) return backoff.maxMs;
    const backedOff = backoffDelayMs(failures, backoff);
    return details.retryAfterMs === undefined ? backedOff : Math.max(details.retryAfterMs, backoff.initialMs);
  }
}
