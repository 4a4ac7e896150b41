import type { Logger } from 'pino';
import { fileGains, loopSectionHash } from '../config/plan.js';
import type { Config } from '../config/schema.js';
import type { LoopMemory } from '../core/loop-state.js';
import type { LoopStatus } from '../core/status.js';
import { redactConfigText } from '../redact.js';
import type { DesiredStore } from '../store/desired-store.js';
import type { EventFeed } from '../store/event-feed.js';
import type { StorageHealth } from '../store/health.js';
import type { StateStore } from '../store/state-store.js';
import type { RunningState } from '../store/supervisor.js';

/**
 * The store as the daemon uses it: desired state (committed at once) and batched state. The
 * optional members are the store supervisor's (src/store/supervisor.ts): with them the daemon
 * shows the database's health on every loop and tells what a new database must be given.
 */
export interface DaemonStore {
  desired: DesiredStore;
  state: StateStore;
  /** Applies history retention (downsampling, deletion, events cap); called at start and hourly. */
  prune?: (nowMs: number) => void;
  /** The database's health: shown as the StorageHealthy condition of every loop. */
  health?(): StorageHealth;
  onHealthChange?(listener: (health: StorageHealth) => void): void;
  /** What a fresh or reopened database must be given (the running config, the loops' memory). */
  attach?(running: RunningState): void;
  /** After each flush: reads desired state back to find damage the control path never meets. */
  check?(): void;
  /** The file cannot take the config at start: regulate on an in-memory stand-in, retry it later. */
  fallBackToStandIn?(error: unknown): void;
  /**
   * Every event both stores record, told once it counts (committed, or queued for a flush):
   * the HTTP API's live stream. The same feed whatever database the stores move to.
   */
  events?: EventFeed;
  /** Store operations the database refused since start (for metrics; see StoreSupervisor). */
  readonly failedOperations?: number;
}

/**
 * Applies the config as desired state: the same text keeps its generation, a changed one gets
 * the next; runtime changes (setpoint, mode, a tuning in force) stay in force unless the file
 * changed that field (for a tuning: the PID's kp, tiS or tdS).
 */
export function applyConfig(store: DaemonStore, config: Config, text: string) {
  const loops = Object.fromEntries(
    Object.entries(config.loops).map(([id, loop]) => [
      id,
      {
        setpoint: loop.setpoint,
        mode: loop.mode,
        sectionHash: loopSectionHash(config, id),
        // A file that changes a PID's gains sets an applied tuning aside (newer intent wins).
        ...(loop.controller.type === 'pid' ? { gains: fileGains(loop.controller) } : {}),
      },
    ]),
  );
  // Kept redacted: a password in mqtt.url must not end up in the database (nor in its backups).
  return store.desired.applyConfig({ text: redactConfigText(text), loops });
}

/** Stored memory and status of a loop, if they look like this version's (else a fresh start). */
export function storedLoopState(
  store: DaemonStore,
  loop: string,
  logger: Logger,
): { memory?: LoopMemory; status?: LoopStatus } {
  let stored: ReturnType<StateStore['load']>;
  try {
    stored = store.state.load(loop);
  } catch (error) {
    // A fresh start is safe: the first cycle observes the actuators before acting.
    logger.error({ err: error, loop }, `stored memory of ${loop} cannot be read: starting it fresh`);
    return {};
  }
  if (!stored) return {};
  const memory = stored.memory as Partial<LoopMemory> | undefined;
  const looksRight =
    memory !== undefined &&
    typeof memory === 'object' &&
    typeof memory.pid?.integral === 'number' &&
    typeof memory.relays === 'object' &&
    typeof memory.commands === 'object';
  if (!looksRight) {
    logger.warn({ loop }, `stored memory of ${loop} is not usable: starting it fresh`);
    return stored.status ? { status: stored.status } : {};
  }
  return { memory: memory as LoopMemory, ...(stored.status ? { status: stored.status } : {}) };
}
