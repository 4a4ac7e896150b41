import { allowedModes } from '../config/schema.js';
import type { DesiredStore } from '../store/desired-store.js';
import type { MqttBridgeOptions } from './bridge-options.js';
import type { BridgePublisher } from './bridge-publish.js';
import { ChangeLimiter, DEFAULT_CHANGE_LIMIT } from './change-limiter.js';
import { type CommandChange, type CommandOutcome, type FaultResetOutcome, parseCommand } from './commands.js';
import { DEFAULT_REJECTION_WINDOW_MS, RejectedCommandLog } from './rejection-log.js';
import type { StorageGuard } from './storage-guard.js';
import type { CommandKind } from './topics.js';

/** Rejected commands of one kind make one event per this window, ms (with a count). */
export const REJECTION_WINDOW_MS = DEFAULT_REJECTION_WINDOW_MS;
/** Changes a loop accepts at once (see ChangeLimiter). */
export const CHANGE_BURST = DEFAULT_CHANGE_LIMIT.burst;
/**
 * After clearing a retained command we ignore the empty message the broker forwards back to
 * us on that topic for this long, clock ms: it is our own clearing, not an empty `fault/reset`.
 */
const CLEAR_ECHO_MS = 30_000;

/** The result of a command that arrived with the retain flag. */
export const RETAINED_REASON =
  'retained command refused: send commands without the retain flag (a retained command is replayed at every restart); the retained message was cleared';

/** A received command waiting in the queue. */
export interface ReceivedCommand {
  topic: string;
  payload: Buffer;
  /** Delivered from the broker's retained store (a replay), not sent now. */
  retain: boolean;
  /** Clock time of receipt: a fault reset clears only faults latched before it. */
  receivedAtMs: number;
}

/** Who a command's result goes to, and what its rejection event says. */
interface Reply {
  loop: string;
  kind: CommandKind;
  /** The loop is in the config (an unknown one gets no generation and a loop-less event). */
  known: boolean;
  atIso: string;
}

type Accepted = Extract<CommandOutcome, { accepted: true }>;
type Refused = Extract<CommandOutcome, { accepted: false }>;
type DesiredRow = ReturnType<DesiredStore['desired']>;

type CommandOptions = Pick<
  MqttBridgeOptions,
  'topics' | 'control' | 'desired' | 'clock' | 'logger' | 'changeLimit'
>;

interface CommandDeps {
  storage: StorageGuard;
  rejections: RejectedCommandLog;
  output: BridgePublisher;
}

