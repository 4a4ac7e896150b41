/**
 * Wall-clock time in an IANA time zone, through Intl (Node 20 ships full ICU), both ways:
 * the local fields of an instant, and the instant of a local wall time.
 *
 * Daylight saving makes the second direction partial: a wall time in the hour skipped by
 * spring-forward has no instant, and one in the hour repeated by fall-back has two. The rule
 * for schedules: a skipped time maps to the transition instant (the end of the
 * gap), a repeated one to its first occurrence, so a schedule point neither vanishes nor fires
 * twice.
 */
import type { Weekday } from './types.js';
import { WEEKDAYS } from './types.js';

const DAY_MS = 86_400_000;
const SECOND_MS = 1_000;

/** A calendar date (month 1..12). */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

/** A local wall time to the minute. */
export interface LocalWall extends LocalDate {
  hour: number;
  minute: number;
}

export interface LocalDateTime extends LocalWall {
  second: number;
  weekday: Weekday;
}

/**
 * Instants the core accepts for local time: 1970 to the end of 9999. Outside it Intl either
 * throws (beyond ±8.64e15) or answers in eras the schedule does not model; homeostat's clock is
 * never there legitimately, so such a `now` is treated like NaN (no local time).
 */
export function isUsableInstant(epochMs: number): boolean {
  return Number.isFinite(epochMs) && epochMs >= 0 && epochMs <= 253_402_300_799_999;
}

// Building a DateTimeFormat costs far more than using one; effectiveSetpoint runs every cycle.
// A memo of a pure constructor keeps the core pure.
const formatters = new Map<string, Intl.DateTimeFormat | null>();

function formatterFor(timeZone: string): Intl.DateTimeFormat | undefined {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone,
        // h23: midnight is 00, never 24 (some ICU versions give 24 with hour12: false).
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      formatter = null; // RangeError: not a time zone Intl knows
    }
    formatters.set(timeZone, formatter);
  }
  return formatter ?? undefined;
}

/** Whether Intl knows the zone (an IANA name such as 'Europe/Berlin', or 'UTC'). */
export function isValidTimeZone(timeZone: string): boolean {
  return typeof timeZone === 'string' && timeZone !== '' && formatterFor(timeZone) !== undefined;
}

/** The weekday of a calendar date (proleptic Gregorian, no zone involved). */
export function weekdayOf(date: LocalDate): Weekday {
  const sundayFirst = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
  return WEEKDAYS[(sundayFirst + 6) % 7]!;
}

/** The calendar date `days` after `date` (negative: before); months and years roll over. */
export function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** The wall-clock fields of an instant in `timeZone`; undefined for an unknown zone or unusable instant. */
export function localDateTime(epochMs: number, timeZone: string): LocalDateTime | undefined {
  const formatter = formatterFor(timeZone);
  if (formatter === undefined || !isUsableInstant(epochMs)) return undefined;
  const fields: Record<string, number> = {};
  for (const part of formatter.formatToParts(epochMs)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const date = { year: fields.year!, month: fields.month!, day: fields.day! };
  return {
    ...date,
    hour: fields.hour!,
    minute: fields.minute!,
    second: fields.second!,
    weekday: weekdayOf(date),
  };
}

/** Local time minus UTC at an instant (ms); +3_600_000 for Berlin in winter. */
function offsetMs(epochMs: number, timeZone: string): number | undefined {
  const local = localDateTime(epochMs, timeZone);
  if (local === undefined) return undefined;
  const wallAsUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return wallAsUtc - Math.floor(epochMs / SECOND_MS) * SECOND_MS;
}

function showsWall(epochMs: number, wall: LocalWall, timeZone: string): boolean {
  const local = localDateTime(epochMs, timeZone);
  return (
    local !== undefined &&
    local.year === wall.year &&
    local.month === wall.month &&
    local.day === wall.day &&
    local.hour === wall.hour &&
    local.minute === wall.minute
  );
}

/**
 * The instant of a local wall time (seconds 0). Repeated by fall-back: the first occurrence.
 * Skipped by spring-forward: the transition instant, the end of the gap.
 * Undefined for an unknown zone or a wall time outside the usable range.
 */
export function epochOfLocal(wall: LocalWall, timeZone: string): number | undefined {
  const wallAsUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  // The offsets a day either side bracket any transition near this wall time (zones change
  // offset at most once a day), so one of them is the offset in force at the answer.
  const offsetBefore = offsetMs(wallAsUtc - DAY_MS, timeZone);
  const offsetAfter = offsetMs(wallAsUtc + DAY_MS, timeZone);
  if (offsetBefore === undefined || offsetAfter === undefined) return undefined;
  const candidates = [wallAsUtc - offsetBefore, wallAsUtc - offsetAfter].filter((t) =>
    showsWall(t, wall, timeZone),
  );
  if (candidates.length > 0) return Math.min(...candidates);
  return transitionBetween(wallAsUtc - offsetAfter, wallAsUtc - offsetBefore, timeZone);
}

/**
 * The first second in [fromMs, toMs] whose offset differs from fromMs's: the instant the clocks
 * jumped. Offsets change on whole seconds, so a bisection on seconds finds it exactly.
 */
function transitionBetween(fromMs: number, toMs: number, timeZone: string): number {
  const offsetAtFrom = offsetMs(fromMs, timeZone);
  let lo = fromMs; // offset as at fromMs
  let hi = toMs; // offset changed (or, if none found, toMs is the best answer)
  while (hi - lo > SECOND_MS) {
    const mid = lo + Math.max(SECOND_MS, Math.floor((hi - lo) / 2 / SECOND_MS) * SECOND_MS);
    if (offsetMs(mid, timeZone) === offsetAtFrom) lo = mid;
    else hi = mid;
  }
  return hi;
}
