/**
 * The daemon's store for unit tests: homeostat's real schema in an in-memory SQLite database
 * (the one the store supervisor regulates on while its file cannot be opened), so a Daemon
 * built in a test reads desired state from a store as in production. Not a test file itself.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, type SuiteContext } from 'node:test';
import type Database from 'better-sqlite3';
import type { Config } from '../../src/config/schema.js';
import { Daemon } from '../../src/daemon/daemon.js';
import type { DaemonStore } from '../../src/daemon/store.js';
import type { Drivers } from '../../src/kinds/build.js';
import { openStandIn, openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { EventFeed } from '../../src/store/event-feed.js';
import { StateStore } from '../../src/store/state-store.js';
import type { Clock } from '../../src/time/clock.js';
import { silentLogger } from './logger.js';
import { type HasAfter, makeTempDir } from './tmp.js';

export interface MemoryStore extends DaemonStore {
  database: Database.Database;
  events: EventFeed;
  close(): void;
}

/**
 * A fresh in-memory store stamped by `clock` (the test's clock), with an event feed both stores
 * announce on, as the store supervisor's.
 */
export function memoryStore(clock: Pick<Clock, 'nowMs'>): MemoryStore {
  const database = openStandIn(silentLogger);
  const events = new EventFeed();
  const state = new StateStore(database, undefined, { feed: events });
  return {
    database,
    events,
    desired: new DesiredStore(database, () => clock.nowMs(), { feed: events }),
    state,
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

/**
 * The store file `homeostat.db` in a new temp dir, opened as the daemon opens it (migrated,
 * silent, stamped by `nowMs`); closed and its dir removed after the test. Call it from the
 * test, or from `beforeEach((t) => …)`.
 */
export function tempStoreFile(
  t: HasAfter | SuiteContext,
  nowMs: () => number,
): { db: Database.Database; dir: string; path: string } {
  // beforeEach's context is typed as either; at run time it is the test's.
  assert.ok('after' in t, 'tempStoreFile: call it from a test or a beforeEach hook');
  const { dir, remove } = makeTempDir();
  const path = join(dir, 'homeostat.db');
  const db = openStore({ path, logger: silentLogger, nowMs }).db;
  t.after(() => {
    db.close();
    remove();
  });
  return { db, dir, path };
}

/**
 * A DesiredStore on a store file, as a restart sees it: `reopen()` closes the database and opens
 * the file again with a new DesiredStore. Both are stamped by `nowMs`, the test's clock (starts
 * at 1,000,000 ms each test; a test moves it).
 */
export interface DesiredStoreFile {
  nowMs: number;
  /** The temp dir holding the file (other files a test makes go here too). */
  dir: string;
  /** `<dir>/homeostat.db`. */
  path: string;
  db: Database.Database;
  store: DesiredStore;
  reopen(): void;
}

/**
 * For each test of the file: a new temp dir (`<prefix>…`) and a {@link DesiredStoreFile} opened
 * in it before the test, closed and removed after. The fields are the current test's.
 */
export function desiredStoreFileEachTest(prefix?: string): DesiredStoreFile {
  let remove = () => {};
  const file: DesiredStoreFile = {
    nowMs: 0,
    dir: '',
    path: '',
    db: undefined as unknown as Database.Database,
    store: undefined as unknown as DesiredStore,
    reopen() {
      file.db?.close();
      file.db = openStore({ path: file.path, logger: silentLogger, nowMs: () => file.nowMs }).db;
      file.store = new DesiredStore(file.db, () => file.nowMs);
    },
  };
  beforeEach(() => {
    const temp = makeTempDir(prefix);
    remove = temp.remove;
    file.dir = temp.dir;
    file.path = join(temp.dir, 'homeostat.db');
    file.nowMs = 1_000_000;
    file.db = undefined as unknown as Database.Database;
    file.reopen();
  });
  afterEach(() => {
    file.db.close();
    remove();
  });
  return file;
}
