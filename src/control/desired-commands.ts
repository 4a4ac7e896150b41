import { nodeTimeZone } from '../config/schema/schedule.js';
import { allowedModes, type Config } from '../config/schema.js';
import { type ManualStateNow, manualStateNow } from '../core/schedule/effective-desired.js';
import type { LoopDesiredRow } from '../store/desired-store.js';
import { ChangeLimiter, DEFAULT_CHANGE_LIMIT } from './change-limiter.js';
import { errorMessage, kindName, pickRequestId, rejectedCommandLog } from './command-rejections.js';
import type {
  AnswerListener,
  CommandAnswer,
  CommandRefusal,
  CommandRequest,
  DesiredCommandsDeps,
  DesiredCommandsOptions,
} from './command-types.js';
import {
  type CommandChange,
  type CommandOutcome,
  type FaultResetOutcome,
  NOTHING_LATCHED_REASON,
  parseCommand,
} from './commands.js';
import type { RejectedCommandLog } from './rejection-log.js';
import { commandProfile, selectPreset } from './schedule-commands.js';
import { StorageGuard } from './storage-guard.js';
import { applyTuning, type CommandSteps, requestAutotune } from './tuning-commands.js';

export type {
  AnswerListener,
  CommandAnswer,
  CommandRefusal,
  CommandRequest,
  CommandSource,
  DesiredCommandsDeps,
  DesiredCommandsOptions,
} from './command-types.js';

type Accepted = Extract<CommandOutcome, { accepted: true }>;
type Refused = Extract<CommandOutcome, { accepted: false }>;

/**
 * The command path, whatever the transport (MQTT, HTTP): one command validated (parseCommand:
 * refused, never clamped), rate-limited per loop across every source, stored (committed)
 * before it is answered, the loop woken; a refusal is noted in the coalesced rejection log.
 * Every command gets an answer, whatever happens to the store; nothing here throws.
 */
export class DesiredCommands {
  /** The store guard (the MQTT bridge shares it, so a failing store is logged once per streak). */
  readonly storage: StorageGuard;
  /** The rejection log (the MQTT bridge notes its "busy" drops there too). */
  readonly rejections: RejectedCommandLog;
  private readonly ownsRejections: boolean;
  private readonly changes: ChangeLimiter;
  private readonly listeners = new Set<AnswerListener>();
  /** What the autotune and tuning commands (tuning-commands.ts) use of this command path. */
  private readonly steps: CommandSteps;

  constructor(
    private readonly opts: DesiredCommandsOptions,
    deps: DesiredCommandsDeps = {},
  ) {
    this.storage = deps.storage ?? new StorageGuard(opts.logger);
    this.ownsRejections = deps.rejections === undefined;
    this.rejections =
      deps.rejections ?? rejectedCommandLog({ ...opts, clock: opts.guardClock ?? opts.clock }, this.storage);
    this.changes = new ChangeLimiter(opts.changeLimit ?? DEFAULT_CHANGE_LIMIT);
    this.steps = {
      desired: opts.desired,
      storage: this.storage,
      refused: (request, outcome) => this.refused(request, true, outcome, 'invalid'),
      notStored: (outcome, error, generation) => this.notStored(outcome, error, generation),
      beyondChangeLimit: (request, outcome, exempt) => this.beyondChangeLimit(request, outcome, exempt),
      logAccepted: (request, what, changed, generation) =>
        this.logAccepted(request, what, changed, generation),
      trigger: (request) => this.trigger(request),
      manualNow: (request, row) => this.manualNow(request, row),
    };
  }

  /**
   * One command. Refused: unknown loops, invalid payloads, changes beyond the loop's rate
   * (ChangeLimiter; stopping a loop or cancelling an autotune is never limited), writes the
   * store does not take, fault resets with nothing latched, autotunes the loop cannot run,
   * tunings it does not have, and presets or profiles it does not have. Asking for the current desired state is accepted and changes
   * nothing (same generation, no event).
   */
  submit(request: CommandRequest): CommandAnswer {
    let answer: CommandAnswer;
    try {
      answer = this.decide(request);
    } catch (error) {
      // Every command gets an answer, whatever happens behind it (a broken config read, …).
      this.opts.logger.error({ err: errorMessage(error), loop: request.loop }, 'command not handled');
      answer = {
        known: false,
        outcome: { accepted: false, reason: `command not handled: ${errorMessage(error)}` },
        refusal: 'not-stored',
      };
    }
    return this.answered(request, answer);
  }

