/**
 * The daemon's store for unit tests: homeostat's real schema in an in-memory SQLite database
 * (the one the store supervisor regulates on while its file cannot be opened), so a Daemon
 * built in a test reads desired state from a store as in production. Not a test file itself.
 */
import type Database from 'better-sqlite3';
import type { Config } from '../../src/config/schema.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { DaemonStore } from '../../src/daemon/store.js';
import type { Drivers } from '../../src/kinds/build.js';
import type { Clock } from '../../src/runtime/clock.js';
import { openStandIn } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';
import { silentLogger } from './logger.js';

export interface MemoryStore extends DaemonStore {
  database: Database.Database;
  close(): void;
}

/** A fresh in-memory store stamped by `clock` (the test's clock). */
export function memoryStore(clock: Pick<Clock, 'nowMs'>): MemoryStore {
  const database = openStandIn(silentLogger);
  return {
    database,
    desired: new DesiredStore(database, () => clock.nowMs()),
    state: new StateStore(database),
    close: () => database.close(),
  };
}

/**
 * The store options of a Daemon built in a unit test: an in-memory store on `clock`, and the
 * config's text (it decides the generation and is stored; a test that never reloads may leave
 * the placeholder).
 */
export function inMemoryStore(
  clock: Pick<Clock, 'nowMs'>,
  configText = '# config built by the test\n',
): { store: MemoryStore; configText: string } {
  return { store: memoryStore(clock), configText };
}

/** A Daemon on `drivers` with an in-memory store and no status lines, as unit tests build it. */
export function memoryDaemon(config: Config, drivers: Drivers, clock: Clock, configText?: string): Daemon {
  return new Daemon({
    config,
    clock,
    logger: silentLogger,
    drivers,
    statusEveryMs: 0,
    ...inMemoryStore(clock, configText),
  });
}
