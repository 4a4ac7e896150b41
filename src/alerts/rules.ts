/**
 * What raises an alert, pure: from each loop status (its conditions and measured value) and
 * `now` (monotonic: a wall-clock step must neither raise nor hide an alert), the streaks that
 * started, were raised (lasted their delay), were resolved or ended before being raised, and
 * one-off events (an autotune finished or aborted). One streak per loop and kind (the database
 * is one streak for the whole node): told once when raised and once when resolved, however
 * often its message changes in between.
 */
import type { LoopStatus } from '../core/status.js';
import type { ConditionType } from '../core/types.js';
import {
  type EventTransition,
  forgetEvents,
  type LoopStatusWithSchedule,
  loopEvents,
  NO_EVENTS_SEEN,
  type SeenEvents,
} from './events.js';

export type StreakKind = 'latched' | 'faulted' | 'unconfirmed' | 'interlock' | 'storage' | 'band' | 'peer';
export type AlertKind = StreakKind | EventTransition['kind'];

/** A loop's rules in force: each kind's delay, ms (absent: never raised), and its band. */
export interface LoopAlertRules {
  delaysMs: Partial<Record<Exclude<StreakKind, 'band'>, number>>;
  band?: { low?: number | undefined; high?: number | undefined; forMs: number };
  autotune: boolean;
  profile: boolean;
}

export interface Streak {
  key: string;
  kind: StreakKind;
  /** Absent for the node's own (the database, a watched peer). */
  loop: string | undefined;
  /** When it started, monotonic ms. */
  sinceMs: number;
  raised: boolean;
  /** What is wrong, for a person (the latest). */
  message: string;
}

export type AlertTransition =
  | { phase: 'started' | 'raised' | 'ended'; streak: Streak }
  | { phase: 'resolved'; streak: Streak; lastedMs: number }
  | EventTransition;

export interface AlertTrackerState {
  streaks: ReadonlyMap<string, Streak>;
  /** What the one-off events (events.ts) remember of each loop. */
  events: SeenEvents;
}

export const EMPTY_ALERT_STATE: AlertTrackerState = { streaks: new Map(), events: NO_EVENTS_SEEN };

/** The node's one streak for the database: every loop shows the same StorageHealthy. */
export const STORAGE_KEY = 'storage';

const conditionOf = (status: LoopStatus, type: ConditionType) =>
  status.conditions.find((c) => c.type === type);

/** What each kind finds wrong in `status` now: a message, or undefined when all is well. */
function activeKinds(status: LoopStatus, rules: LoopAlertRules): Map<StreakKind, string | undefined> {
  const faulted = conditionOf(status, 'Faulted');
  const latched = faulted?.status === 'True' && faulted.reason.startsWith('Latched');
  const falseMessage = (type: ConditionType) => {
    const condition = conditionOf(status, type);
    return condition?.status === 'False' ? condition.message : undefined;
  };
  const interlocked = conditionOf(status, 'Interlocked');
  const found = new Map<StreakKind, string | undefined>([
    ['latched', latched ? faulted.message : undefined],
    ['faulted', faulted?.status === 'True' && !latched ? faulted.message : undefined],
    ['unconfirmed', falseMessage('ActuatorConfirmed')],
    ['interlock', interlocked?.status === 'True' ? interlocked.message : undefined],
  ]);
  // Only a status that shows it (a loop's first statuses may not yet): the node's one streak.
  if (conditionOf(status, 'StorageHealthy')) found.set('storage', falseMessage('StorageHealthy'));
  // No reading: the band keeps its streak as it is (the sensor fault tells of it).
  if (rules.band && status.measured !== undefined) found.set('band', outsideBand(status, rules.band));
  return found;
}

function outsideBand(status: LoopStatus, band: NonNullable<LoopAlertRules['band']>): string | undefined {
  const measured = status.measured;
  if (measured === undefined) return undefined;
  if (band.high !== undefined && measured > band.high) return `${measured} is above ${band.high}`;
  if (band.low !== undefined && measured < band.low) return `${measured} is below ${band.low}`;
  return undefined;
}

function delayOf(kind: StreakKind, rules: LoopAlertRules): number | undefined {
  return kind === 'band' ? rules.band?.forMs : rules.delaysMs[kind];
}

/** The streak key of a loop's kind (the database's is the node's). */
export function streakKey(loop: string, kind: StreakKind): string {
  return kind === 'storage' ? STORAGE_KEY : `${loop}/${kind}`;
}

/**
 * One loop status taken in at `nowMs` (monotonic): the new state and what changed. A kind whose
 * rule is off is still tracked (faults are logged whatever the alert rules), never raised.
 */
