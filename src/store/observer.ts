/**
 * What the stores tell about the database under them: every operation's outcome. The store
 * supervisor (src/store/supervisor.ts) listens, to show the database's health on every loop and
 * to recover a damaged file; a store used on its own (the CLI, tests) has no observer.
 */
export interface StoreObserver {
  /** A read or write went through. */
  succeeded(operation: string): void;
  /** A read or write threw `error` (a SQLite error, or a validation error the observer ignores). */
  failed(operation: string, error: unknown): void;
}

/** Runs one store operation and tells `observer` how it went; rethrows. */
export function observed<T>(observer: StoreObserver | undefined, operation: string, run: () => T): T {
  let result: T;
  try {
    result = run();
  } catch (error) {
    observer?.failed(operation, error);
    throw error;
  }
  observer?.succeeded(operation);
  return result;
}
