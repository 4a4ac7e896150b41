import type { Logger } from 'pino';
import type { ChangeSource } from '../store/desired-records.js';
import type { DesiredStore } from '../store/desired-store.js';
import type { Clock } from '../time/clock.js';
import type { ChangeLimit } from './change-limiter.js';
import type { CommandKind, CommandOutcome } from './commands.js';
import type { LoopControl } from './loop-control.js';
import type { RejectedCommandLog } from './rejection-log.js';
import type { StorageGuard } from './storage-guard.js';

/** The shapes of the command path (DesiredCommands, desired-commands.ts). */

/** Where a command came from: recorded in the desired store, its events and rejection events. */
export type CommandSource = Extract<ChangeSource, 'mqtt' | 'http'>;

/** One command as a transport received it (the MQTT payload, or the HTTP body). */
export interface CommandRequest {
  loop: string;
  kind: CommandKind;
  payload: Uint8Array;
  source: CommandSource;
  /** Clock time of receipt: a fault reset clears only faults latched before it. */
  receivedAtMs: number;
}

/** Why a command was refused, for a transport that answers with codes (HTTP 404/422/429/503/422). */
export type CommandRefusal = 'unknown-loop' | 'invalid' | 'rate-limited' | 'not-stored' | 'nothing-latched';

/** What a command got; the transport publishes or returns it. */
export interface CommandAnswer {
  /** The loop exists in the current config (own keys only: `__proto__` is unknown). */
  known: boolean;
  /** Accepted with the change, or refused with a reason a person can act on (requestId kept). */
  outcome: CommandOutcome;
  /** The loop's generation after the command (unchanged for a refusal); undefined when the store cannot say. */
  generation?: number;
  /** Why it was refused (absent when accepted). */
  refusal?: CommandRefusal;
  /**
   * Tuning, preset and profile commands: whether the desired state changed (false: it already
   * was what was asked for, e.g. a QoS 1 duplicate). Absent for the other commands.
   */
  changed?: boolean;
}

export type AnswerListener = (request: CommandRequest, answer: CommandAnswer) => void;

export interface DesiredCommandsOptions {
  /** The daemon, as far as commands read and drive it. */
  control: LoopControl;
  /** Where accepted commands are stored (committed before they are answered). */
  desired: DesiredStore;
  clock: Clock;
  /**
   * Times the guards against people and networks (the change limit, the rejection log's
   * coalescing window): real time even when `clock` is scaled (`--speed`), so a flood is limited
   * as much in the simulation as on a real node. Default: `clock`.
   */
  guardClock?: Clock;
  logger: Logger;
  /** Changes of desired state a loop accepts, all sources together; default 10 at once, 30 per minute. */
  changeLimit?: ChangeLimit;
}

export interface DesiredCommandsDeps {
  /** The guard of every store call (default: a new one on the logger). */
  storage?: StorageGuard;
  /** Where rejections are noted (default: a new log writing events through `storage`, stopped by stop()). */
  rejections?: RejectedCommandLog;
}