/** The log of rejected commands, written as events through the storage guard. */
export function rejectedCommandLog(
  opts: Pick<MqttBridgeOptions, 'clock' | 'desired'>,
  storage: StorageGuard,
): RejectedCommandLog {
  return new RejectedCommandLog({
    clock: opts.clock,
    record: (event) => {
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
 * The command path: one command validated, stored (committed) before its result is published,
 * never clamped. Every command gets a result, whatever happens to the store.
 */
export class CommandHandler {
  private readonly changes: ChangeLimiter;
  /** Command topics whose retained message we cleared → until when its empty echo is ignored. */
  private readonly clearedTopics = new Map<string, number>();

  constructor(
    private readonly opts: CommandOptions,
    private readonly deps: CommandDeps,
  ) {
    this.changes = new ChangeLimiter(opts.changeLimit ?? DEFAULT_CHANGE_LIMIT);
  }

  /** Forgets the change budget of loops that are gone (after a reload). */
  retainLoops(loops: readonly string[]): void {
    this.changes.retain(loops);
  }

  /**
   * One command. Refused: commands that arrive with the retain flag (a replay from the
   * broker's retained store, not something someone sends now), unknown loops (own keys only:
   * `__proto__` or `constructor` are unknown), invalid payloads, and changes beyond the loop's
   * rate (ChangeLimiter).
   */
  handle({ topic, payload, retain, receivedAtMs }: ReceivedCommand): void {
    const command = this.opts.topics.parseCommandTopic(topic);
    if (!command) return;
    const { loop, kind } = command;
    const nowMs = this.opts.clock.nowMs();
    if (payload.byteLength === 0 && this.isOwnClearing(topic, nowMs)) return;
    const atIso = new Date(nowMs).toISOString();
    const config = this.opts.control.currentConfig();
    const loopConfig = Object.hasOwn(config.loops, loop) ? config.loops[loop] : undefined;
    const reply: Reply = { loop, kind, known: loopConfig !== undefined, atIso };

    if (!loopConfig) {
      this.refuse(reply, { accepted: false, reason: `unknown loop "${loop}"` });
      return;
    }
    if (retain) {
      this.clearRetained(topic, nowMs);
      this.refuse(reply, { accepted: false, reason: RETAINED_REASON });
      return;
    }
    const outcome = parseCommand(kind, payload, {
      limits: loopConfig.limits,
      modes: allowedModes(loopConfig),
      step: loopConfig.step,
    });
    if (!outcome.accepted) this.refuse(reply, outcome);
    else if (outcome.change.faultReset) this.resetFault(reply, outcome, receivedAtMs);
    else this.applyChange(reply, outcome, nowMs);
  }

  /**
   * A valid fault reset: committed by the daemon as desired state (with its event and
   * generation) before it is answered; refused with why, changing nothing, when nothing is
   * latched or the database did not take it. Then the loop runs a cycle, which applies it.
   */
  private resetFault(reply: Reply, outcome: Accepted, receivedAtMs: number): void {
    const { loop, kind, atIso } = reply;
    let reset: FaultResetOutcome;
    try {
      reset = this.opts.control.requestFaultReset(loop, 'mqtt', receivedAtMs);
    } catch (error) {
      // Every command gets a result, whatever happens behind it.
      this.opts.logger.error({ err: errorMessage(error), loop }, 'fault reset not confirmed');
      reset = { accepted: false, reason: `fault reset not confirmed: ${errorMessage(error)}` };
    }
    if (!reset.accepted) {
      this.refuse(reply, { accepted: false, reason: reset.reason });
      return;
    }
    this.deps.output.publishResult(loop, outcome, atIso, reset.generation ?? this.currentGeneration(loop));
    this.opts.control.triggerLoop(loop, `mqtt ${kindName(kind)}`);
  }

  /** A valid setpoint or mode change: stored unless it changes nothing or exceeds the rate. */
  private applyChange(reply: Reply, outcome: Accepted, nowMs: number): void {
    const { loop, kind, atIso } = reply;
    const { setpoint, mode } = outcome.change;
    const change: CommandChange = {
      ...(setpoint === undefined ? {} : { setpoint }),
      ...(mode === undefined ? {} : { mode }),
    };
    const { storage, output } = this.deps;
    // Asking for what is already desired changes nothing and costs nothing (QoS 1 duplicates).
    const current = storage.attempt('read', 'current desired state', () => this.opts.desired.desired(loop));
    const row = current.ok ? current.value : undefined;
    if (
      row &&
      (setpoint === undefined || setpoint === row.setpoint) &&
      (mode === undefined || mode === row.mode)
    ) {
      output.publishResult(loop, outcome, atIso, row.generation);
      return;
    }
    if (!this.withinChangeLimit(reply, outcome, row, nowMs)) return;
    const stored = storage.attempt('write', 'store a command', () =>
      this.opts.desired.setDesired(loop, change, 'mqtt', outcome.requestId),
    );
    if (!stored.ok) {
      output.publishResult(
        loop,
        { accepted: false, reason: `not stored: ${stored.error.message}`, ...pickRequestId(outcome) },
        atIso,
        row?.generation,
      );
      return;
    }
    output.publishResult(loop, outcome, atIso, stored.value.generation);
    if (stored.value.changed) this.opts.control.triggerLoop(loop, `mqtt ${kindName(kind)}`);
  }

  /** Takes one change from the loop's budget; false (and the command refused) when it is spent. */
  private withinChangeLimit(reply: Reply, outcome: Accepted, row: DesiredRow, nowMs: number): boolean {
    const { setpoint, mode } = outcome.change;
    // Stopping a loop (mode off and nothing else new) is never rate-limited: a person must not
    // wait behind a burst. A setpoint sent with it still counts.
    const onlyStopping = mode === 'off' && (setpoint === undefined || setpoint === row?.setpoint);
    if (onlyStopping || this.changes.take(reply.loop, nowMs)) return true;
    const { burst, perMinute } = this.opts.changeLimit ?? DEFAULT_CHANGE_LIMIT;
    this.refuse(reply, {
      accepted: false,
      reason: `too many changes: loop ${reply.loop} accepts ${burst} at once and ${perMinute} per minute; not applied, send it again later`,
      ...pickRequestId(outcome),
    });
    return false;
  }

  /** A rejected command: its result now (with the unchanged generation), its event coalesced. */
  private refuse(reply: Reply, outcome: Refused): void {
    const { loop, kind, known, atIso } = reply;
    this.deps.rejections.note({
      ...(known ? { loop } : {}),
      source: 'mqtt',
      message: known ? `${kindName(kind)} rejected: ${outcome.reason}` : outcome.reason,
      ...pickRequestId(outcome),
    });
    this.deps.output.publishResult(loop, outcome, atIso, known ? this.currentGeneration(loop) : undefined);
  }

  /** The loop's generation for a result, or undefined when the store cannot say. */
  private currentGeneration(loop: string): number | undefined {
    const read = this.deps.storage.attempt('read', 'current desired state', () =>
      this.opts.desired.desired(loop),
    );
    return read.ok ? read.value?.generation : undefined;
  }

  /**
   * Deletes a retained command from the broker (an empty retained publish), so it is not
   * replayed at the next (re)subscribe. The broker forwards that empty message to us too.
   */
  private clearRetained(topic: string, nowMs: number): void {
    this.clearedTopics.set(topic, nowMs + CLEAR_ECHO_MS);
    void this.deps.output.publish(topic, '', true);
  }

  /** Whether an empty message on `topic` is the echo of our own clearing (consumed once). */
  private isOwnClearing(topic: string, nowMs: number): boolean {
    const untilMs = this.clearedTopics.get(topic);
    if (untilMs === undefined) return false;
    this.clearedTopics.delete(topic);
    return nowMs <= untilMs;
  }
}

function kindName(kind: CommandKind): string {
  return { setpoint: 'setpoint', mode: 'mode', json: 'set', faultReset: 'fault reset' }[kind];
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function pickRequestId(outcome: { requestId?: string }): { requestId?: string } {
  return outcome.requestId === undefined ? {} : { requestId: outcome.requestId };
}
