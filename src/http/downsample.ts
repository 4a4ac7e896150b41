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
  // One pass, sums only (a week of readings is 60,000 samples on a Pi).
  let bucket = emptyBucket(Number.NaN);
  for (const sample of samples) {
    // A sample at toMs itself belongs to the last slice, not to one more.
    const index = Math.min(maxPoints - 1, Math.floor((sample.atMs - range.fromMs) / sliceMs));
    if (index !== bucket.index) {
      if (bucket.count > 0) points.push(bucketPoint(bucket));
      bucket = emptyBucket(index);
    }
    bucket.count++;
    bucket.atSum += sample.atMs;
    bucket.outputSum += sample.output;
    if (sample.measured !== undefined) {
      bucket.measuredSum += sample.measured;
      bucket.measuredCount++;
    }
    bucket.last = sample;
  }
  if (bucket.count > 0) points.push(bucketPoint(bucket));
  return { points, downsampled: true };
}

interface Bucket {
  index: number;
  count: number;
  atSum: number;
  outputSum: number;
  measuredSum: number;
  measuredCount: number;
  last: StoredSample | undefined;
}

function emptyBucket(index: number): Bucket {
  return { index, count: 0, atSum: 0, outputSum: 0, measuredSum: 0, measuredCount: 0, last: undefined };
}

function bucketPoint(bucket: Bucket): HistoryPoint {
  const last = bucket.last!;
  return {
    at: isoTime(Math.round(bucket.atSum / bucket.count)),
    measured: bucket.measuredCount === 0 ? null : round(bucket.measuredSum / bucket.measuredCount, 4),
    setpoint: last.setpoint,
    output: round(bucket.outputSum / bucket.count, 4),
    action: last.action,
  };
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

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