export function trackLoopStatus(
  state: AlertTrackerState,
  status: LoopStatusWithSchedule,
  rules: LoopAlertRules,
  nowMs: number,
): { state: AlertTrackerState; transitions: AlertTransition[] } {
  const streaks = new Map(state.streaks);
  const transitions: AlertTransition[] = [];
  for (const [kind, message] of activeKinds(status, rules)) {
    const key = streakKey(status.loop, kind);
    const loop = kind === 'storage' ? undefined : status.loop;
    const stepped = stepStreak(streaks.get(key), { key, kind, loop, message }, delayOf(kind, rules), nowMs);
    if (stepped.next) streaks.set(key, stepped.next);
    else streaks.delete(key);
    transitions.push(...stepped.transitions);
  }
  const events = loopEvents(state.events, status, rules);
  transitions.push(...events.transitions);
  return { state: { streaks, events: events.seen }, transitions };
}

/** The streak key of a watched node. */
export const peerKey = (peer: string) => `peer/${peer}`;

/**
 * A watched node's availability at `nowMs`: `message` while it is offline or not yet seen
 * online (a streak, raised after the node's `peer` delay), undefined once it is online.
 */
export function trackPeer(
  state: AlertTrackerState,
  peer: string,
  message: string | undefined,
  delayMs: number | undefined,
  nowMs: number,
): { state: AlertTrackerState; transitions: AlertTransition[] } {
  const key = peerKey(peer);
  const streaks = new Map(state.streaks);
  const stepped = stepStreak(
    streaks.get(key),
    { key, kind: 'peer', loop: undefined, message },
    delayMs,
    nowMs,
  );
  if (stepped.next) streaks.set(key, stepped.next);
  else streaks.delete(key);
  return { state: { ...state, streaks }, transitions: stepped.transitions };
}

/** Streaks due to be raised by `nowMs` without a new status (a sensor quiet for good). */
export function raiseDue(
  state: AlertTrackerState,
  rulesOf: (loop: string | undefined) => LoopAlertRules | undefined,
  nowMs: number,
): { state: AlertTrackerState; transitions: AlertTransition[] } {
  const streaks = new Map(state.streaks);
  const transitions: AlertTransition[] = [];
  for (const streak of state.streaks.values()) {
    const rules = rulesOf(streak.loop);
    const delayMs = rules ? delayOf(streak.kind, rules) : undefined;
    if (streak.raised || delayMs === undefined || nowMs - streak.sinceMs < delayMs) continue;
    const raised = { ...streak, raised: true };
    streaks.set(streak.key, raised);
    transitions.push({ phase: 'raised', streak: raised });
  }
  return { state: { ...state, streaks }, transitions };
}

/** When the next streak would be raised (monotonic ms), if one is waiting. */
export function nextDueMs(
  state: AlertTrackerState,
  rulesOf: (loop: string | undefined) => LoopAlertRules | undefined,
): number | undefined {
  let next: number | undefined;
  for (const streak of state.streaks.values()) {
    const rules = rulesOf(streak.loop);
    const delayMs = rules ? delayOf(streak.kind, rules) : undefined;
    if (streak.raised || delayMs === undefined) continue;
    const dueMs = streak.sinceMs + delayMs;
    if (next === undefined || dueMs < next) next = dueMs;
  }
  return next;
}

/** Streaks of loops no longer configured end (resolved if raised): a removed loop alerts no more. */
export function forgetLoops(
  state: AlertTrackerState,
  keep: (loop: string) => boolean,
  nowMs: number,
): { state: AlertTrackerState; transitions: AlertTransition[] } {
  const streaks = new Map(state.streaks);
  const transitions: AlertTransition[] = [];
  for (const streak of state.streaks.values()) {
    if (streak.loop === undefined || keep(streak.loop)) continue;
    streaks.delete(streak.key);
    transitions.push(endOf(streak, nowMs));
  }
  return { state: { streaks, events: forgetEvents(state.events, keep) }, transitions };
}

function endOf(streak: Streak, nowMs: number): AlertTransition {
  return streak.raised
    ? { phase: 'resolved', streak, lastedMs: nowMs - streak.sinceMs }
    : { phase: 'ended', streak };
}

function stepStreak(
  previous: Streak | undefined,
  now: Omit<Streak, 'sinceMs' | 'raised' | 'message'> & { message: string | undefined },
  delayMs: number | undefined,
  nowMs: number,
): { next: Streak | undefined; transitions: AlertTransition[] } {
  if (now.message === undefined) {
    return { next: undefined, transitions: previous ? [endOf(previous, nowMs)] : [] };
  }
  const transitions: AlertTransition[] = [];
  let next: Streak = previous
    ? { ...previous, message: now.message }
    : { ...now, message: now.message, sinceMs: nowMs, raised: false };
  if (!previous) transitions.push({ phase: 'started', streak: next });
  if (!next.raised && delayMs !== undefined && nowMs - next.sinceMs >= delayMs) {
    next = { ...next, raised: true };
    transitions.push({ phase: 'raised', streak: next });
  }
  return { next, transitions };
}
