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

export function validateTimeZone(timeZone: string, path: string): string[] {
  return isValidTimeZone(timeZone)
    ? []
    : [`${path}: unknown time zone "${String(timeZone)}" (an IANA name such as Europe/Berlin, or UTC)`];
}

export function validatePresets(presets: Presets, path: string): string[] {
  const errors: string[] = [];
  for (const [name, preset] of Object.entries(presets ?? {})) {
    if (name.trim() === '') errors.push(`${path}: a preset needs a name`);
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
  if (spec.manualHoldS !== undefined && !(isFiniteNumber(spec.manualHoldS) && spec.manualHoldS > 0)) {
    errors.push(
      `${path}.manualHoldS: must be a number of seconds above 0 (leave it out to hold until the next point)`,
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

/** Errors in a profile; `path` e.g. 'loops.fermenter.profiles.lager'. */
export function validateProfile(profile: Profile, path: string): string[] {
  if (!Array.isArray(profile?.steps) || profile.steps.length === 0) {
    return [`${path}.steps: list at least one step ({ holdS, setpoint } or { rampS, to })`];
  }
  const errors: string[] = [];
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
    if (!(isFiniteNumber(durationS) && durationS > 0))
      errors.push(`${at}.${durationKey}: must be a number of seconds above 0`);
    if (!isFiniteNumber(value)) errors.push(`${at}.${valueKey}: must be a finite number`);
    if (isRamp && i === 0)
      errors.push(`${at}: a ramp needs a step before it to start from (put a hold first)`);
  });
  return errors;
}
