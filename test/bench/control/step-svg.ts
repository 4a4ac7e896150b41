/**
 * Step-response pictures of the autotune section, pure (text in, text out): one SVG per plant,
 * a row per actuator, a column per tuning (SIMC on the true model, homeostat's autotune, the
 * peers' relay + Ziegler–Nichols), each cell the reading, the true value and the setpoint on
 * top and the output in % below. A row shares its value scale, so the columns compare at a
 * glance; the time axis is from the step. Not src/plot/render.ts: that one draws one loop's
 * history against wall-clock time; this needs several runs side by side on a relative axis.
 */

import { formatTick, valueTicks } from '../../../src/plot/ticks.js';
import { escapeXml, px } from '../../../src/plot/xml.js';
import type { StepTrace } from './autotune-step.js';

export interface StepPanel {
  /** The row's title (the actuator and its modulation). */
  title: string;
  traces: Partial<Record<string, StepTrace>>;
  /**
   * Draw the output as its mean over this many seconds (a time-proportioned relay: its window),
   * else as the mean per pixel. Pixels alias against a window a few pixels wide.
   */
  outputMeanS?: number;
}

export interface StepPicture {
  title: string;
  unit: string;
  panels: readonly StepPanel[];
  labels: Record<string, string>;
  /** Column order (keys of `traces`). The first two are the references the value scale keeps whole. */
  order: readonly string[];
  /** End of the time axis, s from the step (default: the traces' end). */
  toS?: number;
}

const CELL_W = 300;
const LEFT = 58;
const PLOT_W = CELL_W - 40;
const TITLE_H = 40;
const ROW_TITLE_H = 22;
const COL_TITLE_H = 18;
const VALUE_H = 150;
const GAP_H = 14;
const OUTPUT_H = 60;
const AXIS_H = 34;
const ROW_H = ROW_TITLE_H + COL_TITLE_H + VALUE_H + GAP_H + OUTPUT_H + AXIS_H;
const LEGEND_H = 30;
/** Buckets across a plot: min and max of each, so spikes stay visible at ~2 points per px. */
const BUCKETS = PLOT_W;
const COLORS = {
  reading: '#9ecae1',
  value: '#08519c',
  setpoint: '#d62728',
  output: '#2ca02c',
  grid: '#e5e5e5',
  axis: '#444444',
};
const FONT = 'font-family="sans-serif" font-size="11" fill="#333333"';

