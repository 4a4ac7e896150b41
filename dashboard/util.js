// The page's shared state and small helpers (DOM, formatting). No imports: every module uses it.

/** Chart ranges: the button's key (also the API's `since`) → seconds. */
export const RANGES_S = { '1h': 3600, '6h': 6 * 3600, '24h': 24 * 3600, '7d': 7 * 24 * 3600 };

const savedRange = localStorage.getItem('homeostat.range');

/** What the modules share: the chosen range and the cards by loop id. */
export const state = {
  range: savedRange && RANGES_S[savedRange] ? savedRange : '6h',
  /** loop id → card ({ loop, el, part, view, plot, points, events, … }) */
  cards: new Map(),
};

export const $ = (id) => document.getElementById(id);

/** Text and state (a CSS hook: ok, warn, bad, error, pending…) of a status pill or message. */
export function setMessage(el, kind, text) {
  el.dataset.state = kind;
  el.textContent = text;
}

/** The message under a card's controls; `control` (data-for) says which control it answers. */
export function showResult(card, control, kind, text) {
  const el = card.part('message');
  el.dataset.for = control;
  setMessage(el, kind, text);
}

export const decimalsOf = (step) => (String(step).split('.')[1] ?? '').length;

export const fmt = (value, digits) => (value === null || value === undefined ? '—' : value.toFixed(digits));

export const timeOf = (s) =>
  new Date(s * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

export const dateTimeOf = (s) =>
  new Date(s * 1000).toLocaleString([], {
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });

/** `text` followed by the unit in a smaller font. */
export function withUnit(el, text, unit) {
  const small = document.createElement('small');
  small.textContent = unit;
  el.replaceChildren(text, unit ? ' ' : '', small);
}

/** Seconds of an ISO time (the daemon's clock, which runs ahead of the wall clock under --speed). */
export const secondsOf = (iso) => Date.parse(iso) / 1000;
