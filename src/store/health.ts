import path from 'node:path';
import { errorCode } from './database.js';

/**
 * The database's health as the daemon shows it: the `StorageHealthy` condition on every loop.
 * Reasons are the kinds of failure a person fixes differently.
 */
export type StorageProblem = 'Corrupt' | 'Full' | 'Locked' | 'Unwritable' | 'Failed';

export interface StorageHealth {
  healthy: boolean;
  reason: 'Healthy' | StorageProblem;
  /** What is wrong and what to do, or what homeostat is doing about it. */
  message: string;
}

export const HEALTHY: StorageHealth = { healthy: true, reason: 'Healthy', message: 'database writable' };

/**
 * What kind of storage failure `error` is; undefined when it is not one (a validation error
 * such as an unknown loop). Errors wrapped by openStore are judged by their cause.
 */
export function classifyStorageError(error: unknown): StorageProblem | undefined {
  const code = errorCode(error) ?? errorCode(error instanceof Error ? error.cause : undefined);
  if (code === undefined) return undefined;
  if (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB')) return 'Corrupt';
  // SQLite cannot grow its -shm on a full disk: SQLITE_IOERR_SHMSIZE (seen on a full tmpfs).
  if (['SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE', 'ENOSPC', 'EDQUOT'].includes(code)) return 'Full';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'Locked';
  if (
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    ['SQLITE_PERM', 'SQLITE_AUTH', 'EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST'].includes(code)
  )
    return 'Unwritable';
  // System errors (EIO, ENOMEM…), not Node's own ERR_* codes (a defect, not the disk).
  if (code.startsWith('SQLITE_') || /^E[A-Z]+$/.test(code)) return 'Failed';
  return undefined;
}

/** A message a person can act on, for the condition and the log. */
export function describeProblem(problem: StorageProblem, dbPath: string, error: unknown): string {
  const dir = path.dirname(dbPath);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const detail = cause instanceof Error ? cause.message : String(cause);
  const code = errorCode(cause);
  const what = `${detail}${code ? ` (${code})` : ''}`;
  switch (problem) {
    case 'Corrupt':
      return `database ${dbPath} is damaged (${what}): moved aside, a fresh one takes over with the desired state kept in memory`;
    case 'Full':
      return `disk full: free space on the filesystem holding ${dir} (${what}); regulating on, writes retried`;
    case 'Locked':
      return (
        `database ${dbPath} is locked by another process (${what}): is a second homeostat daemon, or ` +
        'a tool such as sqlite3, writing to it? Regulating on, writes retried'
      );
    case 'Unwritable':
      return (
        `cannot write ${dbPath} (${what}): make ${dir} and ${dbPath} writable by the user running ` +
        'homeostat (with systemd: StateDirectory=homeostat), or choose another path with --db; regulating on, retrying'
      );
    case 'Failed':
      return `database ${dbPath} failed (${what}): check the disk; regulating on, retrying`;
  }
}

/**
 * The error a refused change of desired state throws (the MQTT bridge and the HTTP API answer
 * the command with its message): what failed, that nothing changed, and what to do. Errors
 * that are not storage failures (an unknown loop…) are returned as they are.
 */
export function refusedChange(error: unknown, dbPath: string): unknown {
  const problem = classifyStorageError(error);
  if (problem === undefined || problem === 'Corrupt') return error;
  const code = errorCode(error);
  const why: Record<Exclude<StorageProblem, 'Corrupt'>, string> = {
    Locked: 'the database is locked by another process',
    Full: `disk full: free space on the filesystem holding ${path.dirname(dbPath)}`,
    Unwritable: `the database ${dbPath} is not writable`,
    Failed: `the database ${dbPath} failed to write`,
  };
  return Object.assign(
    new Error(
      `${why[problem]} (${code}); the change was not stored and changed nothing: send it again later`,
      {
        cause: error,
      },
    ),
    { code },
  );
}
