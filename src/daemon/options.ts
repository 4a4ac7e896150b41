import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { LoopStatus } from '../core/status.js';
import type { Drivers } from '../kinds/build.js';
import type { LoopLiveness } from '../systemd/watchdog.js';
import type { Clock } from '../time/clock.js';
import type { DaemonStore } from './store.js';

export interface DaemonOptions {
  config: Config;
  clock: Clock;
  logger: Logger;
  /** Drivers to use; default built from the config (tests pass their own). */
  drivers?: Drivers;
  /** A cycle runs at least this often even when nothing happens, ms. Default 30 000. */
  resyncMs?: number;
  /** Each loop's status is looked at this often (clock time), ms, and gets a line when it changed meaningfully (hourly otherwise; src/daemon/timers.ts); 0 disables. Default 300 000. */
  statusEveryMs?: number;
  /**
   * Where desired state, memory and history live: the store supervisor in production, an
   * in-memory SQLite store in unit tests (test/support/store.ts). Desired state is read from it
   * every cycle.
   */
  store: DaemonStore;
  /** The config file's text: its hash decides the generation. */
  configText: string;
  /** Batched state is written this often, ms. Default storage.memoryFlushS of the config. */
  flushEveryMs?: number;
  /**
   * Told when loops are added and removed and after each successful cycle (the systemd
   * watchdog gate). A loop must succeed at least every 3 × `resyncMs`.
   */
  liveness?: LoopLiveness;
}

/**
 * What the daemon tells whoever subscribed (the MQTT bridge, tests that record statuses).
 * Subscribers are added after construction: the bridge is built on the running daemon (its
 * control port), so neither needs a lazy reference to the other.
 */
export interface DaemonEvents {
  /** Every loop status, after each cycle. */
  status?(status: LoopStatus): void;
  /** How long a loop's cycle took, real time ms (failed cycles too): the metrics' histogram. */
  cycleDuration?(loop: string, durationMs: number): void;
  /** After a reload applied a config (MQTT reconciles discovery and clears removed loops). */
  configApplied?(config: Config, removedLoops: string[]): void;
}
