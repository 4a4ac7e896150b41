/**
 * What an actuator's own availability (an MQTT plug's LWT or availability topic) means for the
 * loop, as pure functions: the ActuatorConfirmed condition says "device offline" in the cycle
 * the offline message arrives, an actuator that should be off (its safe level) and cannot be
 * confirmed off is named, and a command left unconfirmed while the device was away is sent again
 * as soon as it is back, instead of at the end of its backoff.
 */
import { type CommandMemory, type CommandTiming, levelsEqual, retryDelayMs } from './command.js';
import { type LoopSpec, loopActuators } from './loop-spec.js';
import type { ActuatorLevel, Condition } from './types.js';

/** What an actuator's device last said of itself (drivers/mqtt/availability.ts). */
export interface DeviceAvailability {
  /** `unknown`: nothing (or only garbage) received yet. */
  state: 'online' | 'offline' | 'unknown';
  /** When the state last changed, ms; absent while unknown. */
  sinceMs?: number;
  /** The topic it was read from, for people. */
  topic: string;
  /** The last payload that made no sense, when that is why the state is unknown. */
  garbage?: string;
}

type ConditionValue = Pick<Condition, 'status' | 'reason' | 'message'>;

/** What the ActuatorConfirmed condition is judged from, per actuator of the loop. */
export interface ConfirmationInputs {
  spec: LoopSpec;
  /** Every actuator confirmed at its wanted level (reconcile's command step). */
  allConfirmed: boolean;
  /** The levels wanted this cycle. */
  levels: Record<string, number>;
  observed: Record<string, ActuatorLevel>;
  availability?: Record<string, DeviceAvailability> | undefined;
  /** Command memory after the cycle: how many sends are still unanswered. */
  commands?: Record<string, CommandMemory> | undefined;
}

/**
 * The ActuatorConfirmed condition:
 * - an actuator whose device is offline: False, `DeviceOffline`, whatever its last state said;
 * - one wanted at its safe level (off) that has not answered a command and its first retry:
 *   False, `NotConfirmedOff` (a plug that does not report, or an ACL that drops the commands);
 * - any other unconfirmed one: False, `Pending` (a command on its way);
 * - else True.
 * The messages name each actuator: "heater is not confirmed off: device offline since 12:03 UTC".
 */
export function actuatorConfirmedValue(inputs: ConfirmationInputs): ConditionValue {
  const offline: string[] = [];
  const notOff: string[] = [];
  for (const { actuator } of loopActuators(inputs.spec)) {
    const id = actuator.id;
    const wanted = inputs.levels[id];
    const wantedSafe = wanted !== undefined && levelsEqual(wanted, actuator.safeLevel);
    const availability = inputs.availability?.[id];
    if (availability?.state === 'offline') {
      const since = availability.sinceMs === undefined ? '' : ` since ${clockTimeUtc(availability.sinceMs)}`;
      offline.push(
        wantedSafe
          ? `${id} is not confirmed ${safeWord(actuator.safeLevel)}: device offline${since}`
          : `${id}: device offline${since} (${availability.topic})`,
      );
      continue;
    }
    const confirmed = levelsEqual(inputs.observed[id], wanted);
    const attempts = inputs.commands?.[id]?.attempts ?? 0;
    if (wantedSafe && !confirmed && attempts >= 2) {
      notOff.push(`${id} is not confirmed ${safeWord(actuator.safeLevel)}: ${unansweredWhy(availability)}`);
    }
  }
  if (offline.length > 0) {
    return { status: 'False', reason: 'DeviceOffline', message: [...offline, ...notOff].join('; ') };
  }
  if (notOff.length > 0) return { status: 'False', reason: 'NotConfirmedOff', message: notOff.join('; ') };
  return allConfirmedValue(inputs.allConfirmed);
}

/** ActuatorConfirmed from reconcile's verdict alone (no availability, no command counts). */
export function allConfirmedValue(allConfirmed: boolean): ConditionValue {
  return allConfirmed
    ? { status: 'True', reason: 'Confirmed', message: 'every actuator is at its wanted level' }
    : { status: 'False', reason: 'Pending', message: 'an actuator is not (yet) at its wanted level' };
}

function safeWord(safeLevel: number): string {
  return safeLevel === 0 ? 'off' : `at its safe level ${Math.round(safeLevel * 100)} %`;
}

function unansweredWhy(availability: DeviceAvailability | undefined): string {
  if (availability?.garbage !== undefined) {
    return `no state from the device, and its availability topic ${availability.topic} said ${availability.garbage}`;
  }
  return 'no state from the device after the command and a retry';
}

/** `12:03 UTC`: the core has no time zone; UTC is the one every reader can convert. */
function clockTimeUtc(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 16)} UTC`;
}

/**
 * The command memory to decide from: an unconfirmed command sent before the device came back
 * online is due again now (the plug coming back gets its command at once, not at the end of a
 * backoff of up to the keep-alive); anything else unchanged.
 */
export function retryDueOnReturn(
  last: CommandMemory | undefined,
  availability: DeviceAvailability | undefined,
  timing: CommandTiming,
): CommandMemory | undefined {
  if (last === undefined || last.confirmed) return last;
  if (availability?.state !== 'online' || availability.sinceMs === undefined) return last;
  if (availability.sinceMs <= last.atMs) return last;
  // Stamped so the retry falls due exactly when the device came back: decideCommand sends it.
  return { ...last, atMs: availability.sinceMs - retryDelayMs(last.attempts, timing) };
}
