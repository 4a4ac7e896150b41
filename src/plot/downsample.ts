/**
 * Series as drawn: runs of connected points (a gap in the readings ends a run), each reduced
 * to the lowest and highest point per time bucket, so a spike one sample wide still shows and
 * a year of 10-s readings stays a few thousand path points.
 */
export interface XY {
  tMs: number;
  value: number;
}

/**
 * Splits `points` where a value is missing (null) or where `breaks[i]` says the time before
 * point i is a gap: the line is broken there rather than drawn across the missing time.
 */
export function splitRuns(
  points: readonly { tMs: number; value: number | null }[],
  breaks: readonly boolean[],
): XY[][] {
  const runs: XY[][] = [];
  let run: XY[] = [];
  points.forEach((point, i) => {
    if (point.value === null || !Number.isFinite(point.value) || breaks[i] === true) {
      if (run.length > 0) runs.push(run);
      run = [];
    }
    if (point.value !== null && Number.isFinite(point.value))
      run.push({ tMs: point.tMs, value: point.value });
  });
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * Keeps per bucket of `bucketMs` (counted from `originMs`) the lowest and the highest point of
 * each run, in time order: at most two points per bucket and run.
 */
export function minMaxPerBucket(runs: readonly XY[][], originMs: number, bucketMs: number): XY[][] {
  return runs.map((run) => {
    const out: XY[] = [];
    let bucket = Number.NaN;
    let low: XY | undefined;
    let high: XY | undefined;
    const flush = () => {
      if (!low || !high) return;
      if (low === high) out.push(low);
      else if (low.tMs <= high.tMs) out.push(low, high);
      else out.push(high, low);
    };
    for (const point of run) {
      const index = Math.floor((point.tMs - originMs) / bucketMs);
      if (index !== bucket) {
        flush();
        bucket = index;
        low = point;
        high = point;
        continue;
      }
      if (low && point.value < low.value) low = point;
      if (high && point.value > high.value) high = point;
    }
    flush();
    return out;
  });
}

/** Intervals the typical sampling period is taken from: the last few, so it follows a change of resolution. */
const PERIOD_WINDOW = 5;

/**
 * Which points follow a gap: more than three typical sampling periods since the one before. The
 * period is the median of the last few intervals, so a missed reading or two is no gap, and a
 * stretch of stored 300-s averages before 10-s readings is not cut into dots.
 */
export function gapsBefore(times: readonly number[]): boolean[] {
  const breaks = times.map(() => false);
  const recent: number[] = [];
  for (let i = 1; i < times.length; i++) {
    const stepMs = times[i]! - times[i - 1]!;
    if (recent.length > 0) {
      const sorted = [...recent].sort((a, b) => a - b);
      breaks[i] = stepMs > 3 * sorted[Math.floor(sorted.length / 2)]!;
    }
    if (stepMs > 0) {
      recent.push(stepMs);
      if (recent.length > PERIOD_WINDOW) recent.shift();
    }
  }
  return breaks;
}
