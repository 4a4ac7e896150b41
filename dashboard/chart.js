// A loop's chart (uPlot): measured, setpoint and output over the chosen range, events as lines,
// and the sensors the loop records without regulating (recorded.js).
// uPlot is a classic deferred script that runs before the modules (document order): it is read
// as globalThis.uPlot when a chart is made, never at import.
import { getJson } from './api.js';
import { eventOf, markerOf, renderEvents } from './events.js';
import { mergeRecorded, recordedKey, recordedMeta, recordedOptions } from './recorded.js';
import { dateTimeOf, decimalsOf, RANGES_S, secondsOf, showResult, state } from './util.js';

const CHART_HEIGHT_PX = 240;
const COLORS = { measured: '#1d4ed8', setpoint: '#c2410c', output: '#15803d' };
const GRID = '#e5e7eb';
/** Marks the first chart drawn (performance.mark) for the time-to-first-chart figure. */
const FIRST_CHART_MARK = 'homeostat:first-chart';
/** How often a chart with recorded series asks for its history again (the stream has none of them). */
const RECORDED_REFRESH_MS = 60_000;

/** Loads the range's history and events, then draws (or redraws) the card's chart. */
export async function loadChart(card) {
  const seq = ++card.seq; // a newer range choice wins over a slower, older answer
  const loop = encodeURIComponent(card.loop);
  const maxPoints = Math.min(5000, Math.max(200, Math.round(card.part('chart').clientWidth * 1.5)));
  try {
    // Both at once (one round trip less before the chart): `since` is a duration for both.
    const [history, { events }] = await Promise.all([
      getJson(`/api/loops/${loop}/history?since=${state.range}&maxPoints=${maxPoints}`),
      getJson(`/api/events?loop=${loop}&since=${state.range}&limit=1000`),
    ]);
    if (seq !== card.seq) return;
    card.fromS = secondsOf(history.from);
    card.toS = secondsOf(history.to);
    const meta = recordedMeta(history);
    card.points = mergeRecorded(history.points, history.recorded ?? [], rowOf);
    card.events = events.map(eventOf);
    card.part('chart').dataset.downsampled = String(history.downsampled); // bucket averages
    renderEvents(card);
    drawChart(card, meta);
    clearTimeout(card.recordedTimer);
    if (meta.length > 0) {
      card.recordedTimer = setTimeout(() => card.el.isConnected && loadChart(card), RECORDED_REFRESH_MS);
    }
  } catch (err) {
    if (seq === card.seq) showResult(card, 'chart', 'error', `History: ${err.message}`);
  }
}

/** Draws the card's points: a new chart when the recorded series changed (their axes with them). */
function drawChart(card, meta) {
  const key = recordedKey(meta);
  if (card.plot && card.recordedKey === key) {
    setChartData(card);
    return;
  }
  card.plot?.destroy();
  card.recordedKey = key;
  card.plot = new globalThis.uPlot(chartOptions(card, meta), dataOf(card), card.part('chart'));
}

function setChartData(card) {
  card.plot.setData(dataOf(card));
  if (card.plot.cursor.idx == null) card.plot.setLegend({ idx: null }); // the newest values
}

/** A history point as the chart's columns (output in %). */
const rowOf = (p) => ({
  t: secondsOf(p.at),
  m: p.measured,
  s: p.setpoint,
  o: Math.round(p.output * 1000) / 10,
});

/** Appends a live status (it has measured, setpoint, output); the recorded series have none. */
export function addPoint(card, at, p) {
  const pts = card.points;
  const row = rowOf({ ...p, at });
  for (const k of ['t', 'm', 's', 'o']) pts[k].push(row[k]);
  for (const column of pts.r) column.push(undefined);
}

const dataOf = (card) => [card.points.t, card.points.m, card.points.s, card.points.o, ...card.points.r];

/** Redraws a chart at most twice a second: under --speed statuses arrive many times a second. */
export function scheduleChart(card) {
  if (card.redrawTimer || !card.plot) return;
  card.redrawTimer = setTimeout(() => {
    card.redrawTimer = null;
    setChartData(card);
  }, 500);
}

