/**
 * The effective setpoint: the loop's setpoint and mode from its desired state and `now`.
 *
 * Precedence when nothing overrides: a started profile (running, paused or finished) > the
 * weekly schedule > the manual base. The override rule is ONE rule whatever the source of the
 * change (MQTT, API, HA, dashboard, CLI): a manual change (setpoint, preset or mode) made after
 * the latest schedule point / profile step start holds until the next point or step boundary;
 * with `manualHoldS` it holds exactly that long instead. Then the schedule/profile is in force.
 *
 * Never throws: a `now` that is not a usable instant, an unknown zone, an empty schedule or
 * entries and steps that do not resolve fall back along the precedence to the manual base,
 * whose non-finite setpoint turns the loop off (manual.ts).
 */

import { atMostNow } from '../time.js';
import type { Mode } from '../types.js';
import { isUsableInstant } from './local-time.js';
import { manualValue } from './manual.js';
import { profilePosition } from './profile.js';
import type { Effective, EffectiveInput, NextChange, ProfileStatus } from './types.js';
import { MAX_NEXT_CHANGES } from './types.js';
import { nextSchedulePoints, scheduleInForce } from './weekly.js';

const MS_PER_S = 1_000;

/** What an automatic source (schedule or profile) sets at an instant. */
interface AutoValue {
  setpoint: number;
  mode: Mode;
  preset: string | null;
}

/** The schedule or profile in force, seen from now. */
interface AutoSource {
  source: 'schedule' | 'profile';
  now: AutoValue;
  /** The latest point (schedule) or the current step's start (profile): the override's reference. */
  latestPointMs: number;
  /** Manual changes before this never override (a profile started after them wins). */
  notBeforeMs: number;
  /** The next point or step boundary; undefined while none is due (paused or finished profile). */
  nextPointMs: number | undefined;
  profile?: ProfileStatus;
  valueAt(tMs: number): AutoValue | undefined;
  changesAfter(tMs: number, count: number): NextChange[];
}

export function effectiveSetpoint(input: EffectiveInput, nowMs: number): Effective {
  return keepOff(input.base.mode, effectiveBeforeOff(input, nowMs));
}

/**
 * The off rule: a loop a person set `off` (the manual base's mode) stays off whatever a schedule
 * entry, preset or profile says, now and in every announced change. A schedule or preset can
 * still turn a loop off; it never turns one on that a person switched off (safety: `off` is a
 * person's decision, not something the next schedule point undoes).
 */
function keepOff(baseMode: Mode, effective: Effective): Effective {
  if (baseMode !== 'off') return effective;
  return {
    ...effective,
    mode: 'off',
    next: effective.next.map((change) => (change.mode === undefined ? change : { ...change, mode: 'off' })),
  };
}

function effectiveBeforeOff(input: EffectiveInput, nowMs: number): Effective {
  const manual = manualValue(input.base, input.presets);
  const manualResult: Effective = { ...manual, next: [] };
  // Without a usable `now` nothing time-dependent can be evaluated: the stored manual state.
  if (!isUsableInstant(nowMs)) return manualResult;
  const auto = profileSource(input, nowMs) ?? scheduleSource(input, nowMs);
  if (auto === undefined) return manualResult;
  const profile = auto.profile ? { profile: auto.profile } : {};
  const hold = manualHold(input, auto, nowMs);
  if (hold.held) {
    const next = hold.untilMs === undefined ? [] : changesFrom(auto, hold.untilMs);
    return {
      ...manual,
      ...(hold.untilMs === undefined ? {} : { heldUntilMs: hold.untilMs }),
      ...profile,
      next,
    };
  }
  return { ...auto.now, source: auto.source, ...profile, next: auto.changesAfter(nowMs, MAX_NEXT_CHANGES) };
}

/**
 * Whether the manual base overrides `auto` now, and until when. A change stamped ahead of now
 * (the clock went back) counts as made now, time.ts's rule.
 */
