import type { Logger } from 'pino';
import type { ConfigResult } from '../config/load.js';
import { loopSectionHash } from '../config/plan.js';
import type { Config } from '../config/schema.js';
import { backoffDelayMs } from '../time/backoff.js';
import type { Clock, TimerHandle } from '../time/clock.js';

/** What a reload did. */
export type ReloadOutcome =
  | { result: 'invalid'; errors: string[] }
  | { result: 'unchanged' }
  | { result: 'applied'; generation: number; added: string[]; changed: string[]; removed: string[] }
  /** The database could not take it: nothing changed; retried after `retryInMs` unless a newer file comes. */
  | { result: 'failed'; error: string; retryInMs: number };

/** The config as the database took it: the generation in force and whether the config changed. */
export interface StoredConfig {
  generation: number;
  changed: boolean;
}

/** What a reload does to the running daemon, step by step (the daemon implements it). */
export interface ReloadTarget {
  /** A stopped daemon changes nothing any more. */
  isStopped(): boolean;
  /** Sets the `ConfigValid` condition of every running loop. */
  setConfigValidity(valid: boolean, message: string, nowMs: number, reason?: string): void;
  /** Writes the config as desired state; throws, having changed nothing, when the database cannot take it. */
  storeConfig(config: Config, text: string): StoredConfig;
  /** Applies a config the database took to the loops and drivers. */
  apply(config: Config, text: string, stored: StoredConfig, nowMs: number): Promise<ReloadOutcome>;
}

export interface ReloadQueueOptions {
  clock: Clock;
  logger: Logger;
  target: ReloadTarget;
}

/** Retries of a reload the database could not take: 1 s doubling to 30 s. */
const RELOAD_RETRY = { initialMs: 1_000, maxMs: 30_000 };

/** Loops a new config adds, changes (their section's hash differs) and removes. */
export function loopChanges(
  before: Config,
  next: Config,
): { added: string[]; changed: string[]; removed: string[] } {
  const unchanged = (id: string) =>
    before.loops[id] !== undefined && loopSectionHash(before, id) === loopSectionHash(next, id);
  const added = Object.keys(next.loops).filter((id) => !before.loops[id]);
  const removed = Object.keys(before.loops).filter((id) => !next.loops[id]);
  const changed = Object.keys(next.loops).filter((id) => before.loops[id] && !unchanged(id));
  return { added, changed, removed };
}

/**
 * Reloads, one at a time and in order: an invalid file changes nothing but `ConfigValid`; a
 * valid one is written to the database first, then applied. A database that cannot take it
 * leaves everything as it was and the attempt is retried with backoff, unless a newer file
 * supersedes it.
 */
export class ReloadQueue {
  /** Reloads run one at a time, in order (a retry included). */
  private chain: Promise<unknown> = Promise.resolve();
  /** Number of the newest reload asked for: a retry of an older one is dropped. */
  private seq = 0;
  private retryTimer: TimerHandle | undefined;

  constructor(private readonly opts: ReloadQueueOptions) {}

  reload(loaded: ConfigResult): Promise<ReloadOutcome> {
    const seq = ++this.seq;
    // A newer file supersedes the retry of an older one.
    if (this.retryTimer) this.opts.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
    return this.enqueue(loaded, seq, 0);
  }

  /** Cancels a pending retry; resolves once the reload in progress (if any) has finished. */
  async stop(): Promise<void> {
    if (this.retryTimer) this.opts.clock.clearTimer(this.retryTimer);
    await this.chain;
  }

  private enqueue(loaded: ConfigResult, seq: number, failures: number): Promise<ReloadOutcome> {
    const run = this.chain.then(() => this.attempt(loaded, seq, failures));
    // One failed reload must not stop the later ones.
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * One reload attempt. The database is written first (one transaction): if it cannot take the
   * config (locked, full), nothing at all has changed — the loops run the previous config — and
   * the attempt is retried with backoff; a newer file supersedes it.
   */
  private async attempt(loaded: ConfigResult, seq: number, failures: number): Promise<ReloadOutcome> {
    const { target, logger } = this.opts;
    if (target.isStopped()) return { result: 'unchanged' };
    const nowMs = this.opts.clock.nowMs();
    if (!loaded.ok) {
      const message = `config file invalid, still running the last good one: ${loaded.errors.join('; ')}`;
      target.setConfigValidity(false, message, nowMs);
      logger.error({ errors: loaded.errors }, 'reload: config invalid, keeping the running one');
      return { result: 'invalid', errors: loaded.errors };
    }
    for (const warning of loaded.warnings) logger.warn(`reload: config: ${warning}`);
    let stored: StoredConfig;
    try {
      stored = target.storeConfig(loaded.config, loaded.text);
    } catch (error) {
      return this.failed(loaded, seq, failures, error, nowMs);
    }
    if (failures > 0) logger.info({ attempts: failures + 1 }, 'reload: the database took the config');
    return target.apply(loaded.config, loaded.text, stored, nowMs);
  }

  /** The database refused a reload: say so on every loop and retry it with backoff. */
  private failed(
    loaded: ConfigResult,
    seq: number,
    failures: number,
    error: unknown,
    nowMs: number,
  ): ReloadOutcome {
    const attempt = failures + 1;
    const retryInMs = backoffDelayMs(attempt, RELOAD_RETRY);
    const reason = error instanceof Error ? error.message : String(error);
    const message = `config file valid but not applied yet: the database could not store it (${reason}); still running the previous config, retrying`;
    this.opts.target.setConfigValidity(false, message, nowMs, 'NotApplied');
    // Once per streak: the store logs the storage failure itself.
    if (failures === 0) this.opts.logger.error({ err: error }, `reload: ${message}`);
    if (!this.opts.target.isStopped() && seq === this.seq) {
      this.retryTimer = this.opts.clock.setTimer(() => {
        this.retryTimer = undefined;
        if (seq === this.seq && !this.opts.target.isStopped()) void this.enqueue(loaded, seq, attempt);
      }, retryInMs);
    }
    return { result: 'failed', error: reason, retryInMs };
  }
}
