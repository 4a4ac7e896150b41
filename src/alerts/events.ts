/**
 * One-off events told once, without a resolution, pure: an autotune that finished or was
 * aborted (its Autotuning condition went from True to False) and a profile that finished (its
 * state went from running or paused to finished). A loop's first status is only remembered, so
 * a restart does not tell an old result again.
 */

import type { ScheduleStatus } from '../core/schedule/effective-desired.js';
import type { LoopStatus } from '../core/status.js';
import type { Condition } from '../core/types.js';

/** A loop status as published: with its schedule part when it has presets, a schedule or profiles. */
export type LoopStatusWithSchedule = LoopStatus & { schedule?: ScheduleStatus | undefined };

export type EventTransition = {
  phase: 'event';
  kind: 'autotune' | 'profile';
  loop: string;
  outcome: 'done' | 'aborted' | 'finished';
  /** The profile's name, for a profile event. */
  name?: string;
  message: string;
};

export interface SeenEvents {
  /** Each loop's last Autotuning condition seen (status and transition time). */
  autotune: ReadonlyMap<string, { status: Condition['status']; lastTransitionMs: number }>;
  /** Each loop's started profile last seen (absent: none started). */
  profiles: ReadonlyMap<string, { name: string; state: 'running' | 'paused' | 'finished' }>;
}

export const NO_EVENTS_SEEN: SeenEvents = { autotune: new Map(), profiles: new Map() };

/** The events of one loop status; `tell` says which kinds the loop's rules tell. */
export function loopEvents(
  seen: SeenEvents,
  status: LoopStatusWithSchedule,
  tell: { autotune: boolean; profile: boolean },
): { seen: SeenEvents; transitions: EventTransition[] } {
  const autotune = autotuneEvent(seen.autotune, status, tell.autotune);
  const profile = profileEvent(seen.profiles, status, tell.profile);
  return {
    seen: { autotune: autotune.seen, profiles: profile.seen },
    transitions: [...autotune.transitions, ...profile.transitions],
  };
}

/** What is remembered of loops no longer configured is forgotten. */
export function forgetEvents(seen: SeenEvents, keep: (loop: string) => boolean): SeenEvents {
  return {
    autotune: new Map([...seen.autotune].filter(([loop]) => keep(loop))),
    profiles: new Map([...seen.profiles].filter(([loop]) => keep(loop))),
  };
}

function autotuneEvent(
  before: SeenEvents['autotune'],
  status: LoopStatus,
  tell: boolean,
): { seen: SeenEvents['autotune']; transitions: EventTransition[] } {
  const condition = status.conditions.find((c) => c.type === 'Autotuning');
  if (!condition) return { seen: before, transitions: [] };
  const last = before.get(status.loop);
  const seen = new Map(before);
  seen.set(status.loop, { status: condition.status, lastTransitionMs: condition.lastTransitionMs });
  const ended = last?.status === 'True' && condition.status === 'False';
  if (!ended || !tell) return { seen, transitions: [] };
  const outcome = condition.reason === 'Done' ? 'done' : 'aborted';
  return {
    seen,
    transitions: [
      { phase: 'event', kind: 'autotune', loop: status.loop, outcome, message: condition.message },
    ],
  };
}

function profileEvent(
  before: SeenEvents['profiles'],
  status: LoopStatusWithSchedule,
  tell: boolean,
): { seen: SeenEvents['profiles']; transitions: EventTransition[] } {
  const profile = status.schedule?.profile;
  const last = before.get(status.loop);
  const seen = new Map(before);
  if (profile) seen.set(status.loop, { name: profile.name, state: profile.state });
  else seen.delete(status.loop);
  const finished =
    profile?.state === 'finished' &&
    last !== undefined &&
    last.state !== 'finished' &&
    last.name === profile.name;
  if (!finished || !tell) return { seen, transitions: [] };
  return {
    seen,
    transitions: [
      {
        phase: 'event',
        kind: 'profile',
        loop: status.loop,
        outcome: 'finished',
        name: profile.name,
        message: `all ${profile.stepCount} steps done; it holds its last setpoint, ${status.setpoint}, until it is stopped`,
      },
    ],
  };
}
