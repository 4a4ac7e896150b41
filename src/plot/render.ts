import { gapsBefore, minMaxPerBucket, splitRuns, type XY } from './downsample.js';
import { formatLocal, formatTick, localOffsetMs, timeTicks, valueTicks } from './ticks.js';
import { escapeXml, px } from './xml.js';

/**
 * A loop's history as one SVG picture (no dependencies, no scripts): measured value and setpoint
 * over a value axis on top, the controller output in % below, events as thin vertical lines
 * with their message as a tooltip, gaps in the readings left as gaps. Pure: same input, same
 * text (the time zone is an input too).
 */
export interface PlotPoint {
  tMs: number;
  /** null: no usable reading at that time (drawn as a gap). */
  measured: number | null;
  setpoint: number;
  /** Signed controller output −1..1 (positive raises, negative lowers). */
  output: number;
  action: string;
}

export interface PlotEvent {
  tMs: number;
  kind: string;
  message: string;
}

export interface PlotInput {
  loop: string;
  unit: string;
  fromMs: number;
  toMs: number;
  points: readonly PlotPoint[];
  events: readonly PlotEvent[];
  /** The loop has a lower actuator: output axis −100..100 %. Also assumed when an output is < 0. */
  splitRange?: boolean;
  /** Local time minus UTC at a time; the machine's zone by default. */
  offsetMs?: (tMs: number) => number;
}

export const PLOT_WIDTH = 1000;
export const PLOT_HEIGHT = 500;
/** Time buckets across the plot: at most two points each per run, so ≤ ~2000 points a series. */
export const PLOT_BUCKETS = 1000;

const LEFT = 64;
const RIGHT = PLOT_WIDTH - 24;
const TOP = { y0: 44, y1: 290 };
const BOTTOM = { y0: 316, y1: 436 };
const COLORS = {
  measured: '#1f77b4',
  setpoint: '#d62728',
  output: '#2ca02c',
  event: '#8c8c8c',
  fault: '#ff7f0e',
  switch: '#555555',
  grid: '#e5e5e5',
  axis: '#444444',
};
const FONT = 'font-family="sans-serif" font-size="11" fill="#333333"';
/** Labels closer than this to the previous one are left to the tooltip. */
const EVENT_LABEL_GAP_PX = 70;
const EVENT_LABEL_CHARS = 22;
/** Events of this kind are actuator switches: ticks under the output panel. */
const ACTUATOR_KIND = 'actuator';
const SWITCH_TICK_PX = 8;

export function renderPlot(input: PlotInput): string {
  const offsetMs = input.offsetMs ?? localOffsetMs;
  const fromMs = input.fromMs;
  const toMs = input.toMs > input.fromMs ? input.toMs : input.fromMs + 1;
  const x = (tMs: number) => LEFT + ((tMs - fromMs) / (toMs - fromMs)) * (RIGHT - LEFT);
  const parts = plotHead(input, fromMs, toMs, offsetMs);
  const ticks = placedTicks(fromMs, toMs, x, offsetMs);
  const points = [...input.points]
    .filter((p) => p.tMs >= fromMs && p.tMs <= toMs)
    .sort((a, b) => a.tMs - b.tMs);
  if (points.length === 0) {
    parts.push(
      frame(TOP),
      frame(BOTTOM),
      `<text x="${PLOT_WIDTH / 2}" y="${(TOP.y0 + TOP.y1) / 2}" text-anchor="middle" font-family="sans-serif" font-size="16" fill="#666666">no data in this range</text>`,
      timeAxis(ticks),
      '</svg>',
    );
    return parts.join('\n');
  }
  const series = plotSeries(points, fromMs, toMs);
  const top = valueScale(series);
  const out = outputScale(input.splitRange === true || points.some((p) => p.output < 0));
  parts.push(
    valueAxis(TOP, top.ticks, top.y, `${input.unit === '' ? 'value' : escapeXml(input.unit)}`),
    valueAxis(BOTTOM, out.ticks, out.y, 'output %'),
    timeGrid(ticks),
    eventMarks(input.events, fromMs, toMs, x, offsetMs),
    `<g clip-path="url(#top)">`,
    path(series.measured, x, top.y, COLORS.measured, 'stroke-width="1.5"'),
    // The setpoint over the measured line: where they coincide, the target still shows.
    path(series.setpoint, x, top.y, COLORS.setpoint, 'stroke-dasharray="6 3" stroke-width="1.5"'),
    '</g>',
    path(series.output, x, out.y, COLORS.output, 'stroke-width="1.2"'),
    `<clipPath id="top"><rect x="${LEFT}" y="${TOP.y0}" width="${RIGHT - LEFT}" height="${TOP.y1 - TOP.y0}"/></clipPath>`,
    frame(TOP),
    frame(BOTTOM),
    timeAxis(ticks),
    legend(),
    '</svg>',
  );
  return parts.join('\n');
}

