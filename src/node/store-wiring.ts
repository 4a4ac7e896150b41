/**
 * The node's database: its one-daemon lock, taken before anything else is opened or driven,
 * and the store supervisor, which never stops the start.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { currentOwner, DaemonLock, DatabaseLockedError, probeLock } from '../store/daemon-lock.js';
import { StoreSupervisor } from '../store/supervisor.js';
import type { Clock } from '../time/clock.js';
import { DatabaseInUseError } from './errors.js';

/**
 * Takes the database's lock (store/daemon-lock.ts); `storeOpen` tells the lock whether the
 * store still has the database open. Throws DatabaseInUseError when another daemon holds it.
 * Any other failure (a directory that cannot be created or written) is logged and the node
 * runs without the guard: the store then falls back to memory for the same reason, and
 * storage never stops regulation.
 */
export function lockDatabase(
  dbPath: string,
  nodeId: string,
  storeOpen: () => boolean,
  logger: Logger,
): DaemonLock | undefined {
  if (dbPath === ':memory:' || dbPath === '') return undefined;
  try {
    return DaemonLock.acquire(dbPath, currentOwner(nodeId), storeOpen);
  } catch (error) {
    if (error instanceof DatabaseLockedError) throw new DatabaseInUseError(error.message, { cause: error });
    // A lock file this user cannot write (a member of group homeostat running `homeostat run`
    // by hand beside the service) can still be read: a daemon holding it is refused all the same.
    const probe = probeLock(dbPath);
    if (probe.held) throw new DatabaseInUseError(probe.message, { cause: error });
    logger.warn(
      { err: error },
      `${(error as Error).message}; running without the one-daemon-per-database guard`,
    );
    return undefined;
  }
}

/**
 * Never stops the start: a file that cannot be opened (full disk, unwritable directory) is
 * replaced by an in-memory stand-in and retried; see StoreSupervisor.
 */
export function openStore(
  dbPath: string,
  clock: Clock,
  logger: Logger,
  retention: Config['storage'],
): StoreSupervisor {
  const store = new StoreSupervisor({
    path: dbPath,
    clock,
    logger: logger.child({ component: 'store' }),
    retention,
  });
  logger.info(
    { db: dbPath },
    `state in ${dbPath}${store.onStandIn ? ' (not open yet: regulating from memory)' : ''}`,
  );
  return store;
}
