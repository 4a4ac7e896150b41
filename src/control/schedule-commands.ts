import type { Config } from '../config/schema.js';
import type { ManualStateNow } from '../core/schedule/effective-desired.js';
import type { CommandAnswer, CommandRequest } from './command-types.js';
import type { CommandOutcome, ProfileChange } from './commands.js';
import { type CommandSteps, readDesired, refuser } from './tuning-commands.js';

/**
 * The preset and profile commands on the command path (DesiredCommands.submit hands
 * them here once parsed): checked against the loop's config (a loop without presets or
 * profiles, an unknown name: refused, listing the known ones), counted in the loop's change
 * budget, stored (committed, with its generation and event) before the answer, the loop woken.
 * Asking for what is already in force (a QoS 1 duplicate, a second press) is accepted and
 * changes nothing (`changed: false`, same generation) and, like a setpoint already desired,
 * costs nothing from the budget: it is seen in the stored row first (the store makes the same
 * no-op decision again inside its transaction). Refusals are noted like every other.
 */

type Accepted = Extract<CommandOutcome, { accepted: true }>;
type LoopConfig = Config['loops'][string];
type Presets = NonNullable<LoopConfig['presets']>;

/** A valid preset selection (a name, or null for none). */
export function selectPreset(
  steps: CommandSteps,
  request: CommandRequest,
  outcome: Accepted,
  loopConfig: LoopConfig,
  name: string | null,
): CommandAnswer {
  const { loop, source } = request;
  const refuse = refuser(steps, request, outcome);
  const presets: Presets = loopConfig.presets ?? {};
  const known = Object.keys(presets);
  if (known.length === 0) {
    return refuse(`loop ${loop} has no presets: add them under loops.${loop}.presets in the config`);
  }
  if (name !== null && !Object.hasOwn(presets, name)) {
    return refuse(`unknown preset "${name}" (known: ${known.join(', ')}, or none)`);
  }
  const current = readDesired(steps, request, outcome);
  if (!current.ok) return current.answer;
  const { row } = current;
  // The stored preset selected again while a schedule or profile overrides it takes over (the
  // override rule); otherwise it is a duplicate.
  const override =
    row !== undefined &&
    (row.preset ?? null) === name &&
    presetNotInForce(steps.manualNow(request, row), name);
  if (row && (row.preset ?? null) === name && !override) {
    steps.logAccepted(request, `preset ${name ?? 'none'}`, false, row.generation);
    return { known: true, outcome, generation: row.generation, changed: false };
  }
  const limited = steps.beyondChangeLimit(request, outcome, false);
  if (limited) return limited;
  const stored = steps.storage.attempt('write', 'select a preset', () =>
    steps.desired.selectPreset(loop, name, presets, source, outcome.requestId, { override }),
  );
  if (!stored.ok) return steps.notStored(outcome, stored.error, row?.generation);
  const { changed, generation } = stored.value;
  if (changed) steps.trigger(request);
  steps.logAccepted(request, `preset ${name ?? 'none'}`, changed, generation);
  return { known: true, outcome, generation, changed };
}

/** A valid profile command: start (a profile the loop has), pause, resume or stop. */
export function commandProfile(
  steps: CommandSteps,
  request: CommandRequest,
  outcome: Accepted,
  loopConfig: LoopConfig,
  command: ProfileChange,
): CommandAnswer {
  const { loop, source } = request;
  const refuse = refuser(steps, request, outcome);
  const known = Object.keys(loopConfig.profiles ?? {});
  const current = readDesired(steps, request, outcome);
  if (!current.ok) return current.answer;
  const { row } = current;
  // A run stored for a profile since removed from the config (no longer followed) can still be
  // stopped: refusing would leave it stored, to come back if the name is added again.
  const stopsStoredRun = command.action === 'stop' && row?.profileRun !== undefined;
  if (known.length === 0 && !stopsStoredRun) {
    return refuse(`loop ${loop} has no profiles: add them under loops.${loop}.profiles in the config`);
  }
  if (command.action === 'start' && !known.includes(command.name)) {
    return refuse(`unknown profile "${command.name}" (known: ${known.join(', ')})`);
  }
  const what = command.action === 'start' ? `profile start ${command.name}` : `profile ${command.action}`;
  // Starting the started profile again once it has finished restarts it; before, a duplicate.
  const restart =
    command.action === 'start' &&
    row?.profileRun?.name === command.name &&
    steps.manualNow(request, row).profileFinished;
  if (row && !restart && changesNothing(row.profileRun, command)) {
    steps.logAccepted(request, what, false, row.generation);
    return { known: true, outcome, generation: row.generation, changed: false };
  }
  const limited = steps.beyondChangeLimit(request, outcome, false);
  if (limited) return limited;
  const stored = steps.storage.attempt('write', `${command.action} a profile`, () =>
    steps.desired.profileCommand(
      loop,
      restart ? { ...command, restart } : command,
      source,
      outcome.requestId,
    ),
  );
  if (!stored.ok) return steps.notStored(outcome, stored.error, row?.generation);
  const { changed, generation } = stored.value;
  if (changed) steps.trigger(request);
  steps.logAccepted(request, what, changed, generation);
  return { known: true, outcome, generation, changed };
}

/**
 * Whether a profile command would leave the stored run as it is (the store's own no-op rules,
 * store/schedule-changes.ts): the started profile started again (before it finished), a pause with none running or
 * already paused, a resume with none paused, a stop with none started.
 */
function changesNothing(
  run: { name: string; pausedAtMs?: number } | undefined,
  command: ProfileChange,
): boolean {
  switch (command.action) {
    case 'start':
      return run?.name === command.name;
    case 'pause':
      return run === undefined || run.pausedAtMs !== undefined;
    case 'resume':
      return run === undefined || run.pausedAtMs === undefined;
    case 'stop':
      return run === undefined;
  }
}

/** The schedule or a profile is in force now, and not with this preset. */
function presetNotInForce(now: ManualStateNow, name: string | null): boolean {
  return now.overridden && now.inForce.preset !== name;
}
