/**
 * Presets, weekly schedules and profiles: the desired state that depends on time.
 *
 * Everything here is data from the config file or the desired store; effective.ts turns it and
 * `now` into the loop's setpoint and mode, so the effective setpoint stays a pure function of
 * desired state and time, level-based like the rest of the core.
 */
import { MODES, type Mode } from '../types.js';

/** Every mode, for validation. Which a loop allows is the config's check. */
export const KNOWN_MODES: readonly Mode[] = MODES;

/** Days of the week, Monday first (ISO 8601), as written in the config. */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A named setpoint (eco, away, comfort…); without a mode it keeps the loop's stored mode. */
export interface Preset {
  setpoint: number;
  mode?: Mode;
}

export type Presets = Record<string, Preset>;

/** From `at` (local time, 'HH:MM') on each of `days`: a setpoint, or a preset's setpoint and mode. */
export interface WeeklyEntry {
  days: Weekday[];
  at: string;
  setpoint?: number;
  preset?: string;
}

/** The entries in config order; an entry is in force from its point until the next entry's point. */
export type WeeklySchedule = readonly WeeklyEntry[];

/** Hold `setpoint` for `holdS` seconds. */
export interface HoldStep {
  holdS: number;
  setpoint: number;
}

/** Go linearly from the previous step's setpoint to `to` over `rampS` seconds. */
export interface RampStep {
  rampS: number;
  to: number;
}

export type ProfileStep = HoldStep | RampStep;

export interface Profile {
  steps: readonly ProfileStep[];
}

/**
 * A started profile (stored desired state). Elapsed profile time is
 * now − startedAtMs − pausedTotalMs, frozen at pausedAtMs while paused: a restart needs nothing,
 * and a clock step is absorbed by rebaseProfileRun.
 */
export interface ProfileRun {
  startedAtMs: number;
  /** Set while paused: when the pause began. */
  pausedAtMs?: number;
  /** The length of the pauses that ended (ms). */
  pausedTotalMs: number;
  /**
   * When it was last resumed: resuming, like starting, puts the
   * profile in force again over an earlier manual change. Optional: a run stored without it
   * only loses that.
   */
  resumedAtMs?: number;
}

/** The stored manual state of a loop: the last setpoint/preset/mode a person (or HA, MQTT…) chose. */
export interface ManualBase {
  setpoint: number;
  mode: Mode;
  /** When the setpoint, preset or mode was last changed by any source (ms since the epoch). */
  changedAtMs: number;
  /** The preset selected by hand, null after a manual setpoint change. */
  preset?: string | null;
}

export type SetpointSource = 'manual' | 'preset' | 'schedule' | 'profile';

export type StepKind = 'hold' | 'ramp';

/** A profile's progress, for status, plan, the dashboard and Home Assistant. */
export interface ProfileStatus {
  stepIndex: number;
  stepCount: number;
  stepKind: StepKind;
  stepRemainingMs: number;
  totalRemainingMs: number;
  /**
   * When the step and the profile end (wall time), stable from cycle to cycle while running
   * (the remaining times change every cycle); undefined while paused (nothing is due).
   */
  stepEndsAtMs?: number;
  endsAtMs?: number;
  state: 'running' | 'paused' | 'finished';
}

/** A coming change, for `plan`. A profile step's setpoint is where it goes (a ramp's `to`). */
export interface NextChange {
  atMs: number;
  setpoint: number;
  mode?: Mode;
  source: SetpointSource;
  /** A schedule entry naming a preset: its name. */
  preset?: string;
  /** A profile step's kind: a 'ramp' starts here and reaches `setpoint` at its end. */
  stepKind?: StepKind;
}

export interface EffectiveInput {
  base: ManualBase;
  presets?: Presets;
  weekly?: WeeklySchedule;
  profile?: Profile;
  /** Present while a profile is started (running, paused or finished) until it is stopped. */
  run?: ProfileRun;
  /** Override rule: a manual change holds exactly this long (s) instead of until the next point. */
  manualHoldS?: number;
  /** IANA zone of the weekly schedule, e.g. 'Europe/Berlin'. */
  timeZone: string;
}

export interface Effective {
  setpoint: number;
  mode: Mode;
  source: SetpointSource;
  /** The preset in force (selected by hand or by a schedule entry), null when none. */
  preset: string | null;
  /** A manual change overriding a schedule/profile: until when (absent: until the schedule or profile moves on). */
  heldUntilMs?: number;
  /** Present while a profile is started, even when a manual change overrides it. */
  profile?: ProfileStatus;
  /** The next changes, at most MAX_NEXT_CHANGES, soonest first. */
  next: NextChange[];
}

export const MAX_NEXT_CHANGES = 3;
