/** Axis ticks: round values for the value axes, round local clock times for the time axis. */

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** About `target` round ticks (1, 2, 2.5, 5 × 10^k) covering [min, max]. */
export function valueTicks(min: number, max: number, target = 5): number[] {
  const span = max - min;
  if (!(span > 0)) return [min];
  const raw = span / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let v = Math.ceil(min / step - 1e-9) * step; v <= max + step * 1e-9; v += step) {
    ticks.push(Math.round(v / step) * step);
  }
  return ticks;
}

/** A tick value as text: no more decimals than the step needs. */
export function formatTick(value: number, ticks: readonly number[]): string {
  const step = ticks.length > 1 ? Math.abs(ticks[1]! - ticks[0]!) : 1;
  // As many decimals as the step has (2.5 → 1), so 12.5 is not shown as 13.
  let decimals = 0;
  while (decimals < 4 && Math.abs(step * 10 ** decimals - Math.round(step * 10 ** decimals)) > 1e-6)
    decimals++;
  return (Object.is(value, -0) ? 0 : value).toFixed(decimals);
}

const TIME_STEPS_MS = [
  MINUTE_MS,
  2 * MINUTE_MS,
  5 * MINUTE_MS,
  10 * MINUTE_MS,
  15 * MINUTE_MS,
  30 * MINUTE_MS,
  HOUR_MS,
  2 * HOUR_MS,
  3 * HOUR_MS,
  6 * HOUR_MS,
  12 * HOUR_MS,
  DAY_MS,
  2 * DAY_MS,
  7 * DAY_MS,
  14 * DAY_MS,
  30 * DAY_MS,
];

export interface TimeTick {
  tMs: number;
  label: string;
}

/**
 * Ticks on round local times, at most `maxTicks` intervals apart across the range: HH:MM, the date at midnight when the range
 * spans days, only dates once the step is a day or more. `offsetMs(t)`: local time minus UTC at
 * t (the machine's zone by default; tests pass a fixed one).
 */
export function timeTicks(
  fromMs: number,
  toMs: number,
  offsetMs: (tMs: number) => number,
  maxTicks = 8,
): TimeTick[] {
  const span = toMs - fromMs;
  if (!(span > 0)) return [];
  const stepMs =
    TIME_STEPS_MS.find((s) => span / s <= maxTicks) ?? Math.ceil(span / maxTicks / DAY_MS) * DAY_MS;
  const multiDay = span > DAY_MS;
  const ticks: TimeTick[] = [];
  // Round in local time (a tick at local midnight, not UTC midnight).
  const startLocal = Math.ceil((fromMs + offsetMs(fromMs)) / stepMs) * stepMs;
  for (let local = startLocal; ; local += stepMs) {
    const tMs = local - offsetMs(local);
    if (tMs > toMs) break;
    if (tMs < fromMs) continue;
    const at = new Date(tMs + offsetMs(tMs));
    const hhmm = `${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}`;
    const date = `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]}`;
    const midnight = at.getUTCHours() === 0 && at.getUTCMinutes() === 0;
    ticks.push({ tMs, label: stepMs >= DAY_MS || (multiDay && midnight) ? date : hhmm });
  }
  return ticks;
}

/** `2026-11-30 14:05` in local time, for the title. */
export function formatLocal(tMs: number, offsetMs: (tMs: number) => number): string {
  const at = new Date(tMs + offsetMs(tMs));
  return `${at.getUTCFullYear()}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())} ${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}`;
}

/** The machine's zone: local minus UTC at `tMs` (changes with daylight saving time). */
export function localOffsetMs(tMs: number): number {
  return -new Date(tMs).getTimezoneOffset() * MINUTE_MS;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
