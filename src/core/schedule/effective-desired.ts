/**
 * The desired state a cycle regulates to, from the stored row, the loop's config section (its
 * presets, weekly schedule and profiles), the node's time zone and `now`. Pure: the
 * core's effectiveSetpoint does the work; this adapts the store's row and the config to it, and
 * its result to the `schedule` status part (ISO times, seconds).
 *
 * A loop without presets, schedule or profiles is passed through untouched (no status part).
 */

import type { Mode } from '../types.js';
import { effectiveSetpoint } from './effective.js';
import { isUsableInstant } from './local-time.js';
import type { Effective, Presets, Profile, SetpointSource, StepKind, WeeklySchedule } from './types.js';

/** The loop section's fields this reads (LoopConfig has them). */
export interface ScheduleConfig {
  presets?: Presets | undefined;
  schedule?: { weekly?: WeeklySchedule | undefined; manualHoldS?: number | undefined } | undefined;
  profiles?: Record<string, Profile> | undefined;
}

/** The stored row's fields this reads (LoopDesiredRow has them). */
export interface ScheduleRow {
  setpoint: number;
  mode: Mode;
  preset?: string;
  changedAtMs?: number;
  profileRun?: {
    name: string;
    startedAtMs: number;
    pausedAtMs?: number;
    pausedTotalMs: number;
    resumedAtMs?: number;
  };
}

/** The `schedule` part of a loop's status (MQTT state JSON, the HTTP loop view). */
export interface ScheduleStatus {
  source: SetpointSource;
  /** The preset in force (selected by hand or by a schedule entry), null when none. */
  preset: string | null;
  /** A manual change overriding the schedule/profile holds until then (ISO). */
  heldUntil?: string;
  profile?: {
    name: string;
    state: 'running' | 'paused' | 'finished';
    stepIndex: number;
    stepCount: number;
    stepKind: StepKind;
    /** Seconds left (change every cycle: the dashboard's countdown; not in the MQTT fingerprint). */
    stepRemainingS: number;
    totalRemainingS: number;
    /** When the step and the profile end (ISO), stable while running; null while paused. */
    stepEndsAt: string | null;
    endsAt: string | null;
  };
  /** The next changes (at most 3), soonest first. */
  next: { at: string; setpoint: number; mode?: Mode; source: SetpointSource }[];
}

export interface EffectiveDesired {
  setpoint: number;
  mode: Mode;
  /** Absent for a loop without presets, schedule or profiles. */
  schedule?: ScheduleStatus;
  /** The next change's time (ms), for the loop to wake then; absent when none is due. */
  nextChangeAtMs?: number;
  /** The core's result, for `plan` (local times). */
  effective?: Effective;
}

/** Whether the loop has anything that makes its setpoint depend on time or a preset. */
export function hasSchedule(config: ScheduleConfig): boolean {
  return (
    Object.keys(config.presets ?? {}).length > 0 ||
    (config.schedule?.weekly?.length ?? 0) > 0 ||
    config.schedule?.manualHoldS !== undefined ||
    Object.keys(config.profiles ?? {}).length > 0
  );
}