/** The picture's opening: the svg element, its title (also the tooltip), the white background. */
function plotHead(
  input: PlotInput,
  fromMs: number,
  toMs: number,
  offsetMs: (tMs: number) => number,
): string[] {
  const title = `${input.loop}${input.unit === '' ? '' : ` (${input.unit})`}: ${formatLocal(fromMs, offsetMs)} to ${formatLocal(toMs, offsetMs)}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${PLOT_WIDTH}" height="${PLOT_HEIGHT}" viewBox="0 0 ${PLOT_WIDTH} ${PLOT_HEIGHT}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${PLOT_WIDTH}" height="${PLOT_HEIGHT}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="24" font-family="sans-serif" font-size="15" font-weight="bold" fill="#222222">${escapeXml(title)}</text>`,
  ];
}

/** The three lines, split at the readings' gaps; measured and output thinned to a min and max per bucket. */
interface PlotSeries {
  measured: XY[][];
  setpoint: XY[][];
  output: XY[][];
}

function plotSeries(points: readonly PlotPoint[], fromMs: number, toMs: number): PlotSeries {
  const breaks = gapsBefore(points.map((p) => p.tMs));
  const bucketMs = (toMs - fromMs) / PLOT_BUCKETS;
  const runsOf = (value: (p: PlotPoint) => number | null) =>
    splitRuns(
      points.map((p) => ({ tMs: p.tMs, value: value(p) })),
      breaks,
    );
  return {
    measured: minMaxPerBucket(
      runsOf((p) => p.measured),
      fromMs,
      bucketMs,
    ),
    setpoint: stepRuns(runsOf((p) => p.setpoint)),
    output: minMaxPerBucket(
      runsOf((p) => p.output * 100),
      fromMs,
      bucketMs,
    ),
  };
}

/** A panel's ticks and its value-to-y mapping. */
interface Scale {
  ticks: readonly number[];
  y: (value: number) => number;
}

/** Value axis: measured and setpoint together, padded so a flat line is not on the frame. */
function valueScale(series: PlotSeries): Scale {
  const values = [...series.measured.flat(), ...series.setpoint.flat()].map((p) => p.value);
  let low = Math.min(...values);
  let high = Math.max(...values);
  const pad = Math.max((high - low) * 0.08, 0.25);
  low -= pad;
  high += pad;
  const ticks = valueTicks(low, high, 6);
  low = Math.min(low, ticks[0]!);
  high = Math.max(high, ticks[ticks.length - 1]!);
  return { ticks, y: (v: number) => TOP.y1 - ((v - low) / (high - low)) * (TOP.y1 - TOP.y0) };
}

/** Output axis in %: 0..100, or −100..100 when the loop also lowers (`split`). */
function outputScale(split: boolean): Scale {
  const outLow = split ? -100 : 0;
  return {
    ticks: split ? [-100, -50, 0, 50, 100] : [0, 50, 100],
    y: (v: number) => BOTTOM.y1 - ((v - outLow) / (100 - outLow)) * (BOTTOM.y1 - BOTTOM.y0),
  };
}

/** The setpoint holds until it changes: drawn as steps, one corner per change. */
function stepRuns(runs: XY[][]): XY[][] {
  return runs.map((run) => {
    const out: XY[] = [];
    for (const point of run) {
      const last = out[out.length - 1];
      if (last && last.value !== point.value) out.push({ tMs: point.tMs, value: last.value });
      if (!last || last.value !== point.value) out.push(point);
    }
    const end = run[run.length - 1];
    if (end && out[out.length - 1] !== end) out.push(end);
    return out;
  });
}

function path(
  runs: XY[][],
  x: (tMs: number) => number,
  y: (value: number) => number,
  color: string,
  style: string,
): string {
  const d = runs
    .filter((run) => run.length > 0)
    .map((run) => {
      // A single reading between gaps is a short tick, not nothing.
      const only = run.length === 1 ? ` h1` : '';
      return `M${run.map((p) => `${px(x(p.tMs))} ${px(y(p.value))}`).join(' L')}${only}`;
    })
    .join(' ');
  return d === '' ? '' : `<path d="${d}" fill="none" stroke="${color}" ${style} stroke-linejoin="round"/>`;
}

function frame(panel: { y0: number; y1: number }): string {
  return `<rect x="${LEFT}" y="${panel.y0}" width="${RIGHT - LEFT}" height="${panel.y1 - panel.y0}" fill="none" stroke="${COLORS.axis}" stroke-width="1"/>`;
}

