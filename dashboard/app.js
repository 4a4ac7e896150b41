// homeostat dashboard: one page served by the daemon, plain browser JavaScript, no build step.
// Everything it loads comes from the daemon (the node is often offline). API: /work/notes/API.md.
// uPlot is loaded by a deferred classic script before this module runs (document order).
const uPlot = globalThis.uPlot;

const RANGES_S = { '1h': 3600, '6h': 6 * 3600, '24h': 24 * 3600, '7d': 7 * 24 * 3600 };
const CHART_HEIGHT_PX = 220;
const EVENT_LIST_MAX = 50;
const COLORS = { measured: '#1d4ed8', setpoint: '#c2410c', output: '#15803d' };
// How an event shows on the chart: full-height lines for what a person did or a fault,
// short ticks at the bottom for actuator switches (a relay may switch every few minutes).
const MARKERS = {
  'setpoint-changed': { color: '#7c3aed', dash: [5, 3] },
  'mode-changed': { color: '#7c3aed', dash: [2, 3] },
  'fault-raised': { color: '#dc2626', dash: [] },
  'fault-reset': { color: '#15803d', dash: [5, 3] },
  'fault-cleared': { color: '#15803d', dash: [5, 3] },
  'command-rejected': { color: '#b45309', dash: [], tick: true },
  actuator: { color: '#4b5563', dash: [], tick: true },
};
const OTHER_MARKER = { color: '#6b7280', dash: [1, 3] };

const $ = (id) => document.getElementById(id);
const cards = new Map(); // loop id → card
let range = RANGES_S[localStorage.getItem('homeostat.range')]
  ? localStorage.getItem('homeostat.range')
  : '6h';

// ---------- requests (a 401 asks for the token once, then the request is retried) ----------

let signIn = null;

async function request(path, init = {}) {
  for (;;) {
    const res = await fetch(path, { credentials: 'same-origin', ...init });
    if (res.status !== 401) return res;
    await askToken();
  }
}

async function getJson(path) {
  const res = await request(path);
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body?.error ?? `HTTP ${res.status}`);
  return body;
}

async function postJson(path, body) {
  const res = await request(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, answer: await res.json().catch(() => null) };
}

/** Shows the token dialog; every request that got 401 waits on the same sign-in. */
function askToken() {
  signIn ??= new Promise((resolve) => {
    const dialog = $('auth-dialog');
    const form = $('auth-form');
    const note = $('auth-message');
    form.onsubmit = async (e) => {
      e.preventDefault();
      setMessage(note, 'pending', 'Checking…');
      const res = await fetch('/api/session', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: $('auth-token').value }),
      }).catch((err) => ({ ok: false, status: err.message }));
      if (!res.ok)
        return setMessage(note, 'error', res.status === 401 ? 'Wrong token' : `Refused (${res.status})`);
      setMessage(note, '', '');
      $('auth-token').value = '';
      dialog.close();
      signIn = null;
      resolve();
    };
    if (!dialog.open) dialog.showModal();
    $('auth-token').focus();
  });
  return signIn;
}

function setMessage(el, state, text) {
  el.dataset.state = state;
  el.textContent = text;
}

// ---------- formatting ----------

