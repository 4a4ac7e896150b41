import type { Config } from '../config/schema.js';
import { defaultMode } from '../config/schema.js';
import type { ManualStateNow } from '../core/schedule/effective-desired.js';
import { type DesiredStore, type LoopDesiredRow, TuningError } from '../store/desired-store.js';
import { autotuneRefusal, tuningRefusal } from './autotune-checks.js';
import { pickRequestId } from './command-rejections.js';
import type { CommandAnswer, CommandRequest } from './command-types.js';
import type { AutotuneChange, CommandOutcome, TuningTarget } from './commands.js';
import type { StorageGuard } from './storage-guard.js';

/**
 * The autotune and tuning commands on the command path (DesiredCommands.submit hands them
 * here once parsed): checked against the loop, counted in its change budget, stored before the
 * answer, the loop woken; refusals noted like every other. `steps` are DesiredCommands' own,
 * so every command shares one budget, one storage guard and one rejection log.
 */

type Accepted = Extract<CommandOutcome, { accepted: true }>;
type Refused = Extract<CommandOutcome, { accepted: false }>;
type LoopConfig = Config['loops'][string];

/** What these commands use of DesiredCommands. */
export interface CommandSteps {
  desired: DesiredStore;
  storage: StorageGuard;
  /** A refusal a person can act on (HTTP 422): noted in the rejection log, generation unchanged. */
  refused(request: CommandRequest, outcome: Refused): CommandAnswer;
  /** A read or write the store did not take (HTTP 503): not noted (its event could not be written). */
  notStored(outcome: Accepted, error: Error, generation: number | undefined): CommandAnswer;
  /** One change from the loop's budget; the refusal when it is spent (`exempt`: never limited). */
  beyondChangeLimit(request: CommandRequest, outcome: Accepted, exempt: boolean): CommandAnswer | undefined;
  logAccepted(request: CommandRequest, what: string, changed: boolean, generation: number | undefined): void;
  trigger(request: CommandRequest): void;
  /**
   * The stored manual state as the loop's schedule meets it at the command's time: whether a
   * schedule or profile is in force over it, whether the started profile has finished.
   */
  manualNow(request: CommandRequest, row: LoopDesiredRow): ManualStateNow;
}

/** Refuses `request` with a reason (its request id echoed). */
export function refuser(
  steps: CommandSteps,
  request: CommandRequest,
  outcome: Accepted,
): (reason: string) => CommandAnswer {
  return (reason) => steps.refused(request, { accepted: false, reason, ...pickRequestId(outcome) });
}

/** The loop's stored desired state (row undefined: none yet), or the answer that it could not be read. */
export function readDesired(
  steps: CommandSteps,
  request: CommandRequest,
  outcome: Accepted,
): { ok: true; row: LoopDesiredRow | undefined } | { ok: false; answer: CommandAnswer } {
  const current = steps.storage.attempt('read', 'current desired state', () =>
    steps.desired.desired(request.loop),
  );
  return current.ok
    ? { ok: true, row: current.value }
    : { ok: false, answer: steps.notStored(outcome, current.error, undefined) };
}

/**
 * A valid autotune start or cancel: checked against the loop (pid, its desired mode, the
 * side's actuator), counted in the change budget (a cancel never is: like stopping a loop, it
 * only makes the loop safer), stored as desired state with its generation and event before it
 * is answered, then the loop is woken to act on it. A cancel with no run requested (none
 * stored, or the last request already a cancel) is accepted and changes nothing, like asking
 * for the setpoint already desired: a second press or a QoS 1 duplicate is no failure, and
 * only the loop knows whether a run is still going (a cancel after a start is always stored;
 * the loop ignores it when the run has ended).
 */
