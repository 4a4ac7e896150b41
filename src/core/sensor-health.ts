import { freshnessOf } from './liveness.js';

export { freshnessChangeAtMs } from './liveness.js';

import { stampedInFuture, wholeSeconds } from './time.js';
import type { Reading } from './types.js';

/**
 * Judges the reading a loop is about to use. Anything but `ok` sends the loop's actuators to
 * their safe state: a heater is never left on because a value went missing.
 */
export type ReadingVerdict =
  | {
      ok: true;
      value: number;
      /** Set when a quiet value is kept in force by its device's liveness: why (core/liveness.ts). */
      quiet?: string;
    }
  | { ok: false; reason: 'Missing' | 'Stale' | 'Offline' | 'NotFinite' | 'Implausible'; message: string };

export interface ReadingLimits {
  /** A reading older than this (ms) counts as missing. */
  staleAfterMs: number;
  /** Physically plausible range; outside it the sensor is assumed broken. */
  plausibleMin: number;
  plausibleMax: number;
}

export function judgeReading(
  reading: Reading | undefined,
  nowMs: number,
  limits: ReadingLimits,
): ReadingVerdict {
  if (reading === undefined) return { ok: false, reason: 'Missing', message: 'no reading yet' };
  const verdict = judgeValue(reading, nowMs, limits);
  if (verdict.ok || reading.lastError === undefined || verdict.reason !== 'Stale') return verdict;
  return { ...verdict, message: `${verdict.message}; last read failed: ${reading.lastError}` };
}

function judgeValue(reading: Reading, nowMs: number, limits: ReadingLimits): ReadingVerdict {
  if (!Number.isFinite(reading.value)) {
    return { ok: false, reason: 'NotFinite', message: `reading is ${reading.value}` };
  }
  const ageMs = nowMs - reading.atMs;
  if (stampedInFuture(reading.atMs, nowMs)) {
    // Stamped in the future: the clock went back (NTP on a Pi without a real-time clock), so
    // the reading's real age is unknown. Treated as stale until a reading stamped after the
    // jump arrives, one sensor period later.
    return {
      ok: false,
      reason: 'Stale',
      message: `last reading is stamped ${wholeSeconds(-ageMs)} s in the future (clock went back?)`,
    };
  }
  const freshness = freshnessOf(reading, nowMs, limits.staleAfterMs);
  if (!freshness.fresh) return { ok: false, reason: freshness.reason, message: freshness.message };
  if (reading.value < limits.plausibleMin || reading.value > limits.plausibleMax) {
    return {
      ok: false,
      reason: 'Implausible',
      message: `reading ${reading.value} outside plausible range ${limits.plausibleMin}..${limits.plausibleMax}`,
    };
  }
  return {
    ok: true,
    value: reading.value,
    ...(freshness.quiet === undefined ? {} : { quiet: freshness.quiet }),
  };
}
