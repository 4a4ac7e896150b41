/**
 * Validation of presets, the weekly schedule and profiles: human-readable errors with a path,
 * for the config layer to refuse a file clearly (`loops.cellar.schedule.weekly[2].preset:
 * unknown preset "ecco" (known: eco, comfort)`), never a throw. effectiveSetpoint copes with
 * invalid data too (it ignores what does not resolve), but a refused file says why.
 */
import { isValidTimeZone } from './local-time.js';
import { isRampStep } from './profile.js';
import type { Presets, Profile, WeeklySchedule } from './types.js';
import { KNOWN_MODES, WEEKDAYS } from './types.js';
import { parseAt } from './weekly.js';

const isFiniteNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

/**
 * The longest duration a step or `manualHoldS` may give: 10 years. Longer ones are surely
 * mistakes, and past about 2.7e11 years the times they make cannot be dates at all (every
 * cycle's status would fail on them).
 */
export const MAX_DURATION_S = 10 * 365 * 86_400;

/** The longest preset or profile name (an MQTT payload, a Home Assistant option). */
export const MAX_NAME_LENGTH = 64;

// C0 and C1 controls and DEL: invisible in logs and HA, ambiguous in MQTT payloads.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A preset's or profile's name must be usable as a command payload and a Home Assistant
 * option: at most 64 characters, no spaces at either end, no control characters, and not
 * `none` in any case (HA's "none"/"None" mean no preset, and `preset/set none` clears it).
 */
export function validateName(kind: 'preset' | 'profile', name: string, path: string): string[] {
  const shown = JSON.stringify(name);
  if (typeof name !== 'string' || name.trim() === '') return [`${path}: a ${kind} needs a name`];
  const errors: string[] = [];
  if (name.length > MAX_NAME_LENGTH)
    errors.push(`${path}: ${kind} name ${shown} is longer than ${MAX_NAME_LENGTH} characters`);
  if (name !== name.trim()) errors.push(`${path}: ${kind} name ${shown} has spaces at its start or end`);
  if (CONTROL_CHARACTERS.test(name))
    errors.push(`${path}: ${kind} name ${shown} contains control characters`);
  if (name.toLowerCase() === 'none')
    errors.push(`${path}: ${kind} name ${shown} is reserved (it means no ${kind}); choose another`);
  return errors;
}

/** A duration's error: not a number above 0 (`what` says what leaving it out does), or beyond the cap. */
function durationErrors(value: unknown, path: string, what: string): string[] {
  if (!(isFiniteNumber(value) && value > 0)) return [`${path}: must be a number of seconds above 0${what}`];
  if (value > MAX_DURATION_S)
    return [
      `${path}: ${value} s is longer than ${MAX_DURATION_S} s (10 years); a longer one is surely a mistake`,
    ];
  return [];
}

export function validateTimeZone(timeZone: string, path: string): string[] {
  return isValidTimeZone(timeZone)
    ? []
    : [`${path}: unknown time zone "${String(timeZone)}" (an IANA name such as Europe/Berlin, or UTC)`];
}

export function validatePresets(presets: Presets, path: string): string[] {
  const errors: string[] = [];
  for (const [name, preset] of Object.entries(presets ?? {})) {
    errors.push(...validateName('preset', name, path));
    if (!isFiniteNumber(preset?.setpoint)) errors.push(`${path}.${name}.setpoint: must be a finite number`);
    if (preset?.mode !== undefined && !KNOWN_MODES.includes(preset.mode)) {
      errors.push(`${path}.${name}.mode: "${String(preset.mode)}" is not one of ${KNOWN_MODES.join(', ')}`);
    }
  }
  return errors;
}

/** What validateSchedule checks together: entries name presets, times are local to the zone. */
export interface ScheduleSpec {
  weekly?: WeeklySchedule;
  presets?: Presets;
  timeZone: string;
  manualHoldS?: number;
}

/** Errors in a loop's schedule; `path` is where it sits in the config, e.g. 'loops.cellar.schedule'. */
export function validateSchedule(spec: ScheduleSpec, path: string): string[] {
  const errors = validateTimeZone(spec.timeZone, `${path}.timeZone`);
  if (spec.manualHoldS !== undefined) {
    errors.push(
      ...durationErrors(
        spec.manualHoldS,
        `${path}.manualHoldS`,
        ' (leave it out to hold until the next point)',
      ),
    );
  }
  const weekly = spec.weekly ?? [];
  if (!Array.isArray(weekly)) return [...errors, `${path}.weekly: must be a list of entries`];
  const seen = new Map<string, number>();
  weekly.forEach((entry, i) => {
    errors.push(...validateEntry(entry, spec.presets, `${path}.weekly[${i}]`));
    for (const day of Array.isArray(entry?.days) ? entry.days : []) {
      const key = `${day} ${entry.at}`;
      const first = seen.get(key);
      if (first !== undefined) errors.push(`${path}.weekly[${i}]: ${key} is also set by weekly[${first}]`);
      else seen.set(key, i);
    }
  });
  return errors;
}

function validateEntry(entry: WeeklySchedule[number], presets: Presets | undefined, path: string): string[] {
  const errors: string[] = [];
  if (!Array.isArray(entry?.days) || entry.days.length === 0) {
    errors.push(`${path}.days: list at least one day (${WEEKDAYS.join(', ')})`);
  } else {
    for (const day of entry.days) {
      if (!WEEKDAYS.includes(day))
        errors.push(`${path}.days: "${String(day)}" is not one of ${WEEKDAYS.join(', ')}`);
    }
  }
  if (parseAt(entry?.at) === undefined)
    errors.push(`${path}.at: "${String(entry?.at)}" is not a time HH:MM (00:00–23:59)`);
  const hasSetpoint = entry?.setpoint !== undefined;
  const hasPreset = entry?.preset !== undefined;
  if (hasSetpoint === hasPreset) errors.push(`${path}: give either setpoint or preset (exactly one)`);
  if (hasSetpoint && !isFiniteNumber(entry.setpoint))
    errors.push(`${path}.setpoint: must be a finite number`);
  if (hasPreset && !(presets && Object.hasOwn(presets, entry.preset!))) {
    const known = Object.keys(presets ?? {});
    errors.push(
      `${path}.preset: unknown preset "${entry.preset}" (known: ${known.length > 0 ? known.join(', ') : 'none'})`,
    );
  }
  return errors;
}

/**
 * Errors in a profile; `path` e.g. 'loops.fermenter.profiles.lager'. With `name` (the key it
 * has under `profiles`), the name's rules too, reported on the profiles' path.
 */
export function validateProfile(profile: Profile, path: string, name?: string): string[] {
  const nameErrors =
    name === undefined
      ? []
      : validateName('profile', name, path.slice(0, Math.max(0, path.lastIndexOf('.'))) || path);
  if (!Array.isArray(profile?.steps) || profile.steps.length === 0) {
    return [...nameErrors, `${path}.steps: list at least one step ({ holdS, setpoint } or { rampS, to })`];
  }
  const errors: string[] = [...nameErrors];
  profile.steps.forEach((step, i) => {
    const at = `${path}.steps[${i}]`;
    const isHold = step !== null && typeof step === 'object' && 'holdS' in step;
    const isRamp = step !== null && typeof step === 'object' && isRampStep(step);
    if (isHold === isRamp) {
      errors.push(`${at}: a step is either { holdS, setpoint } or { rampS, to }`);
      return;
    }
    const [durationKey, durationS, valueKey, value] = isRamp
      ? ['rampS', (step as { rampS: number }).rampS, 'to', (step as { to: number }).to]
      : ['holdS', (step as { holdS: number }).holdS, 'setpoint', (step as { setpoint: number }).setpoint];
    errors.push(...durationErrors(durationS, `${at}.${durationKey}`, ''));
    if (!isFiniteNumber(value)) errors.push(`${at}.${valueKey}: must be a finite number`);
    if (isRamp && i === 0)
      errors.push(`${at}: a ramp needs a step before it to start from (put a hold first)`);
  });
  return errors;
}
