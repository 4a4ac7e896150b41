import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { LatchedFault } from '../core/effect-watch.js';
import type { Clock } from '../time/clock.js';
import type { RunningLoop } from './loop-factory.js';
import { applyConfig, type DaemonStore } from './store.js';

export interface StoreSupervisionDeps {
  store: DaemonStore;
  clock: Clock;
  logger: Logger;
  /** The running config and its file's text (they change on reload: read at every use). */
  running: () => { config: Config; configText: string };
  /** The running loops, by id. */
  loops: ReadonlyMap<string, RunningLoop>;
}

/**
 * With a supervised store: every loop shows the database's health (StorageHealthy), and a
 * fresh or reopened database is given the running config and the loops' memory.
 */
export function superviseStore({ store, clock, logger, running, loops }: StoreSupervisionDeps): void {
  store.attach?.({
    applyConfig: (target) => {
      const { config, configText } = running();
      return applyConfig({ ...store, desired: target }, config, configText);
    },
    loops: () =>
      [...loops.values()].map((loop) => ({
        loop: loop.id,
        memory: loop.cycle.loopMemory,
        status: loop.cycle.status,
        atMs: clock.nowMs(),
      })),
    adoptLatchedFault: (id, fault) => {
      const loop = loops.get(id);
      if (!loop?.cycle.adoptLatchedFault(fault as LatchedFault)) return;
      logger.warn({ loop: id, fault }, `${id}: latched fault found in the database; holding the loop safe`);
      loop.runner.trigger('latched fault');
    },
  });
  store.onHealthChange?.((health) => {
    const nowMs = clock.nowMs();
    for (const loop of loops.values()) {
      loop.cycle.setStorageHealth(health, nowMs);
      // A recovered database may have renumbered generations: the loops pick them up now.
      if (health.healthy) loop.runner.trigger('storage');
    }
  });
}
