import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Drivers } from '../kinds/build.js';
import type { SafeStateEvent } from '../runtime/drive-safe.js';
import type { LoopLiveness } from '../systemd/watchdog.js';
import type { Clock } from '../time/clock.js';
import type { RunningLoop } from './loop-factory.js';
import { finalizeRemovedLoops } from './removal-finalizer.js';
import type { DaemonStore } from './store.js';

export interface LoopRemovalDeps {
  /** The running loops, by id: a removed loop is taken out of it. */
  loops: Map<string, RunningLoop>;
  store: DaemonStore;
  drivers: Drivers;
  clock: Clock;
  logger: Logger;
  liveness?: LoopLiveness | undefined;
  /** Records the one event of each drive to the safe state. */
  recordSafeEvent: (event: SafeStateEvent) => void;
}

/** Loops leaving the config: their runners stopped, their actuators safe, the removal recorded. */
export class LoopRemoval {
  constructor(private readonly deps: LoopRemovalDeps) {}

  /**
   * Runs the finalizer of every loop the store has pending removal (also those a crash
   * interrupted). `previous`: the config before a reload, which describes the removed loops'
   * actuators. A store that cannot say which are pending leaves them for the next reload or start.
   */
  async finalizePending(previous?: Config): Promise<void> {
    const { store, logger, clock, drivers } = this.deps;
    let pending: string[];
    try {
      pending = store.desired.pendingRemovals();
    } catch (error) {
      logger.error({ err: error }, 'removed loops cannot be read from the database now; finalized later');
      return;
    }
    for (const id of pending) await this.removeLoop(id);
    await finalizeRemovedLoops(store, pending, drivers, () => clock.nowMs(), logger, previous);
  }

  /**
   * Loops removed from the file that are still running (the store could not say which removals
   * are pending): stopped, with their actuators safe. The store's finalizer records the removal
   * when it can.
   */
  async stopRemoved(removed: string[]): Promise<void> {
    for (const id of removed) {
      const loop = this.deps.loops.get(id);
      if (!loop) continue;
      await this.removeLoop(id);
      await loop.cycle.driveSafe(`loop ${id} removed`, {
        recordEvent: (event) => this.deps.recordSafeEvent(event),
        eventKind: 'loop-removed-safe',
        eventSource: 'file',
      });
    }
  }

  /** Stops a running loop's runner (its finalizer drives the actuators safe). */
  private async removeLoop(id: string): Promise<void> {
    const loop = this.deps.loops.get(id);
    if (!loop) return;
    this.deps.loops.delete(id);
    this.deps.liveness?.removeLoop(id);
    await loop.runner.stop();
  }
}
