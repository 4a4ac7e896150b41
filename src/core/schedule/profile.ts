/**
 * Profiles: steps (holds) and linear ramps over hours or days, e.g. a fermentation: 18 °C for
 * 4 days, ramp to 21 °C over 2 days, hold 3 days, crash to 2 °C.
 *
 * Progress is a function of the stored run and now only: elapsed profile time is
 * now − startedAtMs − pausedTotalMs, frozen at pausedAtMs while paused. A restart therefore
 * resumes at the right step and setpoint with nothing to do, and a clock step is absorbed by
 * moving the run's times with the step (rebaseProfileRun), as clock-step.ts does for loop memory.
 *
 * Durations that are not finite and positive count as 0 (the step is skipped); a ramp with no
 * step before it holds its `to`. validateProfile reports both, so they only reach this file
 * from unvalidated input.
 */
import { atMostNow } from '../time.js';
import type { Profile, ProfileRun, ProfileStatus, ProfileStep, StepKind } from './types.js';

const MS_PER_S = 1_000;

export function isRampStep(step: ProfileStep): step is Extract<ProfileStep, { rampS: number }> {
  return 'rampS' in step;
}

export function stepKind(step: ProfileStep): StepKind {
  return isRampStep(step) ? 'ramp' : 'hold';
}

/** A step's length; anything but a finite positive duration is 0 (skipped, never current). */
export function stepDurationMs(step: ProfileStep): number {
  const s = isRampStep(step) ? step.rampS : step.holdS;
  return Number.isFinite(s) && s > 0 ? s * MS_PER_S : 0;
}

/** Where a step goes: a hold's setpoint, a ramp's `to`. */
export function stepTarget(step: ProfileStep): number {
  return isRampStep(step) ? step.to : step.setpoint;
}

/** When each step starts, in elapsed profile time, and the total. */
function stepOffsetsMs(steps: readonly ProfileStep[]): { offsets: number[]; totalMs: number } {
  const offsets: number[] = [];
  let totalMs = 0;
  for (const step of steps) {
    offsets.push(totalMs);
    totalMs += stepDurationMs(step);
  }
  return { offsets, totalMs };
}

/**
 * Elapsed profile time at `nowMs`. A start ahead of now (the clock went back, time.ts's rule)
 * counts as now: the profile is at its beginning, never at a negative time.
 */
export function profileElapsedMs(run: ProfileRun, nowMs: number): number {
  const anchorMs = run.pausedAtMs === undefined ? nowMs : atMostNow(run.pausedAtMs, nowMs);
  return Math.max(0, anchorMs - run.startedAtMs - (run.pausedTotalMs || 0));
}

/** The setpoint `intoMs` into step `index`: a hold's value, or linear between a ramp's ends. */
function setpointInStep(steps: readonly ProfileStep[], index: number, intoMs: number): number {
  const step = steps[index]!;
  if (!isRampStep(step)) return step.setpoint;
  const from = index > 0 ? stepTarget(steps[index - 1]!) : step.to;
  const durationMs = stepDurationMs(step);
  const fraction = durationMs > 0 ? Math.min(1, Math.max(0, intoMs / durationMs)) : 1;
  return from + (step.to - from) * fraction;
}

/** A profile's position at an instant: progress, setpoint, and where the current step began in wall time. */
export interface ProfilePosition {
  status: ProfileStatus;
  setpoint: number;
  /** The current step's start on the run's timeline (the latest profile point, for the override rule). */
  stepStartMs: number;
  /** Each later step's start (wall time) and where it goes; empty while paused or finished. */
  upcoming: { atMs: number; setpoint: number; stepKind: StepKind; stepIndex: number }[];
}