function manualHold(
  input: EffectiveInput,
  auto: AutoSource,
  nowMs: number,
): { held: false } | { held: true; untilMs: number | undefined } {
  const changedAtMs = atMostNow(input.base.changedAtMs, nowMs);
  if (!Number.isFinite(changedAtMs) || changedAtMs <= auto.notBeforeMs) return { held: false };
  const holdS = input.manualHoldS;
  if (holdS !== undefined && Number.isFinite(holdS) && holdS > 0) {
    // Exactly that long, whatever points pass meanwhile.
    const untilMs = changedAtMs + holdS * MS_PER_S;
    return nowMs < untilMs ? { held: true, untilMs } : { held: false };
  }
  if (changedAtMs <= auto.latestPointMs) return { held: false };
  return { held: true, untilMs: auto.nextPointMs };
}

/** The end of a hold (what is in force then), then the changes after it. */
function changesFrom(auto: AutoSource, untilMs: number): NextChange[] {
  const atEnd = auto.valueAt(untilMs);
  const end: NextChange[] = atEnd ? [{ atMs: untilMs, ...nextFields(atEnd), source: auto.source }] : [];
  return [...end, ...auto.changesAfter(untilMs, MAX_NEXT_CHANGES - end.length)];
}

function nextFields(value: AutoValue): Pick<NextChange, 'setpoint' | 'mode' | 'preset'> {
  return { setpoint: value.setpoint, mode: value.mode, ...(value.preset ? { preset: value.preset } : {}) };
}

/** A started profile whose position resolves to a finite setpoint; else undefined (next in precedence). */
function profileSource(input: EffectiveInput, nowMs: number): AutoSource | undefined {
  const { profile, run } = input;
  if (profile === undefined || run === undefined) return undefined;
  const position = profilePosition(profile, run, nowMs);
  if (position === undefined || !Number.isFinite(position.setpoint)) return undefined;
  const mode = input.base.mode;
  // Starting or resuming puts the profile in force: a manual change before it no longer holds.
  const takenOverMs = Math.max(run.startedAtMs, Number.isFinite(run.resumedAtMs) ? run.resumedAtMs! : 0);
  return {
    source: 'profile',
    now: { setpoint: position.setpoint, mode, preset: null },
    latestPointMs: position.stepStartMs,
    notBeforeMs: takenOverMs,
    nextPointMs: position.upcoming[0]?.atMs,
    profile: position.status,
    valueAt(tMs) {
      const later = profilePosition(profile, run, tMs);
      return later && Number.isFinite(later.setpoint)
        ? { setpoint: later.setpoint, mode, preset: null }
        : undefined;
    },
    changesAfter(tMs, count) {
      const later = profilePosition(profile, run, tMs);
      return (later?.upcoming ?? [])
        .filter((step) => step.atMs > tMs && Number.isFinite(step.setpoint))
        .slice(0, count)
        .map((step) => ({
          atMs: step.atMs,
          setpoint: step.setpoint,
          mode,
          source: 'profile',
          stepKind: step.stepKind,
        }));
    },
  };
}

/** The weekly schedule's entry in force; undefined for no schedule, an unknown zone or no resolvable entry. */
function scheduleSource(input: EffectiveInput, nowMs: number): AutoSource | undefined {
  const { weekly, presets, timeZone } = input;
  if (!Array.isArray(weekly) || weekly.length === 0) return undefined;
  const toValue = (point: { setpoint: number; mode?: Mode; preset: string | null }): AutoValue => ({
    setpoint: point.setpoint,
    mode: point.mode ?? input.base.mode,
    preset: point.preset,
  });
  const current = scheduleInForce(weekly, presets, timeZone, nowMs);
  if (current === undefined) return undefined;
  return {
    source: 'schedule',
    now: toValue(current),
    latestPointMs: current.atMs,
    notBeforeMs: Number.NEGATIVE_INFINITY,
    nextPointMs: nextSchedulePoints(weekly, presets, timeZone, nowMs, 1)[0]?.atMs,
    valueAt(tMs) {
      const point = scheduleInForce(weekly, presets, timeZone, tMs);
      return point ? toValue(point) : undefined;
    },
    changesAfter(tMs, count) {
      return nextSchedulePoints(weekly, presets, timeZone, tMs, count).map((point) => ({
        atMs: point.atMs,
        ...nextFields(toValue(point)),
        source: 'schedule',
      }));
    },
  };
}
