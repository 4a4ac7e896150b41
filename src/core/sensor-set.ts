import { freshnessChangeAtMs } from './liveness.js';
import { roundHundredths } from './numbers.js';
import { judgeReading, type ReadingLimits, type ReadingVerdict } from './sensor-health.js';
import type { Reading } from './types.js';

/**
 * Several sensors per loop: one reading from many, or none. Each sensor is judged by
 * judgeReading first; the healthy ones are checked against each other (outliers, disagreement);
 * the loop regulates on the combined reading while at least `minHealthy` survive, and goes to
 * its safe state below that, exactly as for a missing reading of a single sensor.
 */
export type CombineMethod = 'mean' | 'median' | 'min' | 'max' | 'first';

export const COMBINE_METHODS: readonly CombineMethod[] = ['mean', 'median', 'min', 'max', 'first'];

/** Most sensors in one set: more is a config mistake (and a cycle's work grows with it). */
export const MAX_SET_SENSORS = 16;

export interface SensorSetSpec {
  /** Sensor ids; for `first` also the fallback order (the first healthy one is used). */
  sensors: string[];
  combine: CombineMethod;
  /** Fewer healthy (judged fresh and plausible, not dropped as outliers) than this: safe state. */
  minHealthy: number;
  /**
   * Largest distance (loop unit) a healthy reading may have from the median of the healthy ones
   * (with 3 or more), or from the other one (with 2). Default: no outlier rejection.
   */
  outlierLimit?: number;
  /**
   * Each sensor's own staleness limit (ms), by id (config: its `staleAfterS`). Each member is
   * judged by its own: a fast probe that froze is dropped at its limit, not at a slow sibling's.
   * The loop's `staleAfterMs` (the limits passed to combineReadings) caps every one; a sensor
   * absent here is judged by the loop's.
   */
  staleAfterMs?: Record<string, number>;
}

export type DropReason = Exclude<ReadingVerdict, { ok: true }>['reason'] | 'Outlier' | 'Disagree';

export interface DroppedSensor {
  sensor: string;
  reason: DropReason;
  message: string;
  /** Outlier: distance from the healthy readings' median; Disagree: from the other reading (or median). */
  distance?: number;
}

export interface SensorSetResult {
  /** What reconcile acts on: not ok sends the loop's actuators to their safe state. */
  verdict: ReadingVerdict;
  /**
   * The combined reading, when the verdict is ok; stamped with the NEWEST used reading's time
   * (a new reading of any member is news for the PID and the history), never before the previous
   * combined reading's time (`previousAtMs`): a member dropping out must not move time back.
   * Its staleness is not judged on this stamp but per member (the verdict; `staleAtMs`).
   */
  reading?: Reading;
  /**
   * When the verdict is ok: the first moment a member judged fresh now goes stale (by its own
   * limit), which may change the verdict: the loop's wake-up. Every fresh member counts, the
   * standbys of `first` and the outliers too (one leaving changes who is an outlier).
   */
  staleAtMs?: number;
  /** Sensors whose readings made the combined one, in spec order. */
  used: string[];
  /** Sensors left out, in spec order, each with why. Healthy standbys of `first` are in neither list. */
  dropped: DroppedSensor[];
}

interface Healthy {
  sensor: string;
  reading: Reading;
}

/**
 * @param limits the loop's: its plausible range, and its staleness as the cap of each member's.
 * @param previousAtMs the previous combined reading's time (the runtime keeps it): the new one is
 *   never stamped before it, unless it lies ahead of now (the clock went back: time starts over).
 */
export function combineReadings(
  spec: SensorSetSpec,
  readings: Record<string, Reading | undefined>,
  nowMs: number,
  limits: ReadingLimits,
  previousAtMs?: number,
): SensorSetResult {
  // A sensor listed twice counts once: it must not satisfy minHealthy on its own.
  const sensors = [...new Set(spec.sensors)];
  const healthy: Healthy[] = [];
  const dropped: DroppedSensor[] = [];
  const staleTimes: number[] = [];
  for (const sensor of sensors) {
    const reading = readings[sensor];
    const own = memberLimits(spec, sensor, limits);
    const verdict = judgeReading(reading, nowMs, own);
    if (verdict.ok && reading) {
      healthy.push({ sensor, reading });
      staleTimes.push(freshnessChangeAtMs(reading, nowMs, own.staleAfterMs) ?? nowMs);
    } else if (!verdict.ok) dropped.push({ sensor, reason: verdict.reason, message: verdict.message });
  }
  const checked = rejectOutliers(healthy, spec.outlierLimit);
  const allDropped = inSpecOrder(sensors, [...dropped, ...checked.dropped]);
  // minHealthy below 1 would regulate on nothing: at least one reading, always.
  const needed = Math.max(1, spec.minHealthy);
  if (checked.kept.length < needed) {
    return {
      verdict: tooFewHealthy(sensors, checked.kept.length, needed, allDropped),
      used: [],
      dropped: allDropped,
    };
  }
  const used = spec.combine === 'first' ? checked.kept.slice(0, 1) : checked.kept;
  const value = combinedValue(
    spec.combine,
    used.map((h) => h.reading.value),
  );
  // The newest used reading's time: news whenever a member reports. Each member's age was judged
  // above by its own limit, so a fresh sibling does not hide an ageing one.
  const newestMs = Math.max(...used.map((h) => h.reading.atMs));
  const floorMs = previousAtMs !== undefined && previousAtMs <= nowMs ? previousAtMs : newestMs;
  return {
    verdict: { ok: true, value },
    reading: { value, atMs: Math.max(newestMs, floorMs) },
    staleAtMs: Math.min(...staleTimes),
    used: used.map((h) => h.sensor),
    dropped: allDropped,
  };
}