  /**
   * A command the transport refuses for its own reasons (MQTT: sent with the retain flag):
   * noted in the rejection log and answered like the refusals of submit().
   */
  refuse(request: CommandRequest, reason: string, refusal: CommandRefusal = 'invalid'): CommandAnswer {
    const known = this.loopConfig(request.loop) !== undefined;
    return this.answered(request, this.refused(request, known, { accepted: false, reason }, refusal));
  }

  /** Whether `loop` is in the current config (own keys only). */
  knows(loop: string): boolean {
    return this.loopConfig(loop) !== undefined;
  }

  /** Calls `listener` with every answer (metrics, logs); returns a function that unsubscribes. */
  onAnswer(listener: AnswerListener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Forgets the change budget of loops that are gone (after a reload). */
  retainLoops(loops: readonly string[]): void {
    this.changes.retain(loops);
  }

  /** Writes the pending rejection counts (of its own rejection log; a shared one is its owner's). */
  stop(): void {
    if (this.ownsRejections) this.rejections.stop();
  }

  private decide(request: CommandRequest): CommandAnswer {
    const { loop, kind, payload } = request;
    const loopConfig = this.loopConfig(loop);
    if (!loopConfig) {
      return this.refused(
        request,
        false,
        { accepted: false, reason: `unknown loop "${loop}"` },
        'unknown-loop',
      );
    }
    const outcome = parseCommand(kind, payload, {
      limits: loopConfig.limits,
      modes: allowedModes(loopConfig),
      step: loopConfig.step,
    });
    if (!outcome.accepted) return this.refused(request, true, outcome, 'invalid');
    const { faultReset, autotune, tuning, preset, profile } = outcome.change;
    if (faultReset) return this.resetFault(request, outcome);
    if (autotune) return requestAutotune(this.steps, request, outcome, loopConfig, autotune);
    if (tuning !== undefined) return applyTuning(this.steps, request, outcome, loopConfig, tuning);
    if (preset !== undefined) return selectPreset(this.steps, request, outcome, loopConfig, preset);
    if (profile) return commandProfile(this.steps, request, outcome, loopConfig, profile);
    return this.applyChange(request, outcome);
  }

  /** Whether a schedule or profile is in force now with another setpoint or mode than `change`'s. */
  private differsFromInForce(request: CommandRequest, row: LoopDesiredRow, change: CommandChange): boolean {
    const now = this.manualNow(request, row);
    if (!now.overridden) return false;
    const { setpoint, mode } = now.inForce;
    return (
      (change.setpoint !== undefined && change.setpoint !== setpoint) ||
      (change.mode !== undefined && change.mode !== mode)
    );
  }

  /** The stored manual state as the loop's schedule meets it at the command's time. */
  private manualNow(request: CommandRequest, row: LoopDesiredRow): ManualStateNow {
    const config = this.opts.control.currentConfig();
    const loopConfig = this.loopConfig(request.loop);
    if (loopConfig === undefined) {
      return {
        overridden: false,
        profileFinished: false,
        inForce: { setpoint: row.setpoint, mode: row.mode, preset: row.preset ?? null },
      };
    }
    return manualStateNow(row, loopConfig, nodeTimeZone(config), request.receivedAtMs);
  }

  private loopConfig(loop: string): Config['loops'][string] | undefined {
    const { loops } = this.opts.control.currentConfig();
    return Object.hasOwn(loops, loop) ? loops[loop] : undefined;
  }

  /**
   * A valid fault reset: committed by the daemon as desired state (with its event and
   * generation) before it is answered; refused with why, changing nothing, when nothing is
   * latched or the database did not take it. Then the loop runs a cycle, which applies it.
   */
  private resetFault(request: CommandRequest, outcome: Accepted): CommandAnswer {
    const { loop, source, receivedAtMs } = request;
    let reset: FaultResetOutcome;
    try {
      reset = this.opts.control.requestFaultReset(loop, source, receivedAtMs);
    } catch (error) {
      this.opts.logger.error({ err: errorMessage(error), loop }, 'fault reset not confirmed');
      reset = { accepted: false, reason: `fault reset not confirmed: ${errorMessage(error)}` };
    }
    if (!reset.accepted) {
      return this.refused(
        request,
        true,
        { accepted: false, reason: reset.reason },
        resetRefusal(reset.reason),
      );
    }
    const generation = reset.generation ?? this.currentGeneration(loop);
    this.logAccepted(request, 'fault reset', true, generation);
    this.trigger(request);
    return { known: true, outcome, ...(generation === undefined ? {} : { generation }) };
  }

  /** A valid setpoint or mode change: stored unless it changes nothing or exceeds the rate. */
  private applyChange(request: CommandRequest, outcome: Accepted): CommandAnswer {
    const { loop, source } = request;
    const { setpoint, mode } = outcome.change;
    const change: CommandChange = {
      ...(setpoint === undefined ? {} : { setpoint }),
      ...(mode === undefined ? {} : { mode }),
    };
    // Asking for what is already desired changes nothing and costs nothing (QoS 1 duplicates).
    const current = this.storage.attempt('read', 'current desired state', () =>
      this.opts.desired.desired(loop),
    );
    const row = current.ok ? current.value : undefined;
    const same =
      row !== undefined &&
      (setpoint === undefined || setpoint === row.setpoint) &&
      (mode === undefined || mode === row.mode);
    // The stored values asked for again while a schedule or profile overrides them with others:
    // a manual change that takes over (the override rule), not a duplicate. Only what differs
    // from what is in force counts: HA re-sending the mode in force (an automation, a tap) must
    // not bring back a weeks-old manual setpoint.
    const override = same && row !== undefined && this.differsFromInForce(request, row, change);
    if (row && same && !override && !(setpoint !== undefined && row.preset !== undefined)) {
      this.logAccepted(request, describeChange(row, change), false, row.generation);
      return { known: true, outcome, generation: row.generation };
    }
    // Stopping a loop (mode off and nothing else new) is never rate-limited: a person must not
    // wait behind a burst. A setpoint sent with it still counts.
    const onlyStopping = mode === 'off' && (setpoint === undefined || setpoint === row?.setpoint);
    const limited = this.beyondChangeLimit(request, outcome, onlyStopping);
    if (limited) return limited;
    const stored = this.storage.attempt('write', 'store a command', () =>
      this.opts.desired.setDesired(loop, change, source, outcome.requestId, { override }),
    );
    if (!stored.ok) {
      // Not noted as a rejection: the event could not be written either.
      const refused = { accepted: false as const, reason: `not stored: ${stored.error.message}` };
      return {
        known: true,
        outcome: { ...refused, ...pickRequestId(outcome) },
        ...(row === undefined ? {} : { generation: row.generation }),
        refusal: 'not-stored',
      };
    }
    if (stored.value.changed) this.trigger(request);
    this.logAccepted(request, describeChange(row, change), stored.value.changed, stored.value.generation);
    return { known: true, outcome, generation: stored.value.generation };
  }

  /** A write (or the read before it) the store did not take: refused, not noted (no event either). */
  private notStored(outcome: Accepted, error: Error, generation: number | undefined): CommandAnswer {
    return {
      known: true,
      outcome: { accepted: false, reason: `not stored: ${error.message}`, ...pickRequestId(outcome) },
      ...(generation === undefined ? {} : { generation }),
      refusal: 'not-stored',
    };
  }

  /**
   * Takes one change from the loop's budget; the refusal when it is spent. `exempt`: a command
   * that only makes the loop safer (stopping it, cancelling an autotune) is never limited.
   */
  private beyondChangeLimit(
    request: CommandRequest,
    outcome: Accepted,
    exempt: boolean,
  ): CommandAnswer | undefined {
    if (exempt || this.changes.take(request.loop, (this.opts.guardClock ?? this.opts.clock).nowMs()))
      return undefined;
    const { burst, perMinute } = this.opts.changeLimit ?? DEFAULT_CHANGE_LIMIT;
    const reason = `too many changes: loop ${request.loop} accepts ${burst} at once and ${perMinute} per minute; not applied, send it again later`;
    return this.refused(
      request,
      true,
      { accepted: false, reason, ...pickRequestId(outcome) },
      'rate-limited',
    );
  }

  /** A rejected command: its answer now (with the unchanged generation), its event coalesced. */
  private refused(
    request: CommandRequest,
    known: boolean,
    outcome: Refused,
    refusal: CommandRefusal,
  ): CommandAnswer {
    const { loop, kind, source } = request;
    this.rejections.note({
      ...(known ? { loop } : {}),
      source,
      message: known ? `${kindName(kind)} rejected: ${outcome.reason}` : outcome.reason,
      ...pickRequestId(outcome),
    });
    const generation = known ? this.currentGeneration(loop) : undefined;
    return { known, outcome, ...(generation === undefined ? {} : { generation }), refusal };
  }

  /** The loop's generation for an answer, or undefined when the store cannot say. */
  private currentGeneration(loop: string): number | undefined {
    const read = this.storage.attempt('read', 'current desired state', () => this.opts.desired.desired(loop));
    return read.ok ? read.value?.generation : undefined;
  }

  /**
   * One info line per accepted change (`room: mqtt command: setpoint 20 → 21.5 (generation 7)`);
   * asking for what is already desired (QoS 1 duplicates, a dashboard resending) only at debug.
   * Changes are rate-limited per loop (ChangeLimiter), so these lines cannot flood the journal.
   */
  private logAccepted(
    { loop, source }: CommandRequest,
    what: string,
    changed: boolean,
    generation: number | undefined,
  ): void {
    const fields = { loop, source, ...(generation === undefined ? {} : { generation }) };
    if (changed) {
      const at = generation === undefined ? '' : ` (generation ${generation})`;
      this.opts.logger.info(fields, `${source} command: ${what}${at}`);
    } else this.opts.logger.debug(fields, `${source} command: ${what} (unchanged)`);
  }

  /** The loop runs a cycle now; the change is stored, so a failure here only delays it. */
  private trigger({ loop, kind, source }: CommandRequest): void {
    try {
      this.opts.control.triggerLoop(loop, `${source} ${kindName(kind)}`);
    } catch (error) {
      this.opts.logger.error(
        { err: errorMessage(error), loop },
        'loop not woken; it applies the change next cycle',
      );
    }
  }

  private answered(request: CommandRequest, answer: CommandAnswer): CommandAnswer {
    for (const listener of this.listeners) {
      try {
        listener(request, answer);
      } catch (error) {
        this.opts.logger.warn({ err: errorMessage(error) }, 'command answer listener failed');
      }
    }
    return answer;
  }
}

/**
 * A change as people read it, old → new: `setpoint 20 → 21.5, mode heat → off`; `?` for an old
 * value the store could not say.
 */
export function describeChange(
  before: { setpoint: number; mode: string } | undefined,
  change: CommandChange,
): string {
  const parts: string[] = [];
  if (change.setpoint !== undefined) parts.push(`setpoint ${before?.setpoint ?? '?'} → ${change.setpoint}`);
  if (change.mode !== undefined) parts.push(`mode ${before?.mode ?? '?'} → ${change.mode}`);
  return parts.join(', ');
}

/** A refused fault reset, by the daemon's reason (daemon/fault-reset.ts). */
function resetRefusal(reason: string): CommandRefusal {
  if (reason === NOTHING_LATCHED_REASON) return 'nothing-latched';
  if (reason.startsWith('unknown loop')) return 'unknown-loop';
  return 'not-stored';
}