/** Where a started profile is at `nowMs`; undefined for no steps or a run whose times are not finite. */
export function profilePosition(
  profile: Profile,
  run: ProfileRun,
  nowMs: number,
): ProfilePosition | undefined {
  const steps = profile.steps;
  const elapsedMs = profileElapsedMs(run, nowMs);
  if (!Array.isArray(steps) || steps.length === 0 || !Number.isFinite(elapsedMs)) return undefined;
  // A step that is not an object (unvalidated input) makes the whole profile unusable.
  if (!steps.every((step) => typeof step === 'object' && step !== null)) return undefined;
  const { offsets, totalMs } = stepOffsetsMs(steps);
  // Wall time where elapsed profile time 0 lies, on the run's current timeline.
  const originMs = (run.pausedAtMs === undefined ? nowMs : atMostNow(run.pausedAtMs, nowMs)) - elapsedMs;
  if (elapsedMs >= totalMs) return finishedPosition(steps, totalMs, originMs);
  const index = steps.findIndex((step, i) => elapsedMs < offsets[i]! + stepDurationMs(step));
  const step = steps[index]!;
  const stepEndMs = offsets[index]! + stepDurationMs(step);
  const paused = run.pausedAtMs !== undefined;
  return {
    status: {
      stepIndex: index,
      stepCount: steps.length,
      stepKind: stepKind(step),
      stepRemainingMs: stepEndMs - elapsedMs,
      totalRemainingMs: totalMs - elapsedMs,
      // Stable end times (publish-on-change); while paused they move with every second: none.
      ...(paused ? {} : { stepEndsAtMs: originMs + stepEndMs, endsAtMs: originMs + totalMs }),
      state: paused ? 'paused' : 'running',
    },
    setpoint: setpointInStep(steps, index, elapsedMs - offsets[index]!),
    stepStartMs: originMs + offsets[index]!,
    // While paused nothing is due: the boundaries move on with every paused second.
    upcoming: paused ? [] : upcomingSteps(steps, offsets, index, originMs),
  };
}

/** A finished profile holds its last setpoint until stopped; its last point is the profile's end. */
function finishedPosition(steps: readonly ProfileStep[], totalMs: number, originMs: number): ProfilePosition {
  const last = steps.length - 1;
  return {
    status: {
      stepIndex: last,
      stepCount: steps.length,
      stepKind: stepKind(steps[last]!),
      stepRemainingMs: 0,
      totalRemainingMs: 0,
      stepEndsAtMs: originMs + totalMs,
      endsAtMs: originMs + totalMs,
      state: 'finished',
    },
    setpoint: setpointInStep(steps, last, stepDurationMs(steps[last]!)),
    stepStartMs: originMs + totalMs,
    upcoming: [],
  };
}

function upcomingSteps(
  steps: readonly ProfileStep[],
  offsets: number[],
  current: number,
  originMs: number,
): ProfilePosition['upcoming'] {
  const upcoming: ProfilePosition['upcoming'] = [];
  for (let i = current + 1; i < steps.length; i++) {
    const step = steps[i]!;
    // A zero-length step is never in force: no change to announce.
    if (stepDurationMs(step) === 0) continue;
    upcoming.push({
      atMs: originMs + offsets[i]!,
      setpoint: stepTarget(step),
      stepKind: stepKind(step),
      stepIndex: i,
    });
  }
  return upcoming;
}

/** A run started at `nowMs`. */
export function startProfileRun(nowMs: number): ProfileRun {
  return { startedAtMs: nowMs, pausedTotalMs: 0 };
}

/** The run paused at `nowMs`; pausing a paused run changes nothing. */
export function pauseProfileRun(run: ProfileRun, nowMs: number): ProfileRun {
  return run.pausedAtMs === undefined ? { ...run, pausedAtMs: nowMs } : run;
}

/**
 * The run resumed at `nowMs`: the pause joins pausedTotalMs (a pause "ahead of now" counts as 0),
 * and resumedAtMs records the moment, which puts the profile in force over a manual change made
 * before it (effective.ts).
 */
export function resumeProfileRun(run: ProfileRun, nowMs: number): ProfileRun {
  if (run.pausedAtMs === undefined) return run;
  const { pausedAtMs, ...rest } = run;
  return { ...rest, pausedTotalMs: run.pausedTotalMs + Math.max(0, nowMs - pausedAtMs), resumedAtMs: nowMs };
}

/**
 * The run with its absolute times moved by a clock step (`stepMs` > 0: the clock jumped
 * forward), so elapsed profile time is what it was (resumedAtMs moves too): a step forward does not skip a step, a
 * step back does not repeat one. pausedTotalMs is a duration and stays. Non-finite or 0: unchanged.
 *
 * `moves(tMs)`: which times the step concerns (default: all). The runtime moves only the
 * times recorded under the old clock by the process that saw the step (store/schedule-changes.ts):
 * a time from an earlier run was right when it was recorded and stays.
 */
export function rebaseProfileRun(
  run: ProfileRun,
  stepMs: number,
  moves: (tMs: number) => boolean = () => true,
): ProfileRun {
  if (stepMs === 0 || !Number.isFinite(stepMs)) return run;
  const shift = (tMs: number): number => (moves(tMs) ? tMs + stepMs : tMs);
  return {
    ...run,
    startedAtMs: shift(run.startedAtMs),
    ...(run.pausedAtMs === undefined ? {} : { pausedAtMs: shift(run.pausedAtMs) }),
    ...(run.resumedAtMs === undefined ? {} : { resumedAtMs: shift(run.resumedAtMs) }),
  };
}
