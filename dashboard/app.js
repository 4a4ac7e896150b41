// homeostat dashboard: one page served by the daemon, plain browser JavaScript modules, no build
// step. Everything it loads comes from the daemon (the node is often offline). This module: the
// header, the list of cards, the live stream and the start. API: GET /api/openapi.json (src/http/schemas.ts).
import { refreshAlerts } from './alerts.js';
import { getJson } from './api.js';
import { createCard, refreshLoop, renderLoop } from './cards.js';
import { addPoint, loadChart, scheduleChart, slideTo } from './chart.js';
import { eventOf, renderEvents } from './events.js';
import { $, setMessage, state } from './util.js';

// ---------- header ----------

async function loadNode() {
  const { node, health } = await getJson('/api/node');
  $('node-name').textContent = node.name;
  $('node-id').textContent = `${node.id} · v${node.version}`;
  document.title = `${node.name} · homeostat`;
  const silent = health.silentLoops.map((s) => `${s.loop} (${Math.round(s.silentS)} s)`).join(', ');
  setMessage($('health'), health.ok ? 'ok' : 'bad', health.ok ? 'healthy' : `silent: ${silent}`);
  const { mqtt, storage } = health;
  if (!mqtt.configured) setMessage($('mqtt'), 'off', 'MQTT off');
  else if (mqtt.connected) setMessage($('mqtt'), 'ok', 'MQTT connected');
  else setMessage($('mqtt'), 'bad', 'MQTT disconnected');
  setMessage(
    $('storage'),
    storage.healthy ? 'ok' : 'bad',
    storage.healthy ? 'storage ok' : 'storage failing',
  );
  $('storage').title = storage.message;
}

function refreshNode() {
  loadNode().catch((err) => setMessage($('health'), 'bad', `daemon unreachable (${err.message})`));
}

// ---------- cards ----------

async function loadLoops() {
  // As in refreshLoop: a card the stream updated while this was asked for keeps the newer status.
  const streamed = new Map([...state.cards].map(([loop, card]) => [loop, card.streamed ?? 0]));
  const { loops } = await getJson('/api/loops');
  const box = $('loops');
  const seen = new Set();
  for (const view of loops) {
    seen.add(view.loop);
    let card = state.cards.get(view.loop);
    if (card) {
      if ((card.streamed ?? 0) === (streamed.get(view.loop) ?? 0)) renderLoop(card, view);
    } else {
      card = createCard(view);
      state.cards.set(view.loop, card);
    }
    box.append(card.el); // appending an attached node moves it: cards follow the API's order
  }
  for (const [id, card] of state.cards) {
    if (seen.has(id)) continue;
    card.plot?.destroy();
    card.el.remove();
    state.cards.delete(id);
  }
  const empty = loops.length === 0;
  $('page-message').hidden = !empty;
  if (empty) setMessage($('page-message'), '', 'No loops configured.');
  for (const card of state.cards.values()) if (!card.plot) loadChart(card);
}

let loopsTimer = null;
function refreshLoops() {
  clearTimeout(loopsTimer);
  loopsTimer = setTimeout(() => loadLoops().catch(showPageError), 300);
}

function refreshAll() {
  refreshNode();
  refreshAlerts();
  for (const card of state.cards.values()) loadChart(card);
  refreshLoops();
}

function showPageError(err) {
  $('page-message').hidden = false;
  setMessage($('page-message'), 'error', `Cannot reach the daemon: ${err.message}. Retrying…`);
  setTimeout(() => {
    loadLoops().then(() => {
      $('page-message').hidden = true;
    }, showPageError);
  }, 10_000);
}

// ---------- live stream ----------

let stream = null;
let broken = false;

function connectStream() {
  stream?.close();
  const es = new EventSource('/api/stream');
  stream = es;
  es.onopen = () => {
    setMessage($('live'), 'ok', 'live');
    if (broken) refreshAll(); // fill what was missed while disconnected
    broken = false;
  };
  es.onerror = () => {
    broken = true;
    if (es.readyState !== EventSource.CLOSED) {
      setMessage($('live'), 'warn', 'reconnecting…');
      return;
    }
    // Closed for good (an HTTP error such as 401): ask through a plain request, then retry.
    setMessage($('live'), 'bad', 'offline');
    setTimeout(() => getJson('/api/node').then(connectStream, connectStream), 5000);
  };
  es.addEventListener('status', (e) => onStatus(JSON.parse(e.data)));
  es.addEventListener('event', (e) => onEvent(JSON.parse(e.data)));
}

function onStatus(view) {
  const card = state.cards.get(view.loop);
  if (!card) {
    refreshLoops();
    return;
  }
  // Counted so a slower API answer asked for before it does not undo it (refreshLoop).
  card.streamed = (card.streamed ?? 0) + 1;
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
  const card = state.cards.get(e.loop);
  if (!card?.points) return;
  const ev = eventOf(e);
  slideTo(card, ev.t);
  card.events.push(ev);
  renderEvents(card);
  scheduleChart(card);
  if (ev.kind !== 'actuator') refreshLoop(e.loop);
}

// ---------- start ----------

function selectRange(next) {
  state.range = next;
  localStorage.setItem('homeostat.range', next);
  for (const b of document.querySelectorAll('[data-range]')) {
    b.setAttribute('aria-pressed', String(b.dataset.range === next));
  }
  for (const card of state.cards.values()) loadChart(card);
}

for (const b of document.querySelectorAll('[data-range]')) {
  b.addEventListener('click', () => selectRange(b.dataset.range));
}
selectRange(state.range);
$('auth-dialog').addEventListener('cancel', (e) => e.preventDefault()); // nothing works without the token
refreshNode();
setInterval(refreshNode, 30_000);
refreshAlerts(); // and again every ALERTS_REFRESH_MS
loadLoops().then(
  () => {
    // A link from the fleet page (/#loop-<id>) scrolls to that loop's card.
    if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
    connectStream();
  },
  (err) => {
    showPageError(err);
    connectStream();
  },
);
document.addEventListener('visibilitychange', () => {
  // a phone that slept may have a dead stream: reconnect and refill
  if (document.visibilityState !== 'visible') return;
  if (stream?.readyState === EventSource.CLOSED) connectStream();
  refreshAlerts(); // delivery is not streamed: what happened while the phone slept
});