function valueAxis(
  panel: { y0: number; y1: number },
  ticks: readonly number[],
  y: (value: number) => number,
  label: string,
): string {
  const lines = ticks.map((tick) => {
    const at = px(y(tick));
    return (
      `<line x1="${LEFT}" y1="${at}" x2="${RIGHT}" y2="${at}" stroke="${COLORS.grid}" stroke-width="1"/>` +
      `<text x="${LEFT - 6}" y="${at}" dy="4" text-anchor="end" ${FONT}>${formatTick(tick, ticks)}</text>`
    );
  });
  const middle = (panel.y0 + panel.y1) / 2;
  return [
    '<g>',
    ...lines,
    `<text x="14" y="${middle}" text-anchor="middle" transform="rotate(-90 14 ${middle})" ${FONT}>${label}</text>`,
    '</g>',
  ].join('\n');
}

/** A time tick at its x pixel (formatted for the svg). */
interface PlacedTick {
  at: string;
  label: string;
}

function placedTicks(
  fromMs: number,
  toMs: number,
  x: (tMs: number) => number,
  offsetMs: (tMs: number) => number,
): PlacedTick[] {
  return timeTicks(fromMs, toMs, offsetMs).map(({ tMs, label }) => ({ at: px(x(tMs)), label }));
}

function timeGrid(ticks: readonly PlacedTick[]): string {
  return ticks
    .map(({ at }) =>
      [TOP, BOTTOM]
        .map(
          (p) =>
            `<line x1="${at}" y1="${p.y0}" x2="${at}" y2="${p.y1}" stroke="${COLORS.grid}" stroke-width="1"/>`,
        )
        .join(''),
    )
    .join('\n');
}

function timeAxis(ticks: readonly PlacedTick[]): string {
  return ticks
    .map(
      ({ at, label }) =>
        `<line x1="${at}" y1="${BOTTOM.y1}" x2="${at}" y2="${BOTTOM.y1 + 4}" stroke="${COLORS.axis}"/><text x="${at}" y="${BOTTOM.y1 + 17}" text-anchor="middle" ${FONT}>${escapeXml(label)}</text>`,
    )
    .join('\n');
}

function eventMarks(
  events: readonly PlotEvent[],
  fromMs: number,
  toMs: number,
  x: (tMs: number) => number,
  offsetMs: (tMs: number) => number,
): string {
  const inRange = events.filter((e) => e.tMs >= fromMs && e.tMs <= toMs).sort((a, b) => a.tMs - b.tMs);
  let lastLabelX = Number.NEGATIVE_INFINITY;
  return inRange
    .map((event) => {
      const at = x(event.tMs);
      if (event.kind === ACTUATOR_KIND) {
        // A relay switches every few minutes: a short tick under the output, not a full line.
        const tooltip = `${formatLocal(event.tMs, offsetMs)} ${event.message}`;
        return `<g><title>${escapeXml(tooltip)}</title><line x1="${px(at)}" y1="${BOTTOM.y1 - SWITCH_TICK_PX}" x2="${px(at)}" y2="${BOTTOM.y1}" stroke="${COLORS.switch}" stroke-width="1.5"/></g>`;
      }
      const color = /fault|alarm|error|abort/i.test(event.kind) ? COLORS.fault : COLORS.event;
      const tooltip = `${formatLocal(event.tMs, offsetMs)} ${event.kind}: ${event.message}`;
      let label = '';
      if (at - lastLabelX >= EVENT_LABEL_GAP_PX) {
        lastLabelX = at;
        const short =
          event.kind.length > EVENT_LABEL_CHARS
            ? `${event.kind.slice(0, EVENT_LABEL_CHARS - 1)}…`
            : event.kind;
        label = `<text x="${px(at + 3)}" y="${TOP.y0 + 11}" font-family="sans-serif" font-size="10" fill="${color}">${escapeXml(short)}</text>`;
      }
      return (
        `<g><title>${escapeXml(tooltip)}</title>` +
        `<line x1="${px(at)}" y1="${TOP.y0}" x2="${px(at)}" y2="${BOTTOM.y1}" stroke="${color}" stroke-width="1" stroke-dasharray="2 2"/>` +
        `${label}</g>`
      );
    })
    .join('\n');
}

function legend(): string {
  const y = PLOT_HEIGHT - 22;
  const items: [string, string, string][] = [
    ['measured', COLORS.measured, ''],
    ['setpoint', COLORS.setpoint, 'stroke-dasharray="6 3"'],
    ['output', COLORS.output, ''],
    ['event', COLORS.event, 'stroke-dasharray="2 2"'],
    ['fault', COLORS.fault, 'stroke-dasharray="2 2"'],
    ['actuator switch (tick under the output)', COLORS.switch, ''],
  ];
  let at = LEFT;
  const parts = items.map(([name, color, dash]) => {
    const item = `<line x1="${at}" y1="${y}" x2="${at + 24}" y2="${y}" stroke="${color}" stroke-width="2" ${dash}/><text x="${at + 30}" y="${y}" dy="4" ${FONT}>${name}</text>`;
    at += 40 + name.length * 6.2;
    return item;
  });
  return `<g>${parts.join('')}</g>`;
}
