import type { StoredSample } from '../store/state-store.js';
import type { HistoryPoint } from './schemas.js';
import { isoTime } from './views.js';

/**
 * A loop's history reduced to at most `maxPoints` for a chart: unchanged when it fits, else one
 * point per equal slice of [fromMs, toMs): measured and output averaged over the slice, the
 * setpoint and the action its last (a setpoint is a step: an average would draw a ramp that
 * never happened), at the slice's mean sample time. Pure.
 */
export function downsampleHistory(
  samples: readonly StoredSample[],
  range: { fromMs: number; toMs: number },
  maxPoints: number,
): { points: HistoryPoint[]; downsampled: boolean } {
  if (samples.length <= maxPoints) return { points: samples.map(toPoint), downsampled: false };
  const sliceMs = Math.max(1, (range.toMs - range.fromMs) / maxPoints);
  const points: HistoryPoint[] = [];
  let bucket: StoredSample[] = [];
  let bucketIndex = Number.NaN;
  for (const sample of samples) {
    // A sample at toMs itself belongs to the last slice, not to one more.
    const index = Math.min(maxPoints - 1, Math.floor((sample.atMs - range.fromMs) / sliceMs));
    if (index !== bucketIndex && bucket.length > 0) {
      points.push(mergeBucket(bucket));
      bucket = [];
    }
    bucketIndex = index;
    bucket.push(sample);
  }
  if (bucket.length > 0) points.push(mergeBucket(bucket));
  return { points, downsampled: true };
}

function toPoint(sample: StoredSample): HistoryPoint {
  return {
    at: isoTime(sample.atMs),
    measured: sample.measured ?? null,
    setpoint: sample.setpoint,
    output: sample.output,
    action: sample.action,
  };
}

function mergeBucket(bucket: readonly StoredSample[]): HistoryPoint {
  const last = bucket[bucket.length - 1]!;
  const measured = bucket.flatMap((s) => (s.measured === undefined ? [] : [s.measured]));
  return {
    at: isoTime(Math.round(mean(bucket.map((s) => s.atMs)))),
    measured: measured.length === 0 ? null : round(mean(measured), 4),
    setpoint: last.setpoint,
    output: round(mean(bucket.map((s) => s.output)), 4),
    action: last.action,
  };
}

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
