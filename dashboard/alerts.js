// The recent alerts (GET /api/alerts): each alert's time, phase and title, and per channel
// whether it was delivered or still waits (its attempts and last error), so a person sees at once
// that the phone never got it; the header's pill says whether anything waits. Titles and errors
// come from the config and from other servers: written with textContent, never as HTML.
import { getJson } from './api.js';
import { $, dateTimeOf, secondsOf, setMessage } from './util.js';

/** Delivery is not streamed: the panel asks again this often (and when the stream reconnects). */
export const ALERTS_REFRESH_MS = 30_000;

/** An element with text content (never HTML) and an optional class. */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function timeEl(iso) {
  const time = el('time', dateTimeOf(secondsOf(iso)));
  time.dateTime = iso;
  return time;
}

/** The phase's badge: raised in the alert's severity, resolved good, events information. */
function phaseBadge(alert) {
  const level =
    alert.phase === 'resolved'
      ? 'good'
      : alert.phase === 'raised'
        ? alert.severity === 'critical'
          ? 'bad'
          : 'warn'
        : 'info';
  const badge = el('span', alert.phase, `badge ${level}`);
  badge.dataset.phase = alert.phase;
  return badge;
}

/** One channel's fate: `✓ hook` taken; `✗ phone: not delivered, 3 attempts` and the error beside it. */
function deliveryItem(delivery) {
  const li = el('li', undefined, 'delivery');
  li.dataset.channel = delivery.channel;
  if (delivery.delivered) {
    li.dataset.state = 'delivered';
    const badge = el('span', `✓ ${delivery.channel}`, 'badge good');
    badge.title = `delivered ${dateTimeOf(secondsOf(delivery.deliveredAt))}, ${plural(delivery.attempts, 'attempt')}`;
    li.append(badge);
  } else {
    const tried = delivery.attempts > 0;
    li.dataset.state = tried ? 'failing' : 'waiting';
    // Not tried yet: about to go, or queued behind an earlier alert this channel has not taken.
    const text = tried
      ? `✗ ${delivery.channel}: not delivered, ${plural(delivery.attempts, 'attempt')}`
      : `○ ${delivery.channel}: waiting, not tried yet`;
    li.append(el('span', text, `badge ${tried ? 'bad' : 'warn'}`));
    if (delivery.lastError) li.append(el('span', delivery.lastError, 'delivery-error'));
  }
  if (delivery.heldBack > 0) {
    li.append(
      el('span', `the hourly cap held back ${plural(delivery.heldBack, 'alert')} before this one`, 'muted'),
    );
  }
  return li;
}

function alertItem(alert) {
  const li = el('li', undefined, 'alert');
  li.dataset.alert = alert.id;
  li.dataset.phase = alert.phase;
  const head = el('p', undefined, 'alert-head');
  head.append(timeEl(alert.createdAt), ' ', phaseBadge(alert), ' ', el('strong', alert.title, 'alert-title'));
  const deliveries = el('ul', undefined, 'deliveries');
  deliveries.setAttribute('aria-label', 'Delivery per channel');
  deliveries.append(...alert.deliveries.map(deliveryItem));
  li.append(head, el('p', alert.message, 'alert-message muted'), deliveries);
  return li;
}

/** `phone: 2 waiting, 1 dropped` per channel with something to say; undefined when all is delivered. */
function backlogText(channels) {
  const parts = channels
    .filter((c) => c.undelivered > 0 || c.dropped > 0)
    .map((c) => {
      const said = [];
      if (c.undelivered > 0) said.push(`${c.undelivered} waiting`);
      if (c.dropped > 0) said.push(`${c.dropped} dropped`);
      return `${c.channel}: ${said.join(', ')}`;
    });
  return parts.length === 0 ? undefined : parts.join(' · ');
}

/** The header's pill: red while an alert waits for a channel, amber when some were dropped. */
function renderPill(channels) {
  const sum = (key) => channels.reduce((n, c) => n + c[key], 0);
  const [undelivered, dropped] = [sum('undelivered'), sum('dropped')];
  const pill = $('alerts');
  pill.hidden = false;
  pill.dataset.state = undelivered > 0 ? 'bad' : dropped > 0 ? 'warn' : 'ok';
  pill.title = `Alerts go to ${channels.map((c) => c.channel).join(', ')}: see Recent alerts`;
  pill.firstElementChild.textContent =
    undelivered > 0
      ? `alerts: ${undelivered} undelivered`
      : dropped > 0
        ? `alerts: ${dropped} dropped`
        : 'alerts ok';
}

function render({ alerts, channels, note }) {
  renderPill(channels);
  const backlog = backlogText(channels);
  const summary = $('alerts-summary');
  const names = channels.map((c) => c.channel).join(', ');
  summary.textContent = backlog ?? (alerts.length === 0 ? `channels: ${names}` : `all delivered · ${names}`);
  summary.dataset.state = backlog ? 'bad' : 'ok';
  const list = $('alerts-list');
  list.replaceChildren(...alerts.map(alertItem));
  list.hidden = alerts.length === 0;
  const message = $('alerts-message');
  message.hidden = alerts.length > 0 && !note;
  if (note) setMessage(message, 'error', `Not every alert is listed: ${note}`);
  else setMessage(message, '', alerts.length === 0 ? 'No alert told yet.' : '');
}

/** A node that sends no alerts (404): one plain line, no pill. */
function renderNone(reason) {
  $('alerts').hidden = true;
  $('alerts-summary').textContent = '';
  $('alerts-list').replaceChildren();
  $('alerts-list').hidden = true;
  $('alerts-message').hidden = false;
  setMessage($('alerts-message'), '', `No alerts configured: ${reason.replace(/^no alert channel: /, '')}.`);
}

let reading = false;
let timer = null;

/** Reads GET /api/alerts and shows it; then again in ALERTS_REFRESH_MS. One request at a time. */
export async function refreshAlerts() {
  if (reading) return;
  reading = true;
  clearTimeout(timer);
  const panel = $('alerts-panel');
  let again = true;
  try {
    render(await getJson('/api/alerts'));
    panel.dataset.state = 'ok';
  } catch (err) {
    if (err.status === 404) {
      renderNone(err.message);
      panel.dataset.state = 'none';
      again = false; // channels are built at the start: only a restart (the stream reconnects) adds one
    } else {
      panel.dataset.state = 'error';
      $('alerts-message').hidden = false;
      setMessage($('alerts-message'), 'error', `Cannot read the alerts: ${err.message}. Retrying…`);
    }
  } finally {
    panel.hidden = false;
    reading = false;
    if (again) timer = setTimeout(refreshAlerts, ALERTS_REFRESH_MS);
  }
}