export function renderStepSvg(picture: StepPicture): string {
  const columns = picture.order.length;
  const width = LEFT + columns * CELL_W;
  const height = TITLE_H + picture.panels.length * ROW_H + LEGEND_H;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<title>${escapeXml(picture.title)}</title>`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="26" font-family="sans-serif" font-size="16" font-weight="bold" fill="#222222">${escapeXml(picture.title)}</text>`,
  ];
  picture.panels.forEach((panel, row) => {
    const y0 = TITLE_H + row * ROW_H;
    parts.push(...renderRow(picture, panel, y0, row));
  });
  parts.push(...legend(height - LEGEND_H + 16, picture.unit));
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function renderRow(picture: StepPicture, panel: StepPanel, y0: number, row: number): string[] {
  const traces = picture.order.map((key) => panel.traces[key]);
  const present = traces.filter((t): t is StepTrace => t !== undefined);
  if (present.length === 0) return [];
  const parts: string[] = [];
  parts.push(
    `<text x="${LEFT - 50}" y="${y0 + 15}" font-family="sans-serif" font-size="13" font-weight="bold" fill="#222222">${escapeXml(panel.title)}</text>`,
  );
  // Shared scales: time over the window, values over every trace of the row, but at most 3
  // steps beyond the references' (the first two columns') own range: an unstable tuning must
  // not squash the others flat, and a relay's ripple must still show whole in the references.
  const tMin = Math.min(...present.map((t) => t.tS[0]!));
  const tMax = picture.toS ?? Math.max(...present.map((t) => t.tS[t.tS.length - 1]!));
  const inWindow = (t: StepTrace, series: number[]) => series.filter((_, i) => t.tS[i]! <= tMax);
  const spLow = Math.min(...present.map((t) => Math.min(...t.setpoint)));
  const spHigh = Math.max(...present.map((t) => Math.max(...t.setpoint)));
  const step = Math.max(spHigh - spLow, 0.1);
  const low = (list: StepTrace[]) => Math.min(spLow, ...list.map((t) => Math.min(...inWindow(t, t.value))));
  const high = (list: StepTrace[]) => Math.max(spHigh, ...list.map((t) => Math.max(...inWindow(t, t.value))));
  const references = traces.slice(0, 2).filter((t): t is StepTrace => t !== undefined);
  const vMin = Math.max(low(present), low(references) - 3 * step) - 0.05 * step;
  const vMax = Math.min(high(present), high(references) + 3 * step) + 0.05 * step;
  const hours = tMax - tMin > 3 * 3600;
  const tUnit = hours ? 3600 : 60;
  traces.forEach((trace, col) => {
    const x0 = LEFT + col * CELL_W;
    const top = y0 + ROW_TITLE_H + COL_TITLE_H;
    const outTop = top + VALUE_H + GAP_H;
    const x = (tS: number) => x0 + ((tS - tMin) / (tMax - tMin)) * PLOT_W;
    const yv = (v: number) => top + VALUE_H - ((v - vMin) / (vMax - vMin)) * VALUE_H;
    const yo = (level: number) => outTop + OUTPUT_H - level * OUTPUT_H;
    const key = picture.order[col]!;
    parts.push(
      `<text x="${x0}" y="${top - 6}" font-family="sans-serif" font-size="12" font-weight="bold" fill="#222222">${escapeXml(picture.labels[key] ?? key)}</text>`,
    );
    const clip = `clip-${row}-${col}`;
    parts.push(
      `<clipPath id="${clip}"><rect x="${x0}" y="${top}" width="${PLOT_W}" height="${VALUE_H}"/></clipPath>`,
      `<rect x="${x0}" y="${top}" width="${PLOT_W}" height="${VALUE_H}" fill="none" stroke="${COLORS.axis}" stroke-width="0.8"/>`,
      `<rect x="${x0}" y="${outTop}" width="${PLOT_W}" height="${OUTPUT_H}" fill="none" stroke="${COLORS.axis}" stroke-width="0.8"/>`,
    );
    // value grid and labels
    const ticks = valueTicks(vMin, vMax, 5);
    for (const v of ticks) {
      parts.push(
        `<line x1="${x0}" x2="${x0 + PLOT_W}" y1="${px(yv(v))}" y2="${px(yv(v))}" stroke="${COLORS.grid}"/>`,
      );
      parts.push(
        `<text x="${x0 - 4}" y="${px(yv(v) + 4)}" text-anchor="end" ${FONT}>${escapeXml(formatTick(v, ticks))}</text>`,
      );
    }
    if (col === 0) {
      parts.push(
        `<text transform="translate(${x0 - 42} ${top + VALUE_H / 2}) rotate(-90)" text-anchor="middle" ${FONT}>${escapeXml(picture.unit)}</text>`,
      );
    }
    for (const level of [0, 0.5, 1]) {
      parts.push(
        `<line x1="${x0}" x2="${x0 + PLOT_W}" y1="${px(yo(level))}" y2="${px(yo(level))}" stroke="${COLORS.grid}"/>`,
      );
      parts.push(
        `<text x="${x0 - 4}" y="${px(yo(level) + 4)}" text-anchor="end" ${FONT}>${level * 100}</text>`,
      );
    }
    if (col === 0) {
      parts.push(
        `<text transform="translate(${x0 - 42} ${outTop + OUTPUT_H / 2}) rotate(-90)" text-anchor="middle" ${FONT}>output %</text>`,
      );
    }
    // time axis
    const tTicks = valueTicks(tMin / tUnit, tMax / tUnit, 5);
    for (const t of tTicks) {
      const xt = x(t * tUnit);
      if (xt < x0 - 0.5 || xt > x0 + PLOT_W + 0.5) continue;
      parts.push(
        `<line x1="${px(xt)}" x2="${px(xt)}" y1="${top}" y2="${top + VALUE_H}" stroke="${COLORS.grid}"/>`,
      );
      parts.push(
        `<line x1="${px(xt)}" x2="${px(xt)}" y1="${outTop + OUTPUT_H}" y2="${outTop + OUTPUT_H + 4}" stroke="${COLORS.axis}"/>`,
      );
      parts.push(
        `<text x="${px(xt)}" y="${outTop + OUTPUT_H + 15}" text-anchor="middle" ${FONT}>${escapeXml(formatTick(t, tTicks))}</text>`,
      );
    }
    parts.push(
      `<text x="${x0 + PLOT_W / 2}" y="${outTop + OUTPUT_H + 29}" text-anchor="middle" ${FONT}>${hours ? 'h' : 'min'} from the step</text>`,
    );
    if (trace === undefined) {
      parts.push(
        `<text x="${x0 + PLOT_W / 2}" y="${top + VALUE_H / 2}" text-anchor="middle" ${FONT}>no tuning (autotune aborted)</text>`,
      );
      return;
    }
    const n = trace.tS.findIndex((t) => t > tMax);
    const end = n < 0 ? trace.tS.length : n;
    const tS = trace.tS.slice(0, end);
    const bucketed = (series: number[]) => minMaxPath(tS, series.slice(0, end), tMin, tMax, x);
    parts.push(
      `<g clip-path="url(#${clip})">`,
      `<polyline fill="none" stroke="${COLORS.reading}" stroke-width="1" points="${bucketed(trace.measured)
        .map(([a, b]) => `${px(a)},${px(yv(b))}`)
        .join(' ')}"/>`,
      `<polyline fill="none" stroke="${COLORS.setpoint}" stroke-width="1.2" stroke-dasharray="5 3" points="${stepPath(
        tS,
        trace.setpoint.slice(0, end),
      )
        .map(([a, b]) => `${px(x(a))},${px(yv(b))}`)
        .join(' ')}"/>`,
      `<polyline fill="none" stroke="${COLORS.value}" stroke-width="1.4" points="${bucketed(trace.value)
        .map(([a, b]) => `${px(a)},${px(yv(b))}`)
        .join(' ')}"/>`,
      '</g>',
      `<polyline fill="none" stroke="${COLORS.output}" stroke-width="1" points="${meanPath(
        tS,
        movingMean(trace.tS, trace.level, panel.outputMeanS).slice(0, end),
        tMin,
        tMax,
        x,
      )
        .map(([a, b]) => `${px(a)},${px(yo(b))}`)
        .join(' ')}"/>`,
    );
  });
  return parts;
}