export function effectiveDesired(
  row: ScheduleRow,
  config: ScheduleConfig,
  timeZone: string,
  nowMs: number,
): EffectiveDesired {
  if (!hasSchedule(config)) return { setpoint: row.setpoint, mode: row.mode };
  const run = row.profileRun;
  // A run whose profile left the config: nothing to follow (the schedule or manual value is in force).
  const profile =
    run !== undefined && config.profiles && Object.hasOwn(config.profiles, run.name)
      ? config.profiles[run.name]
      : undefined;
  const effective = effectiveSetpoint(
    {
      base: {
        setpoint: row.setpoint,
        mode: row.mode,
        // Rows from before schema 7 have no stamp: never an override.
        changedAtMs: row.changedAtMs ?? Number.NEGATIVE_INFINITY,
        preset: row.preset ?? null,
      },
      ...(config.presets ? { presets: config.presets } : {}),
      ...(config.schedule?.weekly ? { weekly: config.schedule.weekly } : {}),
      ...(profile && run
        ? {
            profile,
            run: {
              startedAtMs: run.startedAtMs,
              pausedTotalMs: run.pausedTotalMs,
              ...(run.pausedAtMs === undefined ? {} : { pausedAtMs: run.pausedAtMs }),
              ...(run.resumedAtMs === undefined ? {} : { resumedAtMs: run.resumedAtMs }),
            },
          }
        : {}),
      ...(config.schedule?.manualHoldS === undefined ? {} : { manualHoldS: config.schedule.manualHoldS }),
      timeZone,
    },
    nowMs,
  );
  // Only a usable instant can wake the loop (a far-off time from unvalidated data is none).
  const next = effective.next.find((change) => isUsableInstant(change.atMs))?.atMs;
  return {
    setpoint: effective.setpoint,
    mode: effective.mode,
    schedule: toScheduleStatus(effective, profile && run ? run.name : undefined),
    ...(next === undefined ? {} : { nextChangeAtMs: next }),
    effective,
  };
}

/**
 * What a command asking for the stored manual state again meets now: whether a schedule or a
 * profile is in force over it (asking again then takes over: the override rule, one for every
 * source), and whether the started profile has finished (starting it again restarts it).
 */
export function manualStateNow(
  row: ScheduleRow,
  config: ScheduleConfig,
  timeZone: string,
  nowMs: number,
): ManualStateNow {
  const { setpoint, mode, schedule } = effectiveDesired(row, config, timeZone, nowMs);
  return {
    overridden: schedule?.source === 'schedule' || schedule?.source === 'profile',
    profileFinished: schedule?.profile?.state === 'finished',
    inForce: { setpoint, mode, preset: schedule?.preset ?? null },
  };
}

/** What manualStateNow tells a command: see there. */
export interface ManualStateNow {
  overridden: boolean;
  profileFinished: boolean;
  /** The setpoint, mode and preset in force now (what HA and the dashboard show). */
  inForce: { setpoint: number; mode: Mode; preset: string | null };
}

/**
 * An instant as ISO text; undefined for one that is not a usable date (a duration far beyond
 * the config's cap, from data that skipped validation): the status builder runs every cycle
 * and must never throw ("Invalid time value").
 */
const iso = (ms: number | undefined): string | undefined =>
  ms !== undefined && isUsableInstant(ms) ? new Date(ms).toISOString() : undefined;
const seconds = (ms: number): number => (Number.isFinite(ms) ? Math.max(0, Math.round(ms / 1000)) : 0);

export function toScheduleStatus(effective: Effective, profileName: string | undefined): ScheduleStatus {
  const { profile } = effective;
  const heldUntil = iso(effective.heldUntilMs);
  return {
    source: effective.source,
    preset: effective.preset,
    ...(heldUntil === undefined ? {} : { heldUntil }),
    ...(profile === undefined || profileName === undefined
      ? {}
      : {
          profile: {
            name: profileName,
            state: profile.state,
            stepIndex: profile.stepIndex,
            stepCount: profile.stepCount,
            stepKind: profile.stepKind,
            stepRemainingS: seconds(profile.stepRemainingMs),
            totalRemainingS: seconds(profile.totalRemainingMs),
            stepEndsAt: iso(profile.stepEndsAtMs) ?? null,
            endsAt: iso(profile.endsAtMs) ?? null,
          },
        }),
    next: effective.next.flatMap((change) => {
      const at = iso(change.atMs);
      if (at === undefined) return []; // not a date: nothing to announce
      return [
        {
          at,
          setpoint: change.setpoint,
          ...(change.mode === undefined ? {} : { mode: change.mode }),
          source: change.source,
        },
      ];
    }),
  };
}
