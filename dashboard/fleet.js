// homeostat fleet page: every node on this node's MQTT broker, one table per node, one row per
// loop, from GET /api/fleet (their retained states), refreshed every 10 s. What other nodes
// publish is shown, never trusted: every value is written with textContent, never as HTML.
import { getJson } from './api.js';
import { $, setMessage } from './util.js';

const REFRESH_MS = 10_000;
/** A state older than this (by the browser's clock) is shown as stale: its node stopped publishing. */
const STALE_MS = 10 * 60_000;

const COLUMNS = ['Loop', 'Measured', 'Setpoint', 'Action', 'Output', 'State', 'Updated'];

/** An element with text content (never HTML) and optional class. */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);
const num = (v) => (isNumber(v) ? String(Math.round(v * 100) / 100) : '—');
const withUnitText = (v, unit) => (isNumber(v) && unit ? `${num(v)} ${unit}` : num(v));

function updatedCell(iso) {
  const td = el('td');
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return td;
  const time = el(
    'time',
    new Date(ms).toLocaleString([], {
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }),
  );
  time.dateTime = iso;
  td.append(time);
  if (Date.now() - ms > STALE_MS) {
    td.dataset.stale = 'true';
    td.title = 'No newer state: its node may have stopped publishing';
  }
  return td;
}

function stateCell(loop) {
  const td = el('td');
  const badge = loop.faulted ? el('span', 'fault', 'badge bad') : el('span', 'ok', 'badge good');
  if (loop.faulted && loop.faultReason) badge.title = String(loop.faultReason);
  td.append(badge);
  return td;
}

function loopRow(loop, self) {
  const tr = el('tr', undefined, 'loop-row');
  const name = el('td');
  if (self) {
    const a = el('a', String(loop.name));
    a.href = `/#loop-${encodeURIComponent(loop.loop)}`;
    a.title = "On this node's dashboard";
    name.append(a);
  } else name.append(el('span', String(loop.name)));
  if (loop.name !== loop.loop) name.append(' ', el('span', String(loop.loop), 'muted'));
  const action = el('td', String(loop.action), 'action');
  action.dataset.action = String(loop.action);
  const output = el('td', isNumber(loop.output) ? `${Math.round(loop.output * 100)} %` : '—');
  tr.append(
    name,
    el('td', withUnitText(loop.measured, loop.unit), 'num'),
    el('td', withUnitText(loop.setpoint, loop.unit), 'num'),
    action,
    output,
    stateCell(loop),
    updatedCell(loop.updatedAt),
  );
  const cells = tr.children;
  for (let i = 0; i < cells.length; i++) cells[i].dataset.label = COLUMNS[i];
  return tr;
}

function onlineBadge(online) {
  if (online === true) return el('span', 'online', 'badge good');
  if (online === false) return el('span', 'offline', 'badge bad');
  const badge = el('span', 'availability unknown', 'badge');
  badge.title = 'No retained online/offline from this node';
  return badge;
}

function nodeSection(entry) {
  const section = el('section', undefined, 'card fleet-node');
  const head = el('header', undefined, 'card-head');
  const title = el('h2', String(entry.node));
  if (entry.self) title.append(' ', el('span', '(this node)', 'muted'));
  head.append(title, onlineBadge(entry.online));
  section.append(head);
  if (entry.loops.length === 0) {
    section.append(el('p', 'No loop states on the broker.', 'muted'));
    return section;
  }
  const table = el('table', undefined, 'fleet-table');
  const headRow = el('tr');
  for (const column of COLUMNS) headRow.append(el('th', column));
  const body = el('tbody');
  for (const loop of entry.loops) body.append(loopRow(loop, entry.self));
  table.append(el('thead'), body);
  table.tHead.append(headRow);
  section.append(table);
  return section;
}

function render({ nodes, dropped, droppedBy }) {
  $('fleet').replaceChildren(...nodes.map(nodeSection));
  const loops = nodes.reduce((n, entry) => n + entry.loops.length, 0);
  $('fleet-summary').textContent =
    `${nodes.length} node${nodes.length === 1 ? '' : 's'} · ${loops} loop${loops === 1 ? '' : 's'}`;
  $('page-message').hidden = nodes.length > 0;
  if (nodes.length === 0) setMessage($('page-message'), '', 'No node has published on the broker yet.');
  const note = $('fleet-dropped');
  note.hidden = !(dropped > 0);
  if (dropped > 0) {
    const parts = Object.entries(droppedBy ?? {})
      .filter(([, count]) => count > 0)
      .map(([reason, count]) => `${reason} ${count}`);
    note.textContent = `${dropped} MQTT message${dropped === 1 ? '' : 's'} not shown (${parts.join(', ')}): too large, not a state, a bad topic, or beyond the cap.`;
  }
}

let timer = null;
let reading = false;

async function refresh() {
  if (reading) return; // one request at a time: a slow node is not asked twice
  reading = true;
  clearTimeout(timer);
  try {
    render(await getJson('/api/fleet'));
    const now = new Date().toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
    setMessage($('fleet-refresh'), 'ok', `updated ${now}`);
  } catch (err) {
    setMessage($('fleet-refresh'), 'bad', 'not updated');
    $('page-message').hidden = false;
    setMessage($('page-message'), 'error', `Cannot read the fleet: ${err.message}`);
  } finally {
    reading = false;
    timer = setTimeout(refresh, REFRESH_MS);
  }
}

$('auth-dialog').addEventListener('cancel', (e) => e.preventDefault()); // nothing works without the token
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') refresh(); // a phone that slept shows old values
});
refresh();
