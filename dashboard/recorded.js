// The sensors a loop records without regulating (loops.<id>.record) on its chart: one
// line per series, its legend entry naming the series and its unit, on the loop's value axis
// when its unit is the loop's, else on an axis of its own per unit (on the right).
//
// uPlot wants every series on one time axis: the chart's times are the union of the loop's and
// the series' times. A series has `undefined` where it has no point (uPlot joins over those)
// and `null` where the API says it had a gap (uPlot breaks the line there).
import { secondsOf } from './util.js';

/** Apart from the loop's blue, orange and green, and from each other. */
const COLORS = ['#7c3aed', '#0e7490', '#be185d', '#a16207', '#4b5563', '#65a30d', '#9333ea', '#0369a1'];

/** The history answer's series: their names and units (points apart, in `mergeRecorded`). */
export const recordedMeta = (history) =>
  (history.recorded ?? []).map(({ sensor, label, unit }) => ({ sensor, label, unit }));

/** A key that changes when the series drawn change (then the chart is made again). */
export const recordedKey = (meta) => JSON.stringify(meta);

/** The scale a series is drawn on: the loop's (y) for its unit, one per other unit. */
export const scaleOf = (series, loopUnit) => (series.unit === loopUnit ? 'y' : `unit:${series.unit}`);

/** A series' legend label: its name and its unit. */
export const legendOf = (series) => (series.unit === '' ? series.label : `${series.label} (${series.unit})`);

/**
 * The loop's points and the recorded series on one time axis, as the card's columns: t, m, s,
 * o (the loop's, `undefined` on a time only a series has) and r (one column per series).
 */
export function mergeRecorded(loopPoints, recorded, toRow) {
  const rows = loopPoints.map((p) => ({ ...toRow(p), r: recorded.map(() => undefined) }));
  const byTime = new Map();
  for (const row of rows) if (!byTime.has(row.t)) byTime.set(row.t, row);
  recorded.forEach((series, i) => {
    for (const point of series.points) {
      const t = secondsOf(point.at);
      let row = byTime.get(t);
      if (!row) {
        row = { t, m: undefined, s: undefined, o: undefined, r: recorded.map(() => undefined) };
        byTime.set(t, row);
        rows.push(row);
      }
      row.r[i] = point.value;
    }
  });
  rows.sort((a, b) => a.t - b.t); // stable: loop points at equal times keep their order
  return {
    t: rows.map((row) => row.t),
    m: rows.map((row) => row.m),
    s: rows.map((row) => row.s),
    o: rows.map((row) => row.o),
    r: recorded.map((_, i) => rows.map((row) => row.r[i])),
  };
}

/**
 * A value as the legend shows it: in the loop's unit with the loop's decimals; in another, five
 * significant digits at most (a gravity's 1.0504 SG, a humidity's 65.2 %RH).
 */
const formatValue = (value, decimals) =>
  decimals === undefined ? String(Number(value.toPrecision(5))) : value.toFixed(decimals);

/**
 * uPlot series, scales and axes for the recorded series, beside a loop shown in `loop.unit` with
 * `loop.decimals`; `shownValue` finds the value to show (chart.js's, for every series alike).
 */
export function recordedOptions(meta, loop, shownValue) {
  const series = meta.map((s, i) => ({
    label: legendOf(s),
    scale: scaleOf(s, loop.unit),
    stroke: COLORS[i % COLORS.length],
    width: 1.5,
    value: (u, x, si, idx) => {
      const value = shownValue(u, x, si, idx);
      if (value === null || value === undefined) return '—';
      const decimals = s.unit === loop.unit ? loop.decimals : undefined;
      return `${formatValue(value, decimals)} ${s.unit}`.trim();
    },
  }));
  const scales = {};
  const axes = [];
  meta.forEach((s, i) => {
    const scale = scaleOf(s, loop.unit);
    if (scale === 'y' || scales[scale]) return;
    scales[scale] = { range: (_u, min, max) => paddedRange(min, max) };
    axes.push({
      scale,
      label: s.unit,
      labelSize: 20,
      size: 54,
      side: 1,
      stroke: COLORS[i % COLORS.length],
      grid: { show: false },
      ticks: { stroke: '#e5e7eb' },
    });
  });
  return { series, scales, axes };
}

/** An axis of its own around its values, with a tenth of their span either side. */
function paddedRange(min, max) {
  if (min === null || max === null) return [0, 1];
  const pad = Math.max((max - min) * 0.1, Math.abs(max) * 1e-4, 1e-3);
  return [min - pad, max + pad];
}
