/**
 * Whether a reading is still in force: the one rule for staleness, shared by the loop's own
 * sensor (sensor-health.ts), sensor sets and interlocks.
 *
 * A value is fresh while younger than the sensor's stale limit. A sensor that reports only on
 * change (a Zigbee probe sends on a 0.3–0.5 °C step or about hourly) would go stale on a steady
 * plant and cycle the heater; if its device shows it is alive some other way (an availability
 * topic saying online, a heartbeat, `last_seen`: see `Reading.liveness`), its last value stays
 * in force while the device was seen within the stale limit, up to a hard bound of its own
 * (`maxQuietMs`), after which it is stale exactly as without liveness. A device that says it is
 * offline voids its reading at once: the loop goes safe in the cycle the message arrives.
 */
import { formatDuration, isAheadOfNow, wholeSeconds } from './time.js';
import type { Reading } from './types.js';

export type Freshness =
  | {
      fresh: true /** Set when the value is older than the stale limit but kept by liveness. */;
      quiet?: string;
    }
  | { fresh: false; reason: 'Stale' | 'Offline'; message: string };

/**
 * How `reading` stands at `nowMs` against `staleAfterMs`. A reading stamped ahead of now is the
 * caller's to refuse (the clock went back): here it counts as of age 0.
 */
export function freshnessOf(reading: Reading, nowMs: number, staleAfterMs: number): Freshness {
  const liveness = reading.liveness;
  if (liveness?.offlineSinceMs !== undefined) {
    const sinceMs = Math.max(0, nowMs - liveness.offlineSinceMs);
    return {
      fresh: false,
      reason: 'Offline',
      message: `device offline for ${formatDuration(sinceMs)} (${liveness.via})`,
    };
  }
  const ageMs = Math.max(0, nowMs - reading.atMs);
  if (ageMs <= staleAfterMs) return { fresh: true };
  const seenAgoMs = seenAgo(reading, nowMs);
  const staleMessage = `last reading is ${wholeSeconds(ageMs)} s old (limit ${wholeSeconds(staleAfterMs)} s)`;
  if (liveness === undefined) return { fresh: false, reason: 'Stale', message: staleMessage };
  const limit = `limit ${formatDuration(liveness.maxQuietMs)}`;
  if (seenAgoMs === undefined || seenAgoMs > staleAfterMs) {
    const seen = seenAgoMs === undefined ? 'device not seen' : `device seen ${formatDuration(seenAgoMs)} ago`;
    return { fresh: false, reason: 'Stale', message: `${staleMessage}; ${seen} (${liveness.via})` };
  }
  if (ageMs > liveness.maxQuietMs) {
    return {
      fresh: false,
      reason: 'Stale',
      message: `quiet for ${formatDuration(ageMs)} though the device is alive (${limit}): no new value`,
    };
  }
  return {
    fresh: true,
    quiet: `quiet: unchanged for ${formatDuration(ageMs)}, device seen ${formatDuration(seenAgoMs)} ago (${limit})`,
  };
}

/** How long ago the device was last seen alive, ms; a sighting ahead of now counts as now. */
function seenAgo(reading: Reading, nowMs: number): number | undefined {
  const seenAtMs = reading.liveness?.seenAtMs;
  if (seenAtMs === undefined) return undefined;
  return isAheadOfNow(seenAtMs, nowMs) ? 0 : nowMs - seenAtMs;
}

/**
 * The first moment after `nowMs` at which `reading`'s freshness may change by time alone (the
 * loop's wake-up: it may then go safe), ms; undefined when it is not fresh now. Without
 * liveness, when it goes stale; a quiet one, when maxQuietMs runs out or its device's last
 * sighting goes stale, whichever comes first.
 */
export function freshnessChangeAtMs(
  reading: Reading,
  nowMs: number,
  staleAfterMs: number,
): number | undefined {
  const freshness = freshnessOf(reading, nowMs, staleAfterMs);
  if (!freshness.fresh) return undefined;
  const staleAtMs = reading.atMs + staleAfterMs + 1;
  const liveness = reading.liveness;
  if (liveness === undefined || freshness.quiet === undefined) return staleAtMs;
  const seenAtMs = Math.min(liveness.seenAtMs ?? nowMs, nowMs);
  return Math.min(reading.atMs + liveness.maxQuietMs, seenAtMs + staleAfterMs) + 1;
}
