// A card's Autotune section: start (with the side of a split-range loop), the run's progress
// (phase, cycles n/m, time left), cancel, the result (model ± uncertainty, gains), Accept, and
// the loop's tuning history with Restore and Back to config. The run lives in the daemon; this
// only asks and shows. Shapes: src/http/schemas.ts.
import { getJson } from './api.js';
import { showResult } from './util.js';

const ACTIVE = new Set(['noise', 'relay']);

/** Wires the section of `card`; `write(card, control, path, body, what)` sends and shows the answer. */
export function setupAutotune(card, write) {
  const { part } = card;
  const base = () => `/api/loops/${encodeURIComponent(card.loop)}`;
  part('autotune-start').addEventListener('click', () => {
    const body = { action: 'start' };
    if (!part('autotune-side-label').hidden) body.side = part('autotune-side').value;
    write(card, 'autotune', `${base()}/autotune`, body, 'Autotune start').then((answer) => {
      // The loop may still refuse at its next cycle (a latched fault, no reading): its status says why.
      if (answer) card.autotuneAsked = answer.generation;
    });
  });
  part('autotune-cancel').addEventListener('click', () =>
    write(card, 'autotune', `${base()}/autotune`, { action: 'cancel' }, 'Autotune cancel'),
  );
  const apply = (version, what) =>
    write(card, 'tuning', `${base()}/tuning`, { version }, what).then((ok) => {
      if (ok) loadTunings(card);
    });
  part('tuning-accept').addEventListener('click', () => apply('latest', 'Accept tuning'));
  part('tuning-history').addEventListener('click', (e) => {
    const version = e.target.closest('button[data-version]')?.dataset.version;
    if (version === 'config') apply('config', 'Back to config gains');
    else if (version) apply(Number(version), `Restore version ${version}`);
  });
  part('autotune').addEventListener('toggle', () => {
    if (part('autotune').open) loadTunings(card);
  });
}

/** Shows the autotune and tuning of loop view `v` (a view without them leaves the section as it is). */
export function renderAutotune(card, v) {
  if (!('autotune' in v) && !('tuning' in v)) return;
  const { part } = card;
  const section = part('autotune');
  // A hysteresis loop has nothing to tune (the daemon would refuse with that reason).
  section.hidden = v.controller === 'hysteresis';
  const run = v.autotune ?? null;
  const running = run !== null && ACTIVE.has(run.phase);
  const tuning = v.tuning ?? null;
  const proposal = tuning && typeof tuning.latest === 'number' && tuning.latest !== tuning.active;
  section.dataset.phase = run?.phase ?? 'none';
  if (running || (run?.phase === 'done' && proposal)) section.open = true;

  const twoSides = v.modes.includes('heat_cool') || v.modes.includes('auto');
  part('autotune-side-label').hidden = !twoSides || running;
  const words = sideWords(v.quantity);
  const select = part('autotune-side');
  if (select.dataset.quantity !== v.quantity) {
    select.dataset.quantity = v.quantity;
    select.replaceChildren(new Option(words.raise, 'raise'), new Option(words.lower, 'lower'));
    select.value = v.mode === 'cool' || v.mode === 'dehumidify' ? 'lower' : 'raise';
  }
  part('autotune-start').hidden = running;
  part('autotune-cancel').hidden = !running;
  part('autotune-about').hidden = running;
  const what = twoSides ? `${words.raise} or ${words.lower}` : words[sideOf(v) ?? 'raise'];
  part('autotune-about').textContent =
    `Switches the ${what} on and off around the setpoint until the oscillation is steady, at most 48 h (or the loop's autotune.maxDurationS); the safety limits stay active. Then proposes gains.`;

  const progress = part('autotune-progress');
  const bar = part('autotune-bar');
  progress.hidden = run === null;
  bar.hidden = !running;
  if (run) {
    progress.dataset.phase = run.phase;
    progress.textContent = progressText(run, words);
    const elapsedMs = msOf(run.elapsedMs, run.elapsedS) ?? 0;
    const remainingMs = msOf(run.remainingMs, run.remainingS) ?? 0;
    bar.max = 1;
    bar.value = elapsedMs + remainingMs > 0 ? elapsedMs / (elapsedMs + remainingMs) : 0;
  }
  const result = run?.phase === 'done' ? run.result : null;
  part('autotune-result').hidden = !result;
  if (result) part('autotune-result-text').replaceChildren(...resultLines(result, v.unit).map(line));
  part('tuning-accept').hidden = !proposal;
  if (proposal) part('tuning-accept').textContent = `Accept (version ${tuning.latest})`;
  part('autotune-summary').textContent = summaryOf(run, tuning);

  const refused = tuning?.refused;
  if (refused && card.autotuneAsked !== undefined && refused.generation === card.autotuneAsked) {
    card.autotuneAsked = undefined;
    showResult(card, 'autotune', 'error', `Autotune start: refused by the loop — ${refused.reason}`);
  }

  const key = JSON.stringify(tuning);
  if (card.tuningKey !== key) {
    card.tuningKey = key;
    if (section.open) loadTunings(card);
  }
}

