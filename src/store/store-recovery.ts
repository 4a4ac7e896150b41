import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { moveAside, openStore } from './database.js';
import { describeProblem, type StorageProblem } from './health.js';
import type { HandoverEvent } from './store-handover.js';

/**
 * StoreSupervisor's recovery paths, the parts that need none of its state: replacing a file
 * found damaged while running, and what the new database records and the log says when a
 * fresh or reopened file takes over.
 */

/** Where the daemon's file is, and how a replacement is opened and logged. */
export interface RecoveryTarget {
  path: string;
  logger: Logger;
  nowMs: () => number;
}

/** Why the file cannot be used, for the health condition and the log, while on the stand-in. */
export function standInMessage(problem: StorageProblem, path: string, error: unknown): string {
  return `${describeProblem(problem, path, error)}; running on an in-memory stand-in until it opens`;
}

/**
 * Moves the damaged file aside and opens a fresh one at its path: as at start-up, the files are
 * renamed while the damaged connection is still open (see openStore). Throws what the move or
 * the open threw.
 */
export function replaceDamaged(target: RecoveryTarget): { db: Database.Database; movedTo: string } {
  const movedTo = moveAside(target.path, 'corrupt', target.nowMs());
  const { db } = openStore({ path: target.path, logger: target.logger, nowMs: target.nowMs });
  return { db, movedTo };
}

/** What a fresh file after damage records, with the damage's `reason`. */
export function damagedEvent(reason: string, movedTo: string): HandoverEvent {
  return {
    kind: 'database-recovered',
    message: `database damaged while running (${reason}): moved to ${movedTo}; a fresh one took over with the desired state kept in memory`,
    data: { movedTo },
  };
}

/** Logs that a fresh file took over from one damaged while running. */
export function logDamageRecovered(target: RecoveryTarget, movedTo: string, reason: string): void {
  const { path, logger } = target;
  logger.error(
    { db: path, movedTo, reason },
    `database ${path} was damaged (${reason}); moved it to ${movedTo} and started a fresh one ` +
      'with the running config, the desired state and the loops’ memory; history before now is in the moved file',
  );
}

/**
 * What the file records once it opened (at start, or after the stand-in): recovered at the open (unreadable,
 * moved aside for a fresh one), or simply opened.
 */
export function openedEvent(
  path: string,
  recovered: { movedTo: string; reason: string } | undefined,
): HandoverEvent {
  return recovered
    ? {
        kind: 'database-recovered',
        message: `unreadable database moved to ${recovered.movedTo} (${recovered.reason}); started a fresh one`,
      }
    : {
        kind: 'database-opened',
        message: `database ${path} opened; state kept in memory carried over`,
      };
}
