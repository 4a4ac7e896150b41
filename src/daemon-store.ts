import type { Logger } from 'pino';
import { parseConfigText } from './config/load.js';
import { loopSectionHash } from './config/plan.js';
import type { Config } from './config/schema.js';
import { toLoopSpec } from './config/to-loop-spec.js';
import type { LoopMemory } from './core/loop-state.js';
import type { LoopStatus } from './core/status.js';
import { buildDrivers, type Drivers } from './drivers/build.js';
import { redactConfigText } from './redact.js';
import { driveSafe, type SafeTarget } from './runtime/drive-safe.js';
import type { CompletedCycle } from './runtime/loop-reconciler.js';
import type { DesiredStore } from './store/desired-store.js';
import type { StorageHealth } from './store/health.js';
import type { StateStore } from './store/state-store.js';
import type { RunningState } from './store/supervisor.js';

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
}

/**
 * Applies the config as desired state: the same text keeps its generation, a changed one gets
 * the next; runtime changes stay in force unless the file changed that field.
 */
export function applyConfig(store: DaemonStore, config: Config, text: string) {
  const loops = Object.fromEntries(
    Object.entries(config.loops).map(([id, loop]) => [
      id,
      { setpoint: loop.setpoint, mode: loop.mode, sectionHash: loopSectionHash(config, id) },
    ]),
  );
  // Kept redacted: a password in mqtt.url must not end up in the database (nor in its backups).
  return store.desired.applyConfig({ text: redactConfigText(text), loops });
}

/**
 * The newest stored config that still defines `loop` — the one whose drivers its finalizer
 * must use. Not simply the previous config: after a crash between applying a config and
 * finalizing, the latest stored config is already the one without the loop.
 */
export function lastConfigDefining(store: DaemonStore, loop: string, known?: Config): Config | undefined {
  // The config the daemon ran before a reload is in memory: no need to read the database.
  if (known?.loops[loop]) return known;
  for (const { text } of store.desired.configsNewestFirst()) {
    const parsed = parseConfigText(text);
    if (parsed.ok && parsed.config.loops[loop]) return parsed.config;
  }
  return undefined;
}

/**
 * The finalizer of loops removed from the config: drives their actuators to the safe state
 * (with the drivers of the last config that had them), records it, and forgets the loop.
 * Runs for loops removed now and for removals a crash interrupted earlier.
 */
export async function finalizeRemovedLoops(
  store: DaemonStore,
  removed: string[],
  current: Drivers,
  nowMs: () => number,
  logger: Logger,
  previousConfig?: Config,
): Promise<void> {
  for (const loop of removed) {
    let oldConfig: Config | undefined;
    try {
      oldConfig = lastConfigDefining(store, loop, previousConfig);
    } catch (error) {
      // The database cannot say: the removal stays pending, finalized at the next reload or start.
      logger.error(
        { err: error, loop },
        `loop ${loop} removed: its last config cannot be read now; will retry`,
      );
      continue;
    }
    if (!oldConfig) {
      logger.warn({ loop }, `loop ${loop} was removed, but no stored config describes its actuators`);
      markFinalized(store, loop, logger);
      continue;
    }
    const spec = toLoopSpec(oldConfig, loop);
    let oldDrivers: Drivers | undefined;
    const targets: SafeTarget[] = [];
    for (const actuator of [spec.raise, spec.lower]) {
      if (!actuator) continue;
      let driver = current.actuators.get(actuator.id);
      if (!driver) {
        // Gone from the running config: the last config that had it says how to reach it.
        try {
          oldDrivers ??= buildDrivers(oldConfig, nowMs, { mqtt: current.mqtt });
          driver = oldDrivers.actuators.get(actuator.id);
          await driver?.start?.();
        } catch (error) {
          logger.error({ err: error, loop, actuator: actuator.id }, `finalizer: ${actuator.id}: no driver`);
          driver = undefined; // reported by driveSafe as not confirmed safe
        }
      }
      targets.push({ id: actuator.id, safeLevel: actuator.safeLevel, driver });
    }
    // All at once, one log line per actuator, one 'loop-removed-safe' event (runtime/drive-safe.ts).
    await driveSafe(targets, {
      reason: `loop ${loop} removed`,
      logger,
      loop,
      recordEvent: (event) => store.desired.recordEvent(event),
      eventKind: 'loop-removed-safe',
      eventSource: 'file',
    });
    for (const driver of oldDrivers?.actuators.values() ?? []) await driver.stop?.();
    markFinalized(store, loop, logger);
  }
}

/**
 * Forgets a finalized loop in the store. A storage failure leaves the removal pending: the
 * finalizer runs again at the next reload or start (driving safe again is harmless).
 */
function markFinalized(store: DaemonStore, loop: string, logger: Logger): void {
  try {
    store.desired.markRemovalFinalized(loop);
  } catch (error) {
    logger.error(
      { err: error, loop },
      `loop ${loop} finalized, but the database could not record it; will retry`,
    );
  }
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

/**
 * Persists what a cycle did: latest memory and status, a history sample per new reading, and
 * an event per actuator command (other than keep-alives) and per fault raised or cleared.
 * All buffered: written at the next flush.
 */
export class CycleRecorder {
  private readonly lastSampleAtMs = new Map<string, number>();
  private readonly lastFaulted = new Map<string, string>();
  private readonly lastLevel = new Map<string, number>();

  constructor(private readonly store: DaemonStore) {}

  record(cycle: CompletedCycle): void {
    const { loop, nowMs, reading, status } = cycle;
    const { state } = this.store;
    state.saveState(loop, cycle.memory, status, nowMs);
    if (reading && this.lastSampleAtMs.get(loop) !== reading.atMs) {
      this.lastSampleAtMs.set(loop, reading.atMs);
      state.addSample(loop, {
        atMs: reading.atMs,
        setpoint: status.setpoint,
        measured: status.measured,
        output: status.output,
        action: status.action,
      });
    }
    for (const command of cycle.commands) {
      // Switches, drift and safe states, not every move of a continuous level nor keep-alives:
      // each event costs SD-card writes.
      const worthAnEvent =
        command.reason === 'drift' ||
        command.reason === 'safe-state' ||
        (command.reason !== 'keep-alive' && isSwitch(command.level, this.lastLevel.get(command.actuatorId)));
      if (!worthAnEvent) {
        this.lastLevel.set(command.actuatorId, command.level);
        continue;
      }
      this.lastLevel.set(command.actuatorId, command.level);
      state.addEvent({
        atMs: nowMs,
        loop,
        kind: 'actuator',
        source: command.reason,
        message: `${command.actuatorId} → ${command.level} (${command.reason}: ${command.detail})`,
      });
    }
    const faulted = status.conditions.find((c) => c.type === 'Faulted');
    if (faulted) {
      const key = `${faulted.status}:${faulted.reason}`;
      const before = this.lastFaulted.get(loop);
      if (before !== undefined && before !== key) {
        state.addEvent({
          atMs: nowMs,
          loop,
          kind: faulted.status === 'True' ? 'fault-raised' : 'fault-cleared',
          message: faulted.status === 'True' ? `${faulted.reason}: ${faulted.message}` : 'fault cleared',
        });
      }
      this.lastFaulted.set(loop, key);
    }
  }
}

/** A command worth an event: on ↔ off (0 ↔ above 0), or the first one seen. */
function isSwitch(level: number, before: number | undefined): boolean {
  return before === undefined || before > 0 !== level > 0;
}