const decimalsOf = (step) => (String(step).split('.')[1] ?? '').length;
const fmt = (value, digits) => (value === null || value === undefined ? '—' : value.toFixed(digits));
const timeOf = (s) => new Date(s * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const dateTimeOf = (s) =>
  new Date(s * 1000).toLocaleString([], {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });

function withUnit(el, text, unit) {
  const small = document.createElement('small');
  small.textContent = unit;
  el.replaceChildren(text, unit ? ' ' : '', small);
}

/** The conditions worth a badge; `key` is stable (data-badge) for tests, `text` is for people. */
function badgesOf(v) {
  const find = (type) => v.conditions.find((c) => c.type === type);
  const out = [];
  const add = (key, text, level, c) =>
    out.push({ key, text, level, title: c ? `${c.type}=${c.status} (${c.reason}) ${c.message}` : '' });
  const when = (type, status, key, text, level) => {
    const c = find(type);
    if (c?.status === status) add(key, text, level, c);
  };
  when('Faulted', 'True', 'fault', 'fault', 'bad');
  when('SensorHealthy', 'False', 'stale-sensor', 'stale sensor', 'warn');
  when('Interlocked', 'True', 'interlocked', 'interlocked', 'warn');
  when('ActuatorConfirmed', 'False', 'actuator-unconfirmed', 'actuator unconfirmed', 'warn');
  when('Reconciled', 'False', 'cycle-failed', 'cycle failed', 'bad');
  when('Converged', 'False', 'not-converged', 'not converged', 'info');
  if (v.observedGeneration < v.generation) {
    add('not-reconciled', `not reconciled (${v.observedGeneration}/${v.generation})`, 'info');
  }
  if (out.length === 0) add('ok', 'ok', 'good');
  return out;
}

// ---------- header ----------

async function loadNode() {
  const { node, health } = await getJson('/api/node');
  $('node-name').textContent = node.name;
  $('node-id').textContent = `${node.id} · v${node.version}`;
  document.title = `${node.name} · homeostat`;
  const silent = health.silentLoops.map((s) => `${s.loop} (${Math.round(s.silentS)} s)`).join(', ');
  setState($('health'), health.ok ? 'ok' : 'bad', health.ok ? 'healthy' : `silent: ${silent}`);
  const { mqtt, storage } = health;
  if (!mqtt.configured) setState($('mqtt'), 'off', 'MQTT off');
  else
    setState(
      $('mqtt'),
      mqtt.connected ? 'ok' : 'bad',
      mqtt.connected ? 'MQTT connected' : 'MQTT disconnected',
    );
  setState($('storage'), storage.healthy ? 'ok' : 'bad', storage.healthy ? 'storage ok' : 'storage failing');
  $('storage').title = storage.message;
}

function refreshNode() {
  loadNode().catch((err) => setState($('health'), 'bad', `daemon unreachable (${err.message})`));
}

function setState(el, state, text) {
  el.dataset.state = state;
  el.textContent = text;
}

// ---------- cards ----------

async function loadLoops() {
  const { loops } = await getJson('/api/loops');
  const box = $('loops');
  const seen = new Set();
  for (const view of loops) {
    seen.add(view.loop);
    let card = cards.get(view.loop);
    if (card) renderLoop(card, view);
    else {
      card = createCard(view);
      cards.set(view.loop, card);
    }
    box.append(card.el); // appending an attached node moves it: cards follow the API's order
  }
  for (const [id, card] of cards) {
    if (seen.has(id)) continue;
    card.plot?.destroy();
    card.el.remove();
    cards.delete(id);
  }
  const empty = loops.length === 0;
  $('page-message').hidden = !empty;
  if (empty) setMessage($('page-message'), '', 'No loops configured.');
  for (const card of cards.values()) if (!card.plot) loadChart(card);
}

function createCard(view) {
  const el = $('card-template').content.firstElementChild.cloneNode(true);
  el.dataset.loop = view.loop;
  const part = (role) => el.querySelector(`[data-role="${role}"]`);
  const card = { loop: view.loop, el, part, view, plot: null, points: null, events: [], seq: 0 };
  const input = part('setpoint-input');
  part('setpoint-form').noValidate = true; // the daemon decides and says why; no silent browser bubble
  input.addEventListener('input', () => {
    input.dataset.dirty = '1';
  });
  input.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return; // give up the edit: back to the loop's setpoint
    delete input.dataset.dirty;
    input.value = String(card.view.setpoint);
  });
  part('setpoint-form').addEventListener('submit', (e) => {
    e.preventDefault();
    submitSetpoint(card);
  });
  part('mode-select').addEventListener('change', () => submitMode(card));
  part('show-switches').addEventListener('change', () => renderEvents(card));
  part('fault-reset').addEventListener('click', () =>
    write(card, 'fault-reset', `/api/loops/${encodeURIComponent(card.loop)}/fault-reset`, {}, 'Fault reset'),
  );
  new ResizeObserver(() => resizeChart(card)).observe(part('chart'));
  renderLoop(card, view);
  return card;
}

