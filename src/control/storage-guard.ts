import type { Logger } from 'pino';

/** Reads and writes fail separately (a full disk still reads; a damaged page may still write). */
export type StorageAccess = 'read' | 'write';

export type Attempt<T> = { ok: true; value: T } | { ok: false; error: Error };

/**
 * Runs the store calls of the command path (MQTT and HTTP) and of the MQTT bridge so that a
 * failing store (full disk, locked or damaged file) never stops a command from being answered,
 * and is logged once per streak: the first failure of reads (or of writes) at error, the
 * following ones at debug, and the first success after a streak at info. A flood of commands
 * on a full disk used to log one error per command.
 */
export class StorageGuard {
  private readonly streaks: Record<StorageAccess, number> = { read: 0, write: 0 };

  constructor(private readonly logger: Logger) {}

  /** `fn` run once; a throw is logged (see the class comment) and returned, never rethrown. */
  attempt<T>(access: StorageAccess, what: string, fn: () => T): Attempt<T> {
    try {
      const value = fn();
      const failures = this.streaks[access];
      if (failures > 0) {
        this.streaks[access] = 0;
        this.logger.info({ failures }, `storage ${access}s work again (${failures} failed meanwhile)`);
      }
      return { ok: true, value };
    } catch (caught) {
      const error = caught instanceof Error ? caught : new Error(String(caught));
      const code = (caught as { code?: unknown }).code;
      const fields = { err: error.message, ...(typeof code === 'string' ? { code } : {}), what };
      this.streaks[access] += 1;
      if (this.streaks[access] === 1) {
        this.logger.error(
          fields,
          `storage ${access} failed (${what}): ${error.message}; commands are still answered, and further storage ${access} errors are logged at debug until one succeeds`,
        );
      } else {
        this.logger.debug(fields, `storage ${access} failed (${what})`);
      }
      return { ok: false, error };
    }
  }
}