/** One side's gains as the history shows them. */
export function gainsText(g) {
  return `kp ${sig(g.kp)} · Ti ${sig(g.tiS)} s${g.tdS ? ` · Td ${sig(g.tdS)} s` : ''}`;
}

/** Fetches and shows the tuning history (newest first, the one in force marked). */
export async function loadTunings(card) {
  const { part } = card;
  const body = part('tuning-history');
  let answer;
  try {
    answer = await getJson(`/api/loops/${encodeURIComponent(card.loop)}/tunings`);
  } catch (err) {
    body.replaceChildren(row([cell(`Tuning history unavailable: ${err.message}`, 5)]));
    return;
  }
  const rows = answer.tunings.map((t) => {
    const tr = row([
      cell(`v${t.version}`),
      cell(new Date(t.createdAt).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' })),
      cell(t.source),
      cell(
        t.lowerGains ? `heat: ${gainsText(t.gains)} · cool: ${gainsText(t.lowerGains)}` : gainsText(t.gains),
      ),
      t.active ? cell('in force', 1, 'in-force') : buttonCell(`Restore`, t.version),
    ]);
    tr.dataset.version = String(t.version);
    if (t.active) tr.dataset.active = '';
    return tr;
  });
  const inForce = answer.active === 'config';
  const config = row([
    cell('config'),
    cell(''),
    cell('file'),
    cell("the config file's gains"),
    inForce ? cell('in force', 1, 'in-force') : buttonCell('Back to config', 'config', 'tuning-config'),
  ]);
  config.dataset.version = 'config';
  if (inForce) config.dataset.active = '';
  body.replaceChildren(...rows, config);
}

// ---------- text ----------

function sideWords(quantity) {
  if (quantity === 'temperature') return { raise: 'heater', lower: 'cooler' };
  if (quantity === 'humidity') return { raise: 'humidifier', lower: 'dehumidifier' };
  return { raise: 'raising actuator', lower: 'lowering actuator' };
}

function sideOf(v) {
  if (v.mode === 'heat' || v.mode === 'humidify') return 'raise';
  if (v.mode === 'cool' || v.mode === 'dehumidify') return 'lower';
  return undefined;
}

const msOf = (ms, s) => (typeof ms === 'number' ? ms : typeof s === 'number' ? s * 1000 : undefined);

export function progressText(run, words) {
  const elapsed = duration(msOf(run.elapsedMs, run.elapsedS) ?? 0);
  const remainingMs = msOf(run.remainingMs, run.remainingS);
  const left =
    remainingMs === undefined
      ? ''
      : ` · ${run.remainingIsLimit ? 'at most' : 'about'} ${duration(remainingMs)} left`;
  switch (run.phase) {
    case 'noise':
      return `${capital(words[run.side] ?? 'relay')}: measuring the sensor noise (output held) · elapsed ${elapsed}${left}`;
    case 'relay':
      return `${capital(words[run.side] ?? 'relay')}: relay cycles ${run.cycles ?? 0}/${run.cyclesNeeded ?? '?'} · elapsed ${elapsed}${left}`;
    case 'done':
      return `Done: ${run.cycles ?? '?'} cycles in ${elapsed}`;
    default:
      return `Aborted: ${run.abortReason ?? run.reason ?? 'no reason given'}`;
  }
}

const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function summaryOf(run, tuning) {
  const inForce = tuning ? ` · in force: ${tuning.active === 'config' ? 'config' : `v${tuning.active}`}` : '';
  if (run && ACTIVE.has(run.phase)) {
    return run.phase === 'noise'
      ? `· running (noise)${inForce}`
      : `· running, cycles ${run.cycles}/${run.cyclesNeeded}${inForce}`;
  }
  if (run?.phase === 'aborted') return `· last run aborted${inForce}`;
  if (tuning && typeof tuning.latest === 'number' && tuning.latest !== tuning.active) {
    return `· v${tuning.latest} to accept${inForce}`;
  }
  return inForce;
}

/** The result as lines, each a list of parts kept whole when a narrow screen wraps. */
function resultLines(r, unit) {
  const se = r.standardError ?? {};
  const model = [
    `Model: gain ${pm(r.gain, se.gain)} ${unit} at full output`,
    `τ ${pm(r.timeConstantS, se.timeConstantS)} s`,
    `θ ${pm(r.deadTimeS, se.deadTimeS)} s`,
  ];
  if (typeof r.rmsResidual === 'number') model.push(`rms residual ${sig(r.rmsResidual)} ${unit}`);
  const gains = [`Gains: kp ${sig(r.kp)}`, `Ti ${sig(r.tiS)} s`, `Td ${sig(r.tdS)} s`];
  if (typeof r.setpointWeight === 'number') gains.push(`setpoint weight ${sig(r.setpointWeight)}`);
  const out = [model, gains];
  if (typeof r.windowS === 'number') {
    const relay = [`Relay: a ${sig(r.windowS)} s window`];
    if (typeof r.band === 'number') relay.push(`or a duty band ±${sig(r.band)} ${unit}`);
    out.push(relay);
  }
  if (r.reliability?.verdict === 'flagged') {
    out.push([`Flagged as unreliable (not put in force by itself): ${r.reliability.reasons.join('; ')}`]);
  }
  return out;
}

const pm = (value, se) =>
  typeof se === 'number' && Number.isFinite(se) ? `${sig(value)} ± ${sig(se)}` : `${sig(value)} (± ?)`;

/** Three significant digits, never in exponent notation (below 0.001: six decimals at most). */
export function sig(value) {
  if (Math.abs(value) < 0.001)
    return value
      .toFixed(6)
      .replace(/\.?0+$/, '')
      .replace(/^-0$/, '0');
  return String(Number(Number(value).toPrecision(3)));
}

/** 45 s, 12 min, 3 h 05 min. */
export function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 90) return `${minutes} min`;
  const m = minutes % 60;
  return `${Math.floor(minutes / 60)} h${m === 0 ? '' : ` ${String(m).padStart(2, '0')} min`}`;
}

// ---------- DOM ----------

function line(parts) {
  const p = document.createElement('p');
  parts.forEach((text, i) => {
    const span = document.createElement('span');
    span.textContent = text;
    p.append(...(i === 0 ? [] : [' · ']), span);
  });
  return p;
}

function row(cells) {
  const tr = document.createElement('tr');
  tr.append(...cells);
  return tr;
}

function cell(text, span = 1, className = '') {
  const td = document.createElement('td');
  td.textContent = text;
  if (span > 1) td.colSpan = span;
  if (className) td.className = className;
  return td;
}

function buttonCell(text, version, role) {
  const td = document.createElement('td');
  const button = document.createElement('button');
  if (role) button.dataset.role = role;
  button.type = 'button';
  button.className = 'small';
  button.textContent = text;
  button.dataset.version = String(version);
  td.append(button);
  return td;
}