function renderLoop(card, v) {
  card.view = v;
  const { part } = card;
  const digits = decimalsOf(v.step);
  part('name').textContent = v.name;
  part('name').title = v.loop;
  part('action').textContent = v.action;
  part('action').dataset.action = v.action;
  withUnit(part('measured'), fmt(v.measured, Math.max(1, digits)), v.unit);
  withUnit(part('setpoint'), fmt(v.setpoint, digits), v.unit);
  part('output').textContent = `${Math.round(v.output * 100)} %`;
  part('conditions').replaceChildren(
    ...badgesOf(v).map((b) => {
      const li = document.createElement('li');
      li.className = `badge ${b.level}`;
      li.dataset.badge = b.key;
      li.textContent = b.text;
      li.title = b.title;
      return li;
    }),
  );
  const faulted = v.conditions.some((c) => c.type === 'Faulted' && c.status === 'True');
  part('fault-reset').hidden = !faulted;
  renderControls(card, v);
  const at = v.updatedAt ? new Date(v.updatedAt).toLocaleTimeString() : 'never';
  part('updated').textContent =
    `cycle ${at} · setpoint from ${v.desired.setpointSource}, mode from ${v.desired.modeSource} · generation ${v.observedGeneration}/${v.generation}`;
}

/** Fills the controls, leaving alone what the person is editing. */
function renderControls(card, v) {
  const input = card.part('setpoint-input');
  input.min = String(v.limits.min);
  input.max = String(v.limits.max);
  input.step = String(v.step);
  input.title = `${v.limits.min}…${v.limits.max} ${v.unit}, step ${v.step}`;
  if (document.activeElement !== input && !input.dataset.dirty) input.value = String(v.setpoint);
  const select = card.part('mode-select');
  if (select.dataset.modes !== v.modes.join()) {
    select.dataset.modes = v.modes.join();
    select.replaceChildren(...v.modes.map((m) => new Option(m.replace('_', '/'), m)));
  }
  if (document.activeElement !== select) select.value = v.mode;
}

// ---------- writes ----------

function submitSetpoint(card) {
  const input = card.part('setpoint-input');
  const setpoint = input.valueAsNumber;
  if (!Number.isFinite(setpoint)) return showResult(card, 'setpoint', 'error', 'Setpoint: enter a number');
  write(
    card,
    'setpoint',
    `/api/loops/${encodeURIComponent(card.loop)}`,
    { setpoint },
    `Setpoint ${setpoint}`,
  ).then((ok) => {
    if (ok) delete input.dataset.dirty;
  });
}

async function submitMode(card) {
  const mode = card.part('mode-select').value;
  const ok = await write(
    card,
    'mode',
    `/api/loops/${encodeURIComponent(card.loop)}`,
    { mode },
    `Mode ${mode}`,
  );
  if (!ok) card.part('mode-select').value = card.view.mode;
}

/** Sends one write and shows its answer next to the controls; true when accepted. */
async function write(card, control, path, body, what) {
  showResult(card, control, 'pending', `${what}…`);
  let answer;
  let status;
  try {
    ({ status, answer } = await postJson(path, body));
  } catch (err) {
    showResult(card, control, 'error', `${what}: no answer (${err.message})`);
    return false;
  }
  if (status === 200 && answer?.accepted) {
    const generation = answer.generation === undefined ? '' : ` (generation ${answer.generation})`;
    showResult(card, control, 'ok', `${what}: accepted${generation}`);
    refreshLoop(card.loop);
    return true;
  }
  const why = answer?.reason ?? answer?.error ?? `HTTP ${status}`;
  showResult(card, control, 'error', `${what}: refused — ${why}`);
  return false;
}

function showResult(card, control, state, text) {
  const el = card.part('message');
  el.dataset.for = control;
  setMessage(el, state, text);
}

async function refreshLoop(loop) {
  const card = cards.get(loop);
  if (!card) return;
  try {
    renderLoop(card, await getJson(`/api/loops/${encodeURIComponent(loop)}`));
  } catch {
    // the stream's next status fills the card anyway
  }
}

// ---------- chart ----------

async function loadChart(card) {
  const seq = ++card.seq; // a newer range choice wins over a slower, older answer
  const loop = encodeURIComponent(card.loop);
  const maxPoints = Math.min(5000, Math.max(200, Math.round(card.part('chart').clientWidth * 1.5)));
  try {
    const history = await getJson(`/api/loops/${loop}/history?since=${range}&maxPoints=${maxPoints}`);
    const since = encodeURIComponent(history.from);
    const { events } = await getJson(`/api/events?loop=${loop}&since=${since}&limit=1000`);
    if (seq !== card.seq) return;
    card.fromS = Date.parse(history.from) / 1000;
    card.toS = Date.parse(history.to) / 1000;
    card.points = { t: [], m: [], s: [], o: [] };
    for (const p of history.points) addPoint(card, p.at, p);
    card.events = events.map(eventOf);
    card.part('chart').dataset.downsampled = String(history.downsampled); // bucket averages
  } catch (err) {
    if (seq === card.seq) showResult(card, 'chart', 'error', `History: ${err.message}`);
    return;
  }
  renderEvents(card);
  if (card.plot) setChartData(card);
  else card.plot = new uPlot(chartOptions(card), dataOf(card), card.part('chart'));
}

