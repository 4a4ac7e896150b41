import type { Logger } from 'pino';
import type { DesiredStore } from '../store/desired-store.js';
import type { Clock } from '../time/clock.js';
import type { CommandKind } from './commands.js';
import { RejectedCommandLog } from './rejection-log.js';
import type { StorageGuard } from './storage-guard.js';

/**
 * The log of rejected commands (of every source), written as events through the storage guard
 * and as warnings in the daemon's log, coalesced alike (RejectedCommandLog): the first
 * rejection of a kind at once, a flood as one count per kind and minute.
 */
export function rejectedCommandLog(
  opts: { clock: Clock; desired: Pick<DesiredStore, 'recordEvent'>; logger: Logger },
  storage: StorageGuard,
): RejectedCommandLog {
  return new RejectedCommandLog({
    clock: opts.clock,
    record: (event) => {
      opts.logger.warn(
        { ...(event.loop === undefined ? {} : { loop: event.loop }), source: event.source },
        rejectionLogLine(event.source, event.message),
      );
      // A recorded event is no proof that the file takes writes again (the store supervisor
      // defers one it cannot write to its next flush): a failure joins the streak of failed
      // writes, a success does not end it (on a full disk it would log the failure again each
      // rejection window).
      try {
        opts.desired.recordEvent(event);
      } catch (error) {
        storage.attempt('write', 'record a rejected command', () => {
          throw error;
        });
      }
    },
  });
}

/**
 * A rejection as a log line, its source first: `mqtt setpoint rejected: setpoint 99 is outside
 * the limits 5..30`, `mqtt command rejected: unknown loop "x"`.
 */
export function rejectionLogLine(source: string, message: string): string {
  return /\brejected\b/.test(message) ? `${source} ${message}` : `${source} command rejected: ${message}`;
}

/** How a command is named in rejection events and trigger reasons ("mqtt setpoint"). */
export function kindName(kind: CommandKind): string {
  const names: Record<CommandKind, string> = {
    setpoint: 'setpoint',
    mode: 'mode',
    json: 'set',
    faultReset: 'fault reset',
    autotune: 'autotune',
    tuning: 'tuning',
    preset: 'preset',
    profile: 'profile',
  };
  return names[kind];
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function pickRequestId(outcome: { requestId?: string }): { requestId?: string } {
  return outcome.requestId === undefined ? {} : { requestId: outcome.requestId };
}