/**
 * A member's limits: the loop's, with the member's own staleness when it has one, capped by the
 * loop's. An own limit that is not a number is ignored (never "never stale").
 */
function memberLimits(spec: SensorSetSpec, sensor: string, limits: ReadingLimits): ReadingLimits {
  const own =
    spec.staleAfterMs && Object.hasOwn(spec.staleAfterMs, sensor) ? spec.staleAfterMs[sensor] : undefined;
  if (own === undefined || Number.isNaN(own)) return limits;
  return { ...limits, staleAfterMs: Math.min(own, limits.staleAfterMs) };
}

function combinedValue(combine: CombineMethod, values: number[]): number {
  switch (combine) {
    case 'mean':
      return values.reduce((sum, v) => sum + v, 0) / values.length;
    case 'median':
      return median(values);
    case 'min':
      return Math.min(...values);
    case 'max':
      return Math.max(...values);
    case 'first':
      return values[0]!;
  }
}

/** The middle value; the mean of the two middle ones for an even count. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * With 3 or more healthy readings the median is robust: a reading farther than the limit from
 * it is an outlier (a stuck or drifting sensor). With 2, neither can be trusted over the other:
 * both are dropped when they disagree. The same holds for 2 left after outliers are dropped, and
 * when none is left (an even split with no majority) all are dropped as disagreeing.
 */
function rejectOutliers(
  healthy: Healthy[],
  limit: number | undefined,
): { kept: Healthy[]; dropped: DroppedSensor[] } {
  if (limit === undefined || healthy.length < 2) return { kept: healthy, dropped: [] };
  if (healthy.length === 2) return checkPair(healthy, limit, []);
  const mid = median(healthy.map((h) => h.reading.value));
  const distanceOf = (h: Healthy): number => Math.abs(h.reading.value - mid);
  const kept = healthy.filter((h) => distanceOf(h) <= limit);
  const far = healthy.filter((h) => distanceOf(h) > limit);
  const about = (h: Healthy): string =>
    `reading ${h.reading.value} is ${roundHundredths(distanceOf(h))} from the median ` +
    `${roundHundredths(mid)} of the healthy sensors (limit ${limit})`;
  if (kept.length === 0) {
    const dropped = far.map((h) => ({
      sensor: h.sensor,
      reason: 'Disagree' as const,
      message: `${about(h)}, and no majority agrees`,
      distance: distanceOf(h),
    }));
    return { kept, dropped };
  }
  const outliers = far.map((h) => ({
    sensor: h.sensor,
    reason: 'Outlier' as const,
    message: about(h),
    distance: distanceOf(h),
  }));
  return kept.length === 2 ? checkPair(kept, limit, outliers) : { kept, dropped: outliers };
}

function checkPair(
  pair: Healthy[],
  limit: number,
  alreadyDropped: DroppedSensor[],
): { kept: Healthy[]; dropped: DroppedSensor[] } {
  const [a, b] = pair as [Healthy, Healthy];
  const distance = Math.abs(a.reading.value - b.reading.value);
  if (distance <= limit) return { kept: pair, dropped: alreadyDropped };
  const disagree = (self: Healthy, other: Healthy): DroppedSensor => ({
    sensor: self.sensor,
    reason: 'Disagree',
    message:
      `reading ${self.reading.value} and ${other.sensor}'s ${other.reading.value} are ` +
      `${roundHundredths(distance)} apart (limit ${limit}): neither can be trusted over the other`,
    distance,
  });
  return { kept: [], dropped: [...alreadyDropped, disagree(a, b), disagree(b, a)] };
}

function inSpecOrder(sensors: string[], dropped: DroppedSensor[]): DroppedSensor[] {
  return [...dropped].sort((x, y) => sensors.indexOf(x.sensor) - sensors.indexOf(y.sensor));
}

/**
 * Too few healthy sensors: the verdict a missing reading gets (not ok, so the loop goes safe).
 * Its reason is the dropped sensors' common reason when they share one (all stale: `Stale`, as
 * for one stale sensor), Outlier and Disagree counting as `Implausible`; `Missing` otherwise.
 * A one-sensor set gives exactly judgeReading's verdict, so `sensor: a` and `sensors: [a]` agree.
 */
function tooFewHealthy(
  sensors: string[],
  healthyCount: number,
  needed: number,
  dropped: DroppedSensor[],
): Exclude<ReadingVerdict, { ok: true }> {
  if (sensors.length === 0) return { ok: false, reason: 'Missing', message: 'no sensors configured' };
  const reasons = new Set(dropped.map((d) => asVerdictReason(d.reason)));
  const reason = reasons.size === 1 ? [...reasons][0]! : 'Missing';
  if (sensors.length === 1 && dropped.length === 1)
    return { ok: false, reason, message: dropped[0]!.message };
  const why = dropped.map((d) => `${d.sensor} ${d.reason}: ${d.message}`).join('; ');
  return {
    ok: false,
    reason,
    message: `${healthyCount} of ${sensors.length} sensors healthy, ${needed} needed${why ? ` (${why})` : ''}`,
  };
}

function asVerdictReason(reason: DropReason): Exclude<ReadingVerdict, { ok: true }>['reason'] {
  return reason === 'Outlier' || reason === 'Disagree' ? 'Implausible' : reason;
}