function setChartData(card) {
  card.plot.setData(dataOf(card));
  if (card.plot.cursor.idx == null) card.plot.setLegend({ idx: null }); // the newest values
}

function addPoint(card, at, p) {
  const pts = card.points;
  pts.t.push(Date.parse(at) / 1000);
  pts.m.push(p.measured);
  pts.s.push(p.setpoint);
  pts.o.push(Math.round(p.output * 1000) / 10);
}

const eventOf = (e) => ({ t: Date.parse(e.at) / 1000, kind: e.kind, message: e.message, source: e.source });
const dataOf = (card) => [card.points.t, card.points.m, card.points.s, card.points.o];

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

function chartOptions(card) {
  const v = card.view;
  const digits = Math.max(1, decimalsOf(v.step));
  // Away from the cursor (idx null) the legend shows the newest values rather than dashes.
  const newest = (u, x, s, idx) => (idx === null ? u.data[s].at(-1) : x);
  const show = (suffix, d) => (u, x, s, idx) => {
    const value = newest(u, x, s, idx);
    return value === null || value === undefined ? '—' : `${value.toFixed(d)} ${suffix}`;
  };
  return {
    width: Math.max(200, card.part('chart').clientWidth),
    height: CHART_HEIGHT_PX,
    cursor: { drag: { x: false, y: false } }, // no drag-zoom: it fights page scrolling on a phone
    scales: {
      x: { time: true, range: () => [card.fromS, card.toS] },
      y: { range: (_u, min, max) => valueRange(card, min, max) },
      pct: { range: () => outputRange(card) },
    },
    series: [
      {
        label: 'time',
        value: (u, t, s, idx) => (newest(u, t, s, idx) ? dateTimeOf(newest(u, t, s, idx)) : '—'),
      },
      { label: 'measured', scale: 'y', stroke: COLORS.measured, width: 2, value: show(v.unit, digits) },
      {
        label: 'setpoint',
        scale: 'y',
        stroke: COLORS.setpoint,
        width: 2,
        dash: [6, 3],
        paths: uPlot.paths.stepped({ align: 1 }),
        value: show(v.unit, decimalsOf(v.step)),
      },
      {
        label: 'output',
        scale: 'pct',
        stroke: COLORS.output,
        fill: 'rgba(21, 128, 61, 0.08)',
        width: 1,
        paths: uPlot.paths.stepped({ align: 1 }),
        value: show('%', 0),
      },
    ],
    axes: [
      {
        stroke: '#374151',
        space: 64,
        values: timeTicks,
        grid: { stroke: '#e5e7eb' },
        ticks: { stroke: '#d1d5db' },
      },
      { scale: 'y', label: v.unit, labelSize: 18, size: 46, stroke: '#1f2937', grid: { stroke: '#e5e7eb' } },
      {
        scale: 'pct',
        label: 'output %',
        labelSize: 18,
        size: 42,
        side: 1,
        stroke: COLORS.output,
        grid: { show: false },
      },
    ],
    hooks: { draw: [(u) => drawMarkers(card, u)], setCursor: [(u) => hoverMarker(card, u)] },
  };
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

function resizeChart(card) {
  const width = Math.max(200, card.part('chart').clientWidth);
  if (card.plot && Math.abs(card.plot.width - width) > 1)
    card.plot.setSize({ width, height: CHART_HEIGHT_PX });
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
    const m = MARKERS[ev.kind] ?? OTHER_MARKER;
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

function renderEvents(card) {
  const all = card.part('show-switches').checked;
  const shown = all ? card.events : card.events.filter((e) => e.kind !== 'actuator');
  const newest = shown.slice(-EVENT_LIST_MAX).reverse();
  card.part('event-count').textContent = `(${shown.length})`;
  card.part('event-list').replaceChildren(
    ...newest.map((ev) => {
      const li = document.createElement('li');
      li.dataset.kind = ev.kind;
      const time = document.createElement('time');
      time.textContent = range === '1h' || range === '6h' ? timeOf(ev.t) : dateTimeOf(ev.t);
      const kind = document.createElement('span');
      kind.className = 'kind';
      kind.style.borderColor = (MARKERS[ev.kind] ?? OTHER_MARKER).color;
      kind.textContent = ev.kind;
      li.append(time, ' ', kind, ' ', ev.message);
      return li;
    }),
  );
}

/** Redraws a chart at most twice a second: under --speed statuses arrive many times a second. */
function scheduleChart(card) {
  if (card.redrawTimer || !card.plot) return;
  card.redrawTimer = setTimeout(() => {
    card.redrawTimer = null;
    setChartData(card);
  }, 500);
}

/** Slides the window to end at `t` and drops what fell out of it. */
function slideTo(card, t) {
  if (t <= card.toS) return;
  card.toS = t;
  card.fromS = t - RANGES_S[range];
  const pts = card.points;
  let drop = 0;
  while (drop < pts.t.length && pts.t[drop] < card.fromS) drop++;
  if (drop > 0) for (const k of ['t', 'm', 's', 'o']) pts[k].splice(0, drop);
  const keep = card.events.findIndex((e) => e.t >= card.fromS);
  if (keep !== 0) card.events.splice(0, keep === -1 ? card.events.length : keep);
}

// ---------- live stream ----------

let stream = null;
let broken = false;

function connectStream() {
  stream?.close();
  const es = new EventSource('/api/stream');
  stream = es;
  es.onopen = () => {
    setState($('live'), 'ok', 'live');
    if (broken) refreshAll(); // fill what was missed while disconnected
    broken = false;
  };
  es.onerror = () => {
    broken = true;
    if (es.readyState !== EventSource.CLOSED) return setState($('live'), 'warn', 'reconnecting…');
    // Closed for good (an HTTP error such as 401): ask through a plain request, then retry.
    setState($('live'), 'bad', 'offline');
    setTimeout(() => getJson('/api/node').then(connectStream, connectStream), 5000);
  };
  es.addEventListener('status', (e) => onStatus(JSON.parse(e.data)));
  es.addEventListener('event', (e) => onEvent(JSON.parse(e.data)));
}

function onStatus(view) {
  const card = cards.get(view.loop);
  if (!card) return void refreshLoops();
  renderLoop(card, view);
  if (!card.points || !view.updatedAt) return;
  const t = Date.parse(view.updatedAt) / 1000;
  const last = card.points.t.at(-1);
  if (last !== undefined && t <= last) return;
  slideTo(card, t);
  addPoint(card, view.updatedAt, view);
  scheduleChart(card);
}

function onEvent(e) {
  if (e.loop === null) {
    // node-wide: a config applied, a loop added or removed, the database recovered
    refreshLoops();
    refreshNode();
    return;
  }
  const card = cards.get(e.loop);
  if (!card?.points) return;
  const ev = eventOf(e);
  slideTo(card, ev.t);
  card.events.push(ev);
  renderEvents(card);
  scheduleChart(card);
  if (ev.kind !== 'actuator') refreshLoop(e.loop);
}

let loopsTimer = null;
function refreshLoops() {
  clearTimeout(loopsTimer);
  loopsTimer = setTimeout(() => loadLoops().catch(showPageError), 300);
}

function refreshAll() {
  refreshNode();
  for (const card of cards.values()) loadChart(card);
  refreshLoops();
}

function showPageError(err) {
  $('page-message').hidden = false;
  setMessage($('page-message'), 'error', `Cannot reach the daemon: ${err.message}. Retrying…`);
  setTimeout(() => loadLoops().then(() => ($('page-message').hidden = true), showPageError), 10_000);
}

// ---------- start ----------

function selectRange(next) {
  range = next;
  localStorage.setItem('homeostat.range', next);
  for (const b of document.querySelectorAll('[data-range]'))
    b.setAttribute('aria-pressed', b.dataset.range === next);
  for (const card of cards.values()) loadChart(card);
}

for (const b of document.querySelectorAll('[data-range]'))
  b.addEventListener('click', () => selectRange(b.dataset.range));
selectRange(range);
$('auth-dialog').addEventListener('cancel', (e) => e.preventDefault()); // nothing works without the token
refreshNode();
setInterval(refreshNode, 30_000);
loadLoops().then(connectStream, (err) => {
  showPageError(err);
  connectStream();
});
document.addEventListener('visibilitychange', () => {
  // a phone that slept may have a dead stream: reconnect and refill
  if (document.visibilityState === 'visible' && stream?.readyState === EventSource.CLOSED) connectStream();
});
