// A card's presets, schedule, profile and sensor set: the preset select, where the
// setpoint comes from and until when a manual change holds, the next changes, the profile's
// start/pause/resume/stop and progress, and which sensors were used or dropped. Each part shows
// only when the loop has it (the view's `presets`, `profiles`, `schedule`, `sensors`); the
// daemon decides everything, this only asks and shows. API: src/http/schemas.ts, api-write.ts.
import { duration } from './autotune.js';
import { decimalsOf, fmt, secondsOf } from './util.js';

/** Wires the card's controls; `write(card, control, path, body, what)` sends and shows the answer. */
export function setupSchedule(card, write) {
  const { part } = card;
  const base = () => `/api/loops/${encodeURIComponent(card.loop)}`;
  const presetSelect = part('preset-select');
  presetSelect.addEventListener('change', async () => {
    const name = presetSelect.value;
    const preset = name === '' ? null : name;
    const ok = await write(card, 'preset', `${base()}/preset`, { preset }, `Preset ${name || 'none'}`);
    // Refused: back to the preset in force (the answer beside the controls says why).
    if (!ok) presetSelect.value = card.view.schedule?.preset ?? '';
  });
  const profile = (action, what, extra = {}) =>
    write(card, 'profile', `${base()}/profile`, { action, ...extra }, what);
  part('profile-start').addEventListener('click', () => {
    const name = part('profile-select').value;
    profile('start', `Profile ${name} start`, { name });
  });
  part('profile-pause').addEventListener('click', () => profile('pause', 'Profile pause'));
  part('profile-resume').addEventListener('click', () => profile('resume', 'Profile resume'));
  part('profile-stop').addEventListener('click', () => profile('stop', 'Profile stop'));
}

/** Shows the presets, schedule, profile and sensors of loop view `v` (absent parts stay hidden). */
export function renderSchedule(card, v) {
  renderPresets(card, v);
  renderSource(card, v);
  renderProfile(card, v);
  renderSensors(card, v);
}

function renderPresets(card, v) {
  const { part } = card;
  const names = v.presets ?? [];
  part('preset-label').hidden = names.length === 0;
  if (names.length === 0) return;
  const select = part('preset-select');
  if (select.dataset.presets !== names.join()) {
    select.dataset.presets = names.join();
    select.replaceChildren(new Option('none', ''), ...names.map((n) => new Option(n, n)));
  }
  if (document.activeElement !== select) select.value = v.schedule?.preset ?? '';
}

/** Where the setpoint comes from, until when a manual change holds, and the next changes. */
function renderSource(card, v) {
  const { part } = card;
  const s = v.schedule;
  part('schedule').hidden = !s;
  if (!s) return;
  const nowS = v.updatedAt ? secondsOf(v.updatedAt) : Date.now() / 1000;
  const source = part('setpoint-source');
  source.dataset.source = s.source;
  const held = s.heldUntil ? `, held until ${whenText(secondsOf(s.heldUntil), nowS)}` : '';
  source.textContent = `${sourceText(s)}${held}`;
  const digits = decimalsOf(v.step);
  part('next').hidden = s.next.length === 0;
  part('next-list').replaceChildren(
    ...s.next.map((n) => {
      const li = document.createElement('li');
      li.dataset.source = n.source;
      const time = document.createElement('time');
      time.dateTime = n.at;
      time.textContent = whenText(secondsOf(n.at), nowS);
      const mode = n.mode && n.mode !== v.mode ? ` ${n.mode.replace('_', '/')}` : '';
      li.append(time, ` → ${fmt(n.setpoint, digits)} ${v.unit}${mode}`.trimEnd());
      li.title = `from the ${n.source}`;
      return li;
    }),
  );
}

export function sourceText(s) {
  switch (s.source) {
    case 'preset':
      return `Setpoint from preset ${s.preset}`;
    case 'schedule':
      return `Setpoint from the schedule${s.preset ? ` (preset ${s.preset})` : ''}`;
    case 'profile':
      return `Setpoint from profile ${s.profile?.name ?? ''}`.trimEnd();
    default:
      return 'Setpoint set by hand';
  }
}

