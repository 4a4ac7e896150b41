import type { DeviceAvailability } from './actuator-availability.js';
import { type CommandMemory, LEVEL_TOLERANCE } from './command.js';
import type { EffectWatchMemory, LatchedFault } from './effect-watch.js';
import { type PidMemory, pidInitialMemory } from './pid.js';
import { idleSafetyMemory, resumeSafetyMemory, type SafetyMemory } from './safety-monitors.js';
import type { SensorSetResult } from './sensor-set.js';
import type { TimeProportioningMemory } from './time-proportioning.js';
import { type AutotuneMemory, isActive, requestAbort } from './tuning/autotune.js';
import type { ActuatorLevel, Condition, Direction, Mode, Reading } from './types.js';

/** Why an autotune ends when the process that ran it, or was about to start it, died. */
export const AUTOTUNE_INTERRUPTED = 'interrupted by a restart';

/** Desired state of a loop: what people asked for, with the generation that asked it. */
export interface LoopDesired {
  generation: number;
  setpoint: number;
  mode: Mode;
}

/** Observed state, read fresh by the runtime each cycle. */
export interface LoopObserved {
  /** The loop's reading: its one sensor's, or a sensor set's combined one (absent when it has none). */
  reading?: Reading;
  /**
   * A loop with several sensors (LoopSpec.sensorSet): combineReadings' result for this cycle,
   * whose verdict the gate uses instead of judging `reading` again.
   */
  sensorSet?: SensorSetResult;
  /** Actual level of each actuator (GPIO readback, a plug's state); undefined = unknown. */
  actuators: Record<string, ActuatorLevel>;
  /** What each actuator's device says of itself, for those with an availability topic (MQTT plugs). */
  availability?: Record<string, DeviceAvailability>;
  /** Latest reading of each interlock sensor (see LoopSpec.interlocks). */
  interlocks?: Record<string, Reading | undefined>;
  /**
   * Latest reading of the loop's measured-disturbance sensor (outdoor or ambient temperature),
   * when its controller names one (feedforward.ts); undefined: none configured, or none yet.
   */
  disturbance?: Reading;
}

/** What a loop remembers between cycles (persisted, so a restart resumes where it was). */
export interface LoopMemory {
  /** The controller was running last cycle (not off, not faulted). */
  regulating: boolean;
  pid: PidMemory;
  /** Hysteresis controller: whether each direction is switched on. */
  hysteresisOn: Record<Direction, boolean>;
  /** Per relay: time-proportioning window and last switch time (minimum on/off times). */
  relays: Record<string, TimeProportioningMemory>;
  /** Per actuator: last command, for retries, keep-alive and drift detection. */
  commands: Record<string, CommandMemory>;
  /** Last time each direction's actuator was wanted above 0, ms (changeover delay). */
  lastActiveMs: Partial<Record<Direction, number>>;
  /** Signed controller output last cycle, −1..1. */
  output: number;
  /** The effect watch in progress (full output applied since…). */
  effectWatch?: EffectWatchMemory;
  /** A fault that holds the loop at its safe state until reset. */
  latchedFault?: LatchedFault;
  /** The safety monitors' windows and counts (safety-monitors.ts). */
  safety?: SafetyMemory;
  /**
   * A relay autotune running, or the last one's result or abort reason (tuning/autotune.ts),
   * kept until the runtime stores it or a new run starts.
   */
  autotune?: AutotuneMemory;
  conditions: Condition[];
}

export function initialLoopMemory(): LoopMemory {
  return {
    regulating: false,
    pid: pidInitialMemory(0),
    hysteresisOn: { raise: false, lower: false },
    relays: {},
    commands: {},
    lastActiveMs: {},
    output: 0,
    conditions: [],
  };
}

/**
 * Memory to resume from after a restart (stored memory, or none), reconciled with what the
 * actuators are really doing now, before the first cycle acts:
 * - every relay whose state can be observed counts as switched now: memory is written in
 *   batches, so a switch in the last minutes before a crash may be missing from it, and a
 *   compressor must never restart inside its minimum off time. Minimum on/off times therefore
 *   hold in full from the restart (a heater may wait one minimum time, never a compressor less);
 * - a command memory that disagrees with the actuator is dropped, so the level is commanded
 *   afresh instead of waiting for a retry;
 * - the watches restart (effect, stuck and runaway watches): the time the daemon was down is
 *   not time they watched, and counting it would latch a false fault ("full output for 2 h
 *   without effect") at the first cycle. The runaway watch re-arms once the loop converges;
 * - an on-time (maximum on-time) is kept only for an actuator not seen off: one that stayed on
 *   through the restart has really been on all along. Starts in the last hour stay counted.
 * - an autotune that was running is aborted ("interrupted by a restart"): its record has a hole where the
 *   daemon was down and the relay's state then is unknown. Like every abort it takes effect in
 *   the first cycle, which holds every actuator safe; the loop regulates from the next one.
 * Everything else (integral, filters, time-proportioning windows, a latched fault) resumes as
 * stored.
 */
export function resumeLoopMemory(
  stored: LoopMemory | undefined,
  relayIds: string[],
  observed: Record<string, ActuatorLevel>,
  nowMs: number,
): LoopMemory {
  const memory = stored ?? initialLoopMemory();
  const relays = { ...memory.relays };
  const commands = { ...memory.commands };
  for (const id of relayIds) {
    const level = observed[id];
    if (level === undefined) continue;
    const isOn = level > 0;
    const relay = relays[id];
    relays[id] =
      relay === undefined || relay.isOn !== isOn
        ? { isOn, lastSwitchMs: nowMs, pulseEnded: !isOn }
        : { ...relay, lastSwitchMs: Math.max(relay.lastSwitchMs ?? nowMs, nowMs) };
  }
  for (const [id, command] of Object.entries(commands)) {
    const level = observed[id];
    if (level === undefined || Math.abs(level - command.level) > LEVEL_TOLERANCE) delete commands[id];
  }
  const { effectWatch: _restarted, safety, autotune, ...rest } = memory;
  const resumedSafety = resumeSafetyMemory(safety, observed);
  return {
    ...rest,
    relays,
    commands,
    ...(resumedSafety ? { safety: resumedSafety } : {}),
    ...(autotune
      ? { autotune: isActive(autotune) ? requestAbort(autotune, AUTOTUNE_INTERRUPTED) : autotune }
      : {}),
  };
}

/**
 * Clears a latched fault (an explicit reset by a person): the loop regulates again. Only a
 * fault latched at or before `requestedAtMs` (when the reset was asked for) is cleared: a reset
 * that arrives late (a queued message, a replay) must not clear a fault that happened after it.
 */
export function resetLatchedFault(memory: LoopMemory, requestedAtMs: number): LoopMemory {
  if (!memory.latchedFault || memory.latchedFault.atMs > requestedAtMs) return memory;
  const { latchedFault: _cleared, effectWatch: _watch, safety, ...rest } = memory;
  const idle = idleSafetyMemory(safety);
  return { ...rest, ...(idle ? { safety: idle } : {}) };
}
