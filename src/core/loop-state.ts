import type { CommandMemory } from './command.js';
import { type PidMemory, pidInitialMemory } from './pid.js';
import type { TimeProportioningMemory } from './time-proportioning.js';
import type { ActuatorLevel, Condition, Direction, Mode, Reading } from './types.js';

/** Desired state of a loop: what people asked for, with the generation that asked it. */
export interface LoopDesired {
  generation: number;
  setpoint: number;
  mode: Mode;
}

/** Observed state, read fresh by the runtime each cycle. */
export interface LoopObserved {
  reading?: Reading;
  /** Actual level of each actuator (GPIO readback, a plug's state); undefined = unknown. */
  actuators: Record<string, ActuatorLevel>;
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
