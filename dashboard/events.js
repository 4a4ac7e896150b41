// A loop's events: how each kind is marked on the chart, and the list under it.
import { dateTimeOf, secondsOf, state, timeOf } from './util.js';

const EVENT_LIST_MAX = 50;

// Full-height lines for what a person did or a fault; short ticks at the bottom for actuator
// switches (a relay may switch every few minutes).
export const MARKERS = {
  'setpoint-changed': { color: '#7c3aed', dash: [5, 3] },
  'mode-changed': { color: '#7c3aed', dash: [2, 3] },
  'preset-changed': { color: '#7c3aed', dash: [8, 3] },
  'profile-start': { color: '#0e7490', dash: [5, 3] },
  'profile-pause': { color: '#0e7490', dash: [2, 3] },
  'profile-resume': { color: '#0e7490', dash: [5, 3] },
  'profile-stop': { color: '#0e7490', dash: [2, 3] },
  'fault-raised': { color: '#dc2626', dash: [] },
  'fault-reset': { color: '#15803d', dash: [5, 3] },
  'fault-cleared': { color: '#15803d', dash: [5, 3] },
  'command-rejected': { color: '#b45309', dash: [], tick: true },
  actuator: { color: '#4b5563', dash: [], tick: true },
};
export const OTHER_MARKER = { color: '#6b7280', dash: [1, 3] };

export const markerOf = (kind) => MARKERS[kind] ?? OTHER_MARKER;

/** An API Event as the card keeps it (time in seconds, as the chart's x). */
export const eventOf = (e) => ({
  t: secondsOf(e.at),
  kind: e.kind,
  message: e.message,
  source: e.source,
});

/** The newest events first; actuator switches only when the box is ticked. */
export function renderEvents(card) {
  const all = card.part('show-switches').checked;
  const shown = all ? card.events : card.events.filter((e) => e.kind !== 'actuator');
  const newest = shown.slice(-EVENT_LIST_MAX).reverse();
  const short = state.range === '1h' || state.range === '6h';
  card.part('event-count').textContent = `(${shown.length})`;
  card.part('event-list').replaceChildren(
    ...newest.map((ev) => {
      const li = document.createElement('li');
      li.dataset.kind = ev.kind;
      const time = document.createElement('time');
      time.textContent = short ? timeOf(ev.t) : dateTimeOf(ev.t);
      const kind = document.createElement('span');
      kind.className = 'kind';
      kind.style.borderColor = markerOf(ev.kind).color;
      kind.textContent = ev.kind;
      li.append(time, ' ', kind, ' ', ev.message);
      return li;
    }),
  );
}
