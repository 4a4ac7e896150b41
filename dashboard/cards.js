// One card per loop: values, condition badges, chart, events and the controls that write.
import { getJson, postJson } from './api.js';
import { renderAutotune, setupAutotune } from './autotune.js';
import { resizeChart } from './chart.js';
import { renderEvents } from './events.js';
import { renderSchedule, setupSchedule } from './schedule.js';
import { $, decimalsOf, fmt, secondsOf, showResult, state, withUnit } from './util.js';

/**
 * ActuatorConfirmed is False for a moment after every change of level (a continuous actuator
 * changes every cycle): a badge only once it has stayed False this long (daemon time).
 */
const UNCONFIRMED_BADGE_AFTER_S = 60;

/** The conditions worth a badge; `key` is stable (data-badge) for tests, `text` is for people. */
export function badgesOf(v) {
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
  const unconfirmed = find('ActuatorConfirmed');
  if (unconfirmed?.status === 'False' && lastedS(v, unconfirmed) >= UNCONFIRMED_BADGE_AFTER_S) {
    add('actuator-unconfirmed', 'actuator unconfirmed', 'warn', unconfirmed);
  }
  when('Reconciled', 'False', 'cycle-failed', 'cycle failed', 'bad');
  when('Converged', 'False', 'not-converged', 'not converged', 'info');
  if (v.observedGeneration < v.generation) {
    add('not-reconciled', `not reconciled (${v.observedGeneration}/${v.generation})`, 'info');
  }
  if (out.length === 0) add('ok', 'ok', 'good');
  return out;
}

/** How long condition `c` has had its status, at the loop's last cycle (seconds). */
const lastedS = (v, c) => (v.updatedAt ? secondsOf(v.updatedAt) - secondsOf(c.lastTransitionAt) : 0);

/** A new card for loop view `view` (not yet in the page). */
export function createCard(view) {
  const el = $('card-template').content.firstElementChild.cloneNode(true);
  el.dataset.loop = view.loop;
  // The fleet page links here: /#loop-<id>.
  el.id = `loop-${view.loop}`;
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
    input.value = setpointText(card.view);
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
  setupAutotune(card, write);
  setupSchedule(card, write);
  new ResizeObserver(() => resizeChart(card)).observe(part('chart'));
  renderLoop(card, view);
  return card;
}

/** Shows loop view `v` on its card. */
export function renderLoop(card, v) {
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
  renderAutotune(card, v);
  renderSchedule(card, v);
  const at = v.updatedAt ? new Date(v.updatedAt).toLocaleTimeString() : 'never';
  // While the schedule or a profile sets it, the stored source (who last wrote) is not where it comes from.
  const timed = v.schedule?.source === 'schedule' || v.schedule?.source === 'profile';
  const from = timed ? v.schedule.source : v.desired.setpointSource;
  part('updated').textContent =
    `cycle ${at} · setpoint from ${from}, mode from ${v.desired.modeSource} · generation ${v.observedGeneration}/${v.generation}`;
}

/** Fills the controls, leaving alone what the person is editing. */
function renderControls(card, v) {
  const input = card.part('setpoint-input');
  input.min = String(v.limits.min);
  input.max = String(v.limits.max);
  input.step = String(v.step);
  input.title = `${v.limits.min}…${v.limits.max} ${v.unit}, step ${v.step}`;
  if (document.activeElement !== input && !input.dataset.dirty) input.value = setpointText(v);
  const select = card.part('mode-select');
  if (select.dataset.modes !== v.modes.join()) {
    select.dataset.modes = v.modes.join();
    select.replaceChildren(...v.modes.map((m) => new Option(m.replace('_', '/'), m)));
  }
  if (document.activeElement !== select) select.value = v.mode;
}

/** The setpoint for the input, to the step's decimals (a profile's ramp moves it by fractions). */
const setpointText = (v) => String(Number(v.setpoint.toFixed(decimalsOf(v.step))));

function submitSetpoint(card) {
  const input = card.part('setpoint-input');
  const setpoint = input.valueAsNumber;
  if (!Number.isFinite(setpoint)) {
    showResult(card, 'setpoint', 'error', 'Setpoint: enter a number');
    return;
  }
  const path = `/api/loops/${encodeURIComponent(card.loop)}`;
  write(card, 'setpoint', path, { setpoint }, `Setpoint ${setpoint}`).then((ok) => {
    if (ok) delete input.dataset.dirty;
  });
}

async function submitMode(card) {
  const mode = card.part('mode-select').value;
  const path = `/api/loops/${encodeURIComponent(card.loop)}`;
  const ok = await write(card, 'mode', path, { mode }, `Mode ${mode}`);
  if (!ok) card.part('mode-select').value = card.view.mode;
}

/** Sends one write and shows its answer next to the controls; the answer when accepted, else false. */
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
    return answer;
  }
  const why = answer?.reason ?? answer?.error ?? `HTTP ${status}`;
  showResult(card, control, 'error', `${what}: refused — ${why}`);
  return false;
}

/**
 * Reloads one loop's card from the API (after a write or an event). An answer is dropped when
 * the stream brought a status for the loop meanwhile: that one is at least as new (a view read
 * before the loop's cycle, answered after it, would put the paused profile back to running).
 */
export async function refreshLoop(loop) {
  const card = state.cards.get(loop);
  if (!card) return;
  const streamed = card.streamed ?? 0;
  try {
    const view = await getJson(`/api/loops/${encodeURIComponent(loop)}`);
    if ((card.streamed ?? 0) === streamed) renderLoop(card, view);
  } catch {
    // the stream's next status fills the card anyway
  }
}