/** Slides the window to end at `t` and drops what fell out of it. */
export function slideTo(card, t) {
  if (t <= card.toS) return;
  card.toS = t;
  card.fromS = t - RANGES_S[state.range];
  const pts = card.points;
  let drop = 0;
  while (drop < pts.t.length && pts.t[drop] < card.fromS) drop++;
  if (drop > 0) for (const column of [pts.t, pts.m, pts.s, pts.o, ...pts.r]) column.splice(0, drop);
  const keep = card.events.findIndex((e) => e.t >= card.fromS);
  if (keep !== 0) card.events.splice(0, keep === -1 ? card.events.length : keep);
}

export function resizeChart(card) {
  const width = Math.max(200, card.part('chart').clientWidth);
  if (card.plot && Math.abs(card.plot.width - width) > 1) {
    card.plot.setSize({ width, height: CHART_HEIGHT_PX });
  }
}

/** Output axis: 0..100 % for a loop that only raises, −100..0 for one that only lowers. */
function outputRange(card) {
  const modes = card.view.modes;
  const raises = modes.some((m) => ['heat', 'humidify', 'heat_cool', 'auto'].includes(m));
  const lowers = modes.some((m) => ['cool', 'dehumidify', 'heat_cool', 'auto'].includes(m));
  const o = card.points?.o ?? [];
  return [lowers || o.some((x) => x < 0) ? -100 : 0, raises || !lowers || o.some((x) => x > 0) ? 100 : 0];
}

function valueRange(card, min, max) {
  const { limits, step } = card.view;
  if (min === null || max === null) return [limits.min, limits.max];
  const pad = Math.max((max - min) * 0.1, step, 0.5);
  return [min - pad, max + pad];
}

/**
 * The value a legend shows for series `s`: under the cursor, the value in force there (the last
 * one at or before it: on a time only another series has, this one has none of its own); away
 * from the cursor (idx null), the newest. A gap (null) shows as one.
 */
function valueAt(u, s, idx) {
  const column = u.data[s];
  for (let i = idx ?? column.length - 1; i >= 0; i--) if (column[i] !== undefined) return column[i];
  return undefined;
}

function chartOptions(card, meta) {
  const loop = { unit: card.view.unit, decimals: Math.max(1, decimalsOf(card.view.step)) };
  const recorded = recordedOptions(meta, loop, (u, _x, s, idx) => valueAt(u, s, idx));
  return {
    width: Math.max(200, card.part('chart').clientWidth),
    height: CHART_HEIGHT_PX,
    cursor: { drag: { x: false, y: false } }, // no drag-zoom: it fights page scrolling on a phone
    scales: {
      x: { time: true, range: () => [card.fromS, card.toS] },
      y: { range: (_u, min, max) => valueRange(card, min, max) },
      pct: { range: () => outputRange(card) },
      ...recorded.scales,
    },
    series: [...loopSeries(card), ...recorded.series],
    axes: [...loopAxes(card), ...recorded.axes],
    hooks: {
      draw: [(u) => drawMarkers(card, u), (u) => noteDrawn(card, u)],
      setCursor: [(u) => hoverMarker(card, u)],
    },
  };
}

/** Time, measured, setpoint and output. */
function loopSeries(card) {
  const v = card.view;
  const digits = Math.max(1, decimalsOf(v.step));
  const stepped = globalThis.uPlot.paths.stepped({ align: 1 });
  const show = (suffix, d) => (u, _x, s, idx) => {
    const value = valueAt(u, s, idx);
    return value === null || value === undefined ? '—' : `${value.toFixed(d)} ${suffix}`;
  };
  return [
    {
      label: 'time',
      value: (u, _t, s, idx) => {
        const t = valueAt(u, s, idx);
        return t ? dateTimeOf(t) : '—';
      },
    },
    { label: 'measured', scale: 'y', stroke: COLORS.measured, width: 2, value: show(v.unit, digits) },
    {
      label: 'setpoint',
      scale: 'y',
      stroke: COLORS.setpoint,
      width: 2,
      dash: [6, 3],
      paths: stepped,
      value: show(v.unit, decimalsOf(v.step)),
    },
    {
      label: 'output',
      scale: 'pct',
      // Lighter than the measured value it explains: a relay's PID output swings a lot.
      stroke: 'rgba(21, 128, 61, 0.6)',
      fill: 'rgba(21, 128, 61, 0.07)',
      width: 1,
      paths: stepped,
      value: show('%', 0),
    },
  ];
}