function renderProfile(card, v) {
  const { part } = card;
  const names = v.profiles ?? [];
  const section = part('profile');
  section.hidden = names.length === 0;
  if (names.length === 0) return;
  const run = v.schedule?.profile ?? null;
  section.dataset.state = run?.state ?? 'none';
  const select = part('profile-select');
  if (select.dataset.profiles !== names.join()) {
    select.dataset.profiles = names.join();
    select.replaceChildren(...names.map((n) => new Option(n, n)));
  }
  const going = run !== null && run.state !== 'finished';
  // A finished profile holds its last setpoint until stopped; a new start replaces it.
  part('profile-choice').hidden = going;
  part('profile-pause').hidden = run?.state !== 'running';
  part('profile-resume').hidden = run?.state !== 'paused';
  part('profile-stop').hidden = run === null;
  const progress = part('profile-progress');
  const bar = part('profile-bar');
  progress.hidden = run === null;
  bar.hidden = run === null;
  if (!run) return;
  progress.textContent = profileText(run);
  // The view gives steps and time left, not the profile's length: the bar counts steps done.
  bar.max = run.stepCount;
  bar.value = run.state === 'finished' ? run.stepCount : run.stepIndex;
  bar.setAttribute('aria-label', `Profile ${run.name}: step ${run.stepIndex + 1} of ${run.stepCount}`);
}

/** "Profile ale, running: step 1 of 4, hold · 3 d 23 h left in the step · 9 d 23 h in total". */
export function profileText(run) {
  if (run.state === 'finished') return `Profile ${run.name}, finished: holds its last setpoint`;
  const step = `step ${run.stepIndex + 1} of ${run.stepCount}, ${run.stepKind}`;
  return `Profile ${run.name}, ${run.state}: ${step} · ${span(run.stepRemainingS)} left in the step · ${span(run.totalRemainingS)} in total`;
}

const REASON = {
  Missing: 'missing',
  Stale: 'stale',
  NotFinite: 'not a number',
  Implausible: 'implausible',
  Outlier: 'outlier',
  Disagree: 'disagrees',
};

function renderSensors(card, v) {
  const { part } = card;
  const set = v.sensors;
  part('sensors').hidden = !set;
  if (!set) return;
  part('sensors-summary').textContent = `Sensors: ${set.summary}`;
  part('sensors').dataset.dropped = String(set.dropped.length);
  part('sensors-dropped').replaceChildren(
    ...set.dropped.map((d) => {
      const li = document.createElement('li');
      li.dataset.sensor = d.sensor;
      li.dataset.reason = d.reason;
      const name = document.createElement('strong');
      name.textContent = d.sensor;
      li.append(name, ` ${REASON[d.reason] ?? d.reason}: ${d.message}`);
      return li;
    }),
  );
}

// ---------- time ----------

/** Time left: 45 s, 12 min, 3 h 05 min, 2 d 4 h. */
export function span(seconds) {
  if (seconds < 48 * 3600) return duration(seconds * 1000);
  const hours = Math.round(seconds / 3600);
  const h = hours % 24;
  return `${Math.floor(hours / 24)} d${h === 0 ? '' : ` ${h} h`}`;
}

/**
 * A coming moment in the browser's local time: the time alone on the day of `nowS` (the daemon's
 * clock), with the weekday within a week, with the date beyond.
 */
export function whenText(atS, nowS) {
  const at = new Date(atS * 1000);
  const now = new Date(nowS * 1000);
  const time = { hour: '2-digit', minute: '2-digit' };
  if (at.toDateString() === now.toDateString()) return at.toLocaleTimeString([], time);
  if (atS - nowS < 6 * 86_400) return at.toLocaleString([], { weekday: 'short', ...time });
  return at.toLocaleString([], { weekday: 'short', day: 'numeric', month: 'short', ...time });
}