export function requestAutotune(
  steps: CommandSteps,
  request: CommandRequest,
  outcome: Accepted,
  loopConfig: LoopConfig,
  change: AutotuneChange,
): CommandAnswer {
  const { loop, source, receivedAtMs } = request;
  const current = readDesired(steps, request, outcome);
  if (!current.ok) return current.answer;
  const { row } = current;
  const refusal = autotuneRefusal(loopConfig, row?.mode ?? defaultMode(loopConfig), change);
  if (refusal) return refuser(steps, request, outcome)(refusal);
  if (change.action === 'cancel' && row?.autotuneRequest?.action !== 'start') {
    steps.logAccepted(request, 'autotune cancel (no run requested)', false, row?.generation);
    return { known: true, outcome, ...(row === undefined ? {} : { generation: row.generation }) };
  }
  const limited = steps.beyondChangeLimit(request, outcome, change.action === 'cancel');
  if (limited) return limited;
  const { action, ...options } = change;
  const stored = steps.storage.attempt('write', 'store an autotune request', () =>
    storeRefusing(() =>
      steps.desired.requestAutotune(loop, {
        action,
        requestedAtMs: receivedAtMs,
        ...(action === 'start' ? { options } : {}),
        source,
        ...pickRequestId(outcome),
      }),
    ),
  );
  if (!stored.ok) return steps.notStored(outcome, stored.error, row?.generation);
  if (!stored.value.ok) return steps.refused(request, refusedBy(stored.value.error, outcome));
  const { generation } = stored.value.value;
  steps.logAccepted(
    request,
    action === 'start' ? describeStart(change) : 'autotune cancel',
    true,
    generation,
  );
  steps.trigger(request);
  return { known: true, outcome, generation };
}

/**
 * A valid tuning command: `latest` read as the newest stored version (refused when there is
 * none), then put in force by the store (UnknownTuningError: refused with its message). The
 * tuning already in force changes nothing and costs nothing; a change counts in the budget,
 * is committed with its generation and event before the answer, and wakes the loop. The
 * answer's change names the version applied (`latest` resolved).
 */
export function applyTuning(
  steps: CommandSteps,
  request: CommandRequest,
  outcome: Accepted,
  loopConfig: LoopConfig,
  target: TuningTarget,
): CommandAnswer {
  const { loop, source } = request;
  const refuse = refuser(steps, request, outcome);
  const notTunable = tuningRefusal(loopConfig);
  if (notTunable) return refuse(notTunable);
  const current = readDesired(steps, request, outcome);
  if (!current.ok) return current.answer;
  const { row } = current;
  let version: number | 'config';
  if (target === 'latest') {
    const history = steps.storage.attempt('read', 'stored tunings', () => steps.desired.tunings(loop));
    if (!history.ok) return steps.notStored(outcome, history.error, row?.generation);
    const newest = history.value[0];
    if (newest === undefined) {
      return refuse(`no stored tuning to accept: run an autotune first (homeostat autotune ${loop})`);
    }
    version = newest.version;
  } else version = target;
  const applied: Accepted = { ...outcome, change: { tuning: version } };
  if (row && (row.tuning?.version ?? 'config') === version) {
    steps.logAccepted(request, `tuning ${version}`, false, row.generation);
    return { known: true, outcome: applied, generation: row.generation, changed: false };
  }
  const limited = steps.beyondChangeLimit(request, outcome, false);
  if (limited) return limited;
  const stored = steps.storage.attempt('write', 'apply a tuning', () =>
    storeRefusing(() => steps.desired.applyTuning(loop, version, source, outcome.requestId)),
  );
  if (!stored.ok) return steps.notStored(outcome, stored.error, row?.generation);
  if (!stored.value.ok) return steps.refused(request, refusedBy(stored.value.error, outcome));
  const { changed, generation } = stored.value.value;
  if (changed) steps.trigger(request);
  const from = row?.tuning?.version ?? 'config';
  steps.logAccepted(request, `tuning ${from} → ${version}`, changed, generation);
  return { known: true, outcome: applied, generation, changed };
}

/**
 * A store call whose TuningError (an unknown version, a request the store refuses) is a
 * refusal to answer, not a storage failure: returned, so the storage guard neither logs it as
 * one nor counts it in a streak. Anything else is thrown on to the guard.
 */
function storeRefusing<T>(call: () => T): { ok: true; value: T } | { ok: false; error: TuningError } {
  try {
    return { ok: true, value: call() };
  } catch (error) {
    if (error instanceof TuningError) return { ok: false, error };
    throw error;
  }
}

function refusedBy(error: TuningError, outcome: Accepted): Refused {
  return { accepted: false, reason: error.message, ...pickRequestId(outcome) };
}

/** An autotune start as the log says it: `autotune start (side raise, maxDurationS 21600)`. */
function describeStart(change: AutotuneChange): string {
  const options = Object.entries(change)
    .filter(([key]) => key !== 'action')
    .map(([key, value]) => `${key} ${String(value)}`);
  return options.length === 0 ? 'autotune start' : `autotune start (${options.join(', ')})`;
}