/** Time below, the loop's unit on the left, output % on the right. */
function loopAxes(card) {
  return [
    { stroke: '#374151', space: 70, values: timeTicks, grid: { stroke: GRID }, ticks: { stroke: GRID } },
    {
      scale: 'y',
      label: card.view.unit,
      labelSize: 20,
      size: 48,
      stroke: '#1f2937',
      grid: { stroke: GRID },
      ticks: { stroke: GRID },
    },
    {
      scale: 'pct',
      label: 'output %',
      labelSize: 20,
      size: 46,
      side: 1,
      stroke: COLORS.output,
      grid: { show: false },
      ticks: { stroke: GRID },
    },
  ];
}

/**
 * After a draw: how many points the chart holds (data-points) and how many have a measured
 * value (data-measured) or a value of each recorded series (data-recorded, comma-separated), and when it was first drawn (data-drawn-at-ms), for tests and the
 * time-to-first-chart figure; the page's first chart is also a performance mark.
 */
function noteDrawn(card, u) {
  const el = card.part('chart');
  const count = String(u.data[0].length);
  if (el.dataset.points !== count) {
    el.dataset.points = count;
    el.dataset.measured = String(u.data[1].filter((m) => m !== null && m !== undefined).length);
    // Per recorded series, how many of its points have a value (after the loop's four columns).
    el.dataset.recorded = u.data
      .slice(4)
      .map((column) => column.filter((x) => x !== null && x !== undefined).length)
      .join(',');
  }
  if (el.dataset.drawnAtMs) return;
  el.dataset.drawnAtMs = performance.now().toFixed(0); // since navigation start
  if (performance.getEntriesByName(FIRST_CHART_MARK).length === 0) performance.mark(FIRST_CHART_MARK);
}

/** Time ticks in the browser's locale (24 h where people use it); days at midnight and on 7 d. */
function timeTicks(_u, splits, _axisIdx, _space, incrS) {
  return splits.map((s) => {
    const d = new Date(s * 1000);
    const midnight = d.getHours() === 0 && d.getMinutes() === 0;
    if (incrS >= 86400 || midnight) return d.toLocaleDateString([], { month: 'short', day: 'numeric' });
    return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  });
}

/** Vertical lines at the events (canvas pixels: bbox and valToPos(…, true) are both in them). */
function drawMarkers(card, u) {
  const { ctx } = u;
  const { left, top, width, height } = u.bbox;
  const dpr = window.devicePixelRatio || 1;
  // Switch ticks closer than 4 px apart would merge into a bar: then only the list shows them.
  const switches = card.events.filter((e) => e.kind === 'actuator').length;
  const ticks = switches * 4 * dpr <= width;
  ctx.save();
  for (const ev of card.events) {
    if (ev.kind === 'actuator' && !ticks) continue;
    const x = Math.round(u.valToPos(ev.t, 'x', true)) + 0.5;
    if (x < left || x > left + width) continue;
    const m = markerOf(ev.kind);
    ctx.strokeStyle = m.color;
    ctx.lineWidth = (ev === card.hovered ? 3 : 1.5) * dpr;
    ctx.setLineDash(m.dash.map((d) => d * dpr));
    ctx.beginPath();
    ctx.moveTo(x, m.tick ? top + height * 0.9 : top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
  }
  ctx.restore();
}

/** The message of the event under the cursor (within 6 px), in a small tip over the chart. */
function hoverMarker(card, u) {
  const { left } = u.cursor;
  let best = null;
  let bestPx = 6;
  if (left !== null && left >= 0) {
    for (const ev of card.events) {
      const px = Math.abs(u.valToPos(ev.t, 'x') - left);
      if (px <= bestPx) [best, bestPx] = [ev, px];
    }
  }
  if (best === card.hovered) return;
  card.hovered = best;
  let tip = u.over.querySelector('.marker-tip');
  if (!tip) {
    tip = document.createElement('div');
    tip.className = 'marker-tip';
    tip.dataset.role = 'marker-tip';
    u.over.append(tip);
  }
  tip.hidden = !best;
  if (best) {
    tip.textContent = `${dateTimeOf(best.t)} · ${best.message}`;
    const x = u.valToPos(best.t, 'x');
    tip.style.left = `${Math.min(x + 6, Math.max(0, u.over.clientWidth - 220))}px`;
  }
  u.redraw(false, false);
}
