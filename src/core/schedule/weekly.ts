/**
 * The weekly schedule: which entry is in force at an instant, and the points after it.
 *
 * An entry's points are its `at` on each of its `days`, in the schedule's local time zone. The
 * entry in force is the one with the latest point at or before now, looking back as far as a
 * week (Monday 06:00 still uses Sunday 22:00's entry). Points are computed day by day from local
 * dates, so a week that contains a DST change keeps each point at its wall time (local-time.ts
 * for the skipped and repeated hour).
 *
 * Entries that cannot be resolved (bad time, unknown preset, setpoint not finite) are ignored
 * here, as if absent; validateSchedule reports them so the config layer refuses the file.
 */
import type { Mode } from '../types.js';
import type { LocalDate } from './local-time.js';
import { addDays, epochOfLocal, localDateTime, weekdayOf } from './local-time.js';
import type { Presets, WeeklyEntry, WeeklySchedule } from './types.js';

/** A week and a day: the furthest back the entry in force can lie, and a margin for DST. */
const LOOK_DAYS = 8;

/** One firing of one entry. */
export interface SchedulePoint {
  atMs: number;
  /** Index of the entry in the schedule (config order). */
  entryIndex: number;
  setpoint: number;
  /** A preset's mode; undefined keeps the loop's stored mode. */
  mode?: Mode;
  preset: string | null;
}

/** 'HH:MM' (00:00–23:59) as minutes after midnight; undefined when it is not one. */
export function parseAt(at: string): number | undefined {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(typeof at === 'string' ? at : '');
  return match ? Number(match[1]) * 60 + Number(match[2]) : undefined;
}

/** What an entry sets: its preset's setpoint and mode, else its own setpoint; undefined if neither resolves. */
export function resolveEntry(
  entry: WeeklyEntry,
  presets: Presets | undefined,
): { setpoint: number; mode?: Mode; preset: string | null } | undefined {
  if (entry.preset !== undefined) {
    const preset = presets && Object.hasOwn(presets, entry.preset) ? presets[entry.preset] : undefined;
    if (!preset || !Number.isFinite(preset.setpoint)) return undefined;
    return { setpoint: preset.setpoint, preset: entry.preset, ...(preset.mode ? { mode: preset.mode } : {}) };
  }
  if (typeof entry.setpoint !== 'number' || !Number.isFinite(entry.setpoint)) return undefined;
  return { setpoint: entry.setpoint, preset: null };
}

/** How many dates' points are kept per schedule: a look back and ahead of a week, with room. */
const MEMO_DATES = 32;
const NO_PRESETS: Presets = Object.freeze({});

/**
 * pointsOnDate's answers by schedule and presets (identity: the config's objects, the same from
 * cycle to cycle until a reload), then zone and date. Each cycle asks for the same 9 or so
 * dates and each costs a dozen Intl calls: on a Pi Zero that was most of a cycle's time. Weak
 * keys: a replaced config's schedule is forgotten with it. Bounded per schedule; the points are
 * frozen, so no caller can change what the next one gets. A memo of a pure function keeps the
 * core pure.
 */
const memo = new WeakMap<WeeklySchedule, WeakMap<Presets, Map<string, readonly SchedulePoint[]>>>();

function memoPointsOnDate(
  weekly: WeeklySchedule,
  presets: Presets | undefined,
  timeZone: string,
  date: LocalDate,
): readonly SchedulePoint[] {
  let byPresets = memo.get(weekly);
  if (byPresets === undefined) {
    byPresets = new WeakMap();
    memo.set(weekly, byPresets);
  }
  const presetsKey = presets ?? NO_PRESETS;
  let byDate = byPresets.get(presetsKey);
  if (byDate === undefined) {
    byDate = new Map();
    byPresets.set(presetsKey, byDate);
  }
  const key = `${timeZone} ${date.year}-${date.month}-${date.day}`;
  const known = byDate.get(key);
  if (known !== undefined) return known;
  const points = Object.freeze(pointsOnDate(weekly, presets, timeZone, date).map((p) => Object.freeze(p)));
  // Oldest first out (insertion order): the dates a running daemon asks for move on by a day.
  if (byDate.size >= MEMO_DATES) byDate.delete(byDate.keys().next().value!);
  byDate.set(key, points);
  return points;
}

/**
 * The points of every entry on one local date, in firing order. Ties (two entries at the same
 * instant, or a skipped 02:30 landing on an entry at 03:00) go to the later wall time, then to
 * the later entry in the config, so the last one listed wins.
 */
function pointsOnDate(
  weekly: WeeklySchedule,
  presets: Presets | undefined,
  timeZone: string,
  date: LocalDate,
): SchedulePoint[] {
  const weekday = weekdayOf(date);
  const points: (SchedulePoint & { minutes: number })[] = [];
  weekly.forEach((entry, entryIndex) => {
    if (!Array.isArray(entry?.days) || !entry.days.includes(weekday)) return;
    const minutes = parseAt(entry.at);
    const value = resolveEntry(entry, presets);
    if (minutes === undefined || value === undefined) return;
    const wall = { ...date, hour: Math.floor(minutes / 60), minute: minutes % 60 };
    const atMs = epochOfLocal(wall, timeZone);
    if (atMs !== undefined) points.push({ atMs, entryIndex, minutes, ...value });
  });
  points.sort((a, b) => a.atMs - b.atMs || a.minutes - b.minutes || a.entryIndex - b.entryIndex);
  // Of points at the same instant only the winner fires: one change, not two, in `plan`.
  const winners = points.filter((p, i) => points[i + 1]?.atMs !== p.atMs);
  return winners.map(({ minutes: _, ...point }) => point);
}

/** The point in force at `nowMs` (the latest at or before it); undefined when the schedule has none. */
export function scheduleInForce(
  weekly: WeeklySchedule,
  presets: Presets | undefined,
  timeZone: string,
  nowMs: number,
): SchedulePoint | undefined {
  const today = localDateTime(nowMs, timeZone);
  if (today === undefined) return undefined;
  // Day by day back from today: every point of a date lies after every point of the date
  // before (a repeated hour maps to its first occurrence), so the first date with a point at
  // or before now holds the answer.
  for (let back = 0; back <= LOOK_DAYS; back++) {
    const points = memoPointsOnDate(weekly, presets, timeZone, addDays(today, -back));
    const past = points.filter((p) => p.atMs <= nowMs);
    if (past.length > 0) return past[past.length - 1];
  }
  return undefined;
}

/** The next `count` points strictly after `afterMs`, soonest first. */
export function nextSchedulePoints(
  weekly: WeeklySchedule,
  presets: Presets | undefined,
  timeZone: string,
  afterMs: number,
  count: number,
): SchedulePoint[] {
  const today = localDateTime(afterMs, timeZone);
  const found: SchedulePoint[] = [];
  if (today === undefined) return found;
  for (let ahead = 0; ahead <= LOOK_DAYS && found.length < count; ahead++) {
    const points = memoPointsOnDate(weekly, presets, timeZone, addDays(today, ahead));
    found.push(...points.filter((p) => p.atMs > afterMs));
  }
  return found.slice(0, count);
}