/** Min and max of each pixel bucket, in time order within it: spikes and noise stay visible. */
function minMaxPath(
  tS: readonly number[],
  series: readonly number[],
  tMin: number,
  tMax: number,
  x: (tS: number) => number,
): [number, number][] {
  const out: [number, number][] = [];
  let bucket = -1;
  let lo = 0;
  let hi = 0;
  let loT = 0;
  let hiT = 0;
  const flush = () => {
    if (bucket < 0) return;
    const [a, b] = loT <= hiT ? [lo, hi] : [hi, lo];
    const xb = x(tMin + ((bucket + 0.5) / BUCKETS) * (tMax - tMin));
    out.push([xb, a]);
    if (b !== a) out.push([xb, b]);
  };
  for (let i = 0; i < tS.length; i++) {
    const b = Math.min(BUCKETS - 1, Math.floor(((tS[i]! - tMin) / (tMax - tMin)) * BUCKETS));
    const v = series[i]!;
    if (b !== bucket) {
      flush();
      bucket = b;
      lo = hi = v;
      loT = hiT = i;
    } else {
      if (v < lo) [lo, loT] = [v, i];
      if (v > hi) [hi, hiT] = [v, i];
    }
  }
  flush();
  return out;
}

/** Mean of each pixel bucket (a relay's duty; a continuous output's level). */
function meanPath(
  tS: readonly number[],
  series: readonly number[],
  tMin: number,
  tMax: number,
  x: (tS: number) => number,
): [number, number][] {
  const out: [number, number][] = [];
  let bucket = -1;
  let sum = 0;
  let n = 0;
  const flush = () => {
    if (n > 0) out.push([x(tMin + ((bucket + 0.5) / BUCKETS) * (tMax - tMin)), sum / n]);
  };
  for (let i = 0; i < tS.length; i++) {
    const b = Math.min(BUCKETS - 1, Math.floor(((tS[i]! - tMin) / (tMax - tMin)) * BUCKETS));
    if (b !== bucket) {
      flush();
      bucket = b;
      sum = 0;
      n = 0;
    }
    sum += series[i]!;
    n++;
  }
  flush();
  return out;
}

/** Trailing mean over `spanS` (the trace's points are evenly spaced); the series itself without. */
function movingMean(tS: readonly number[], series: readonly number[], spanS: number | undefined): number[] {
  if (spanS === undefined || tS.length < 2) return [...series];
  const n = Math.max(1, Math.round(spanS / (tS[1]! - tS[0]!)));
  const out: number[] = [];
  let sum = 0;
  for (let i = 0; i < series.length; i++) {
    sum += series[i]!;
    if (i >= n) sum -= series[i - n]!;
    out.push(sum / Math.min(i + 1, n));
  }
  return out;
}

/** A piecewise-constant series as corner points (the setpoint's step stays vertical). */
function stepPath(tS: readonly number[], series: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < tS.length; i++) {
    if (i > 0 && series[i] !== series[i - 1]) out.push([tS[i]!, series[i - 1]!]);
    if (i === 0 || i === tS.length - 1 || series[i] !== series[i - 1]) out.push([tS[i]!, series[i]!]);
  }
  return out;
}

function legend(y: number, unit: string): string[] {
  const items: [string, string, string][] = [
    [COLORS.reading, '', `reading (σ 0.05, 0.0625 ${unit} steps)`],
    [COLORS.value, '', 'true value'],
    [COLORS.setpoint, '5 3', 'setpoint'],
    [COLORS.output, '', 'output (a relay: its duty, the mean per pixel or per window)'],
  ];
  const parts: string[] = [];
  let x = LEFT;
  for (const [color, dash, label] of items) {
    parts.push(
      `<line x1="${x}" x2="${x + 22}" y1="${y - 4}" y2="${y - 4}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`,
      `<text x="${x + 28}" y="${y}" ${FONT}>${escapeXml(label)}</text>`,
    );
    x += 40 + label.length * 6.2;
  }
  return parts;
}
