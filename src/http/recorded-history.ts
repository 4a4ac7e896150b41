import { recordedSeriesOf } from '../config/schema/record.js';
import type { Config } from '../config/schema.js';
import type { RecordedSeriesView } from '../operations/recorded-schemas.js';
import type { RecordedSeriesPoints, StoredRecordedPoint } from '../store/recorded-store.js';
import { isoTime } from './views.js';

/**
 * A loop's recorded series (loops.<id>.record) as the history answer gives them: one per
 * configured entry, in the config's order (a sensor no longer recorded is left out, one without
 * points yet is an empty series), reduced to `maxPoints` and with its gaps made explicit. Pure.
 *
 * - Beyond maxPoints: one mean per equal slice of the range, at the mean time of its values (a
 *   slice whose points were all gaps is a gap).
 * - Gaps: a null point where two points are further apart than the sensor's staleAfterS (at
 *   the time the earlier one went stale; with slices, at least two slices apart), and after
 *   the last one when it went stale before the range's end: a chart breaks its line there, a
 *   CSV leaves the cell empty, rather than drawing a straight line over hours without readings.
 */
export function recordedViews(
  config: Config,
  loopId: string,
  stored: readonly RecordedSeriesPoints[],
  range: { fromMs: number; toMs: number; maxPoints: number },
): RecordedSeriesView[] {
  const loop = config.loops[loopId];
  if (!loop) return [];
  const bySensor = new Map(stored.map((series) => [series.sensor, series.points]));
  return recordedSeriesOf(loop).map(({ sensor, label, unit }) => {
    const points = bySensor.get(sensor) ?? [];
    const staleMs = (config.sensors[sensor]?.staleAfterS ?? Number.POSITIVE_INFINITY) * 1000;
    const sliced = points.length > range.maxPoints;
    const reduced = sliced ? sliceMeans(points, range) : points;
    const sliceMs = (range.toMs - range.fromMs) / range.maxPoints;
    const gapMs = sliced ? Math.max(staleMs, 2 * sliceMs) : staleMs;
    return {
      sensor,
      label,
      unit,
      points: withGaps(reduced, gapMs, range.toMs).map((p) => ({ at: isoTime(p.atMs), value: p.value })),
    };
  });
}

/** One mean per slice of the range (points sorted by time), empty slices left out. */
function sliceMeans(
  points: readonly StoredRecordedPoint[],
  { fromMs, toMs, maxPoints }: { fromMs: number; toMs: number; maxPoints: number },
): StoredRecordedPoint[] {
  const sliceMs = Math.max(1, (toMs - fromMs) / maxPoints);
  const slices = new Map<number, Slice>();
  for (const { atMs, value, resolutionS } of points) {
    const i = Math.min(maxPoints - 1, Math.floor((atMs - fromMs) / sliceMs));
    const slice = slices.get(i) ?? { atSum: 0, count: 0, valueSum: 0, values: 0, resolutionS: 0 };
    slices.set(i, slice);
    slice.atSum += atMs;
    slice.count++;
    slice.resolutionS = Math.max(slice.resolutionS, resolutionS ?? 0);
    if (value !== null) {
      slice.valueSum += value;
      slice.values++;
    }
  }
  return [...slices]
    .sort(([a], [b]) => a - b)
    .map(([, s]) => ({
      atMs: Math.round(s.atSum / s.count),
      value: s.values > 0 ? s.valueSum / s.values : null,
      ...(s.resolutionS > 0 ? { resolutionS: s.resolutionS } : {}),
    }));
}

interface Slice {
  atSum: number;
  count: number;
  valueSum: number;
  values: number;
  resolutionS: number;
}

/** How far apart two points may be before a gap: bucket means are a bucket apart, and some. */
function allowedMs(gapMs: number, ...points: StoredRecordedPoint[]): number {
  return Math.max(gapMs, ...points.map((p) => 2 * 1000 * (p.resolutionS ?? 0)));
}

/** `points` with a null inserted where they are more than `gapMs` apart, and after a stale last one. */
function withGaps(
  points: readonly StoredRecordedPoint[],
  gapMs: number,
  toMs: number,
): StoredRecordedPoint[] {
  const out: StoredRecordedPoint[] = [];
  points.forEach((point, i) => {
    const previous = points[i - 1];
    const limitMs = previous ? allowedMs(gapMs, previous, point) : gapMs;
    if (previous && previous.value !== null && point.atMs - previous.atMs > limitMs) {
      out.push({ atMs: previous.atMs + limitMs, value: null });
    }
    out.push(point);
  });
  const last = out.at(-1);
  const limitMs = last ? allowedMs(gapMs, last) : gapMs;
  if (last && last.value !== null && toMs - last.atMs > limitMs)
    out.push({ atMs: last.atMs + limitMs, value: null });
  return out;
}
