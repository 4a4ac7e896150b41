/**
 * Time in the pure core: unit conversions, and the one rule for a clock that went back.
 *
 * A clock that goes back (NTP correcting a Raspberry Pi that booted without a real-time clock,
 * a restart with a clock behind the stored memory) leaves remembered times ahead of now. The
 * rule, everywhere in src/core: a remembered time ahead of now counts as now. Minimum on/off
 * times, changeover delays, retries, watches and limits then hold in full once, never for the
 * size of the jump, and nothing that "starts later" is mistaken for something in progress.
 * Every guard against it goes through the helpers below; a step the runtime notices is handled
 * before that, by moving the whole memory (clock-step.ts).
 */

const MS_PER_S = 1_000;
export const HOUR_MS = 3_600_000;

export function msToS(ms: number): number {
  return ms / MS_PER_S;
}

/** A duration rounded to whole seconds, for messages. */
export function wholeSeconds(ms: number): number {
  return Math.round(ms / MS_PER_S);
}

/** A duration for people: seconds up to two minutes, then minutes. */
export function formatDuration(ms: number): string {
  const s = wholeSeconds(ms);
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}

/** A longer duration for people: `45 s`, `12 min`, `3 h 05 min`, `48 h`, `2 d 4 h`. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.round(ms / MS_PER_S));
  if (s < 90) return `${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 90) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h > 48) return h % 24 === 0 ? `${h / 24} d` : `${Math.floor(h / 24)} d ${h % 24} h`;
  return m === 0 ? `${h} h` : `${h} h ${String(m).padStart(2, '0')} min`;
}

/** A remembered time ahead of now: the clock went back since it was stored. */
export function isAheadOfNow(timeMs: number, nowMs: number): boolean {
  return timeMs > nowMs;
}

/** A remembered time, counted as now when it is ahead of now (the clock went back). */
export function atMostNow(timeMs: number, nowMs: number): number {
  return Math.min(timeMs, nowMs);
}

/** Readings may be stamped this far ahead of `now` (sub-second scheduling) and still count. */
export const FUTURE_STAMP_TOLERANCE_MS = 1_000;

/**
 * A reading stamped further ahead of now than sub-second scheduling explains: the clock went
 * back, so its real age is unknown.
 */
export function stampedInFuture(atMs: number, nowMs: number): boolean {
  return nowMs - atMs < -FUTURE_STAMP_TOLERANCE_MS;
}
