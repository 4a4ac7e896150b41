/**
 * A loop's presets, weekly schedule and profiles: the zod fields spread into the loop
 * section, and the loop-level check run from its superRefine chain. The rules themselves are the
 * pure core's (src/core/schedule/validate.ts); this file adds what only the config knows: the
 * loop's limits and the modes its actuators allow.
 */
import { z } from 'zod';
import { WEEKDAYS } from '../../core/schedule/types.js';
import {
  validatePresets,
  validateProfile,
  validateSchedule,
  validateTimeZone,
} from '../../core/schedule/validate.js';
import type { Mode } from '../../core/types.js';
import { modeSchema } from './common.js';
import { allowedModes, type LoopShape } from './modes.js';

const presetSchema = z
  .strictObject({
    setpoint: z.number().describe('Setpoint of the preset (loop unit); must lie within limits.'),
    mode: modeSchema
      .optional()
      .describe("Mode the preset puts the loop in (one the loop allows). Default: the loop's mode stays."),
  })
  .describe('A named setpoint (and mode).');

const weeklyEntrySchema = z
  .strictObject({
    days: z.array(z.enum(WEEKDAYS)).min(1).describe('Days of the week: mon, tue, wed, thu, fri, sat, sun.'),
    at: z.string().describe('Local time (node.timeZone) the entry starts, HH:MM.'),
    setpoint: z
      .number()
      .optional()
      .describe(
        'Setpoint from then on (loop unit). Exactly one of setpoint and preset. Default: none (give preset).',
      ),
    preset: z
      .string()
      .optional()
      .describe(
        'A preset of this loop, from then on. Exactly one of setpoint and preset. Default: none (give setpoint).',
      ),
  })
  .describe('One point of the weekly schedule: in force from `at` until the next entry.');

const holdStepSchema = z.strictObject({
  holdS: z.number().describe('How long to hold, seconds (above 0).'),
  setpoint: z.number().describe('Setpoint held (loop unit); must lie within limits.'),
});

const rampStepSchema = z.strictObject({
  rampS: z.number().describe('How long the ramp lasts, seconds (above 0).'),
  to: z.number().describe("Where the ramp ends (loop unit), linearly from the previous step's setpoint."),
});

/** The loop section's fields; spread into loopSchema's object. */
export const scheduleFields = {
  presets: z
    .record(z.string().min(1), presetSchema)
    .optional()
    .describe(
      'Named presets (eco, away, comfort…), selected over MQTT <loop>/preset/set, the API, the CLI or ' +
        "Home Assistant's preset_mode. A manual setpoint change leaves the preset. Default: none.",
    ),
  schedule: z
    .strictObject({
      weekly: z
        .array(weeklyEntrySchema)
        .optional()
        .describe('Entries by day and local time; each is in force until the next one. Default: none.'),
      manualHoldS: z
        .number()
        .optional()
        .describe(
          'A manual change holds exactly this long (seconds), then the schedule or profile is in force again. ' +
            'Default: until the next schedule point or profile step.',
        ),
    })
    .optional()
    .describe('Weekly schedule in the node time zone (node.timeZone). Default: none.'),
  profiles: z
    .record(
      z.string().min(1),
      z.strictObject({
        steps: z
          .array(z.union([holdStepSchema, rampStepSchema]))
          .describe('Holds { holdS, setpoint } and ramps { rampS, to }, in order; start with a hold.'),
      }),
    )
    .optional()
    .describe(
      'Named profiles (a fermentation: hold, ramp, hold, crash), started, paused, resumed and stopped at ' +
        'run time. A started profile wins over the weekly schedule. Default: none.',
    ),
};

/** What checkSchedule reads of a loop. */
export interface ScheduledLoopShape extends LoopShape {
  limits: { min: number; max: number };
  presets?: Record<string, { setpoint: number; mode?: Mode }> | undefined;
  schedule?:
    | {
        weekly?: { days: (typeof WEEKDAYS)[number][]; at: string; setpoint?: number; preset?: string }[];
        manualHoldS?: number;
      }
    | undefined;
  profiles?: Record<
    string,
    { steps: ({ holdS: number; setpoint: number } | { rampS: number; to: number })[] }
  >;
}

/**
 * The loop-level rules: the core's validation (unknown preset, HH:MM, a ramp first…), then every
 * value within the loop's limits and every preset mode one its actuators allow. Paths relative
 * to the loop (load.ts prefixes `loops.<id>.`). The zone is node.timeZone's to check (node.ts).
 */
export function checkSchedule(loop: ScheduledLoopShape, ctx: z.RefinementCtx): void {
  const messages: string[] = [];
  if (loop.presets) messages.push(...validatePresets(loop.presets, 'presets'));
  if (loop.schedule) {
    messages.push(
      ...validateSchedule(
        {
          ...(loop.schedule.weekly ? { weekly: loop.schedule.weekly } : {}),
          ...(loop.presets ? { presets: loop.presets } : {}),
          ...(loop.schedule.manualHoldS === undefined ? {} : { manualHoldS: loop.schedule.manualHoldS }),
          timeZone: 'UTC',
        },
        'schedule',
      ),
    );
  }
  for (const [name, profile] of Object.entries(loop.profiles ?? {})) {
    messages.push(...validateProfile(profile, `profiles.${name}`, name));
  }
  messages.push(...outOfLimits(loop), ...modesNotAllowed(loop));
  for (const message of messages) {
    const { path, text } = splitPath(message);
    ctx.addIssue({ code: 'custom', path, message: text });
  }
}

/** Every setpoint a preset, schedule entry or profile step gives, within limits. */
function outOfLimits(loop: ScheduledLoopShape): string[] {
  const { min, max } = loop.limits;
  if (!(min < max)) return []; // reported on limits.min
  const check = (value: number, path: string): string[] =>
    Number.isFinite(value) && (value < min || value > max)
      ? [`${path}: ${value} is outside limits ${min}..${max}`]
      : [];
  const errors: string[] = [];
  for (const [name, preset] of Object.entries(loop.presets ?? {})) {
    errors.push(...check(preset.setpoint, `presets.${name}.setpoint`));
  }
  (loop.schedule?.weekly ?? []).forEach((entry, i) => {
    if (entry.setpoint !== undefined) errors.push(...check(entry.setpoint, `schedule.weekly[${i}].setpoint`));
  });
  for (const [name, profile] of Object.entries(loop.profiles ?? {})) {
    profile.steps.forEach((step, i) => {
      const [key, value] = 'rampS' in step ? ['to', step.to] : ['setpoint', step.setpoint];
      errors.push(...check(value, `profiles.${name}.steps[${i}].${key}`));
    });
  }
  return errors;
}

/** A preset's mode must be one the loop's actuators can do (as the loop's own `mode`). */
function modesNotAllowed(loop: ScheduledLoopShape): string[] {
  if (loop.raise === undefined && loop.lower === undefined) return []; // reported on the loop
  const allowed = allowedModes(loop);
  return Object.entries(loop.presets ?? {}).flatMap(([name, preset]) =>
    preset.mode === undefined || allowed.includes(preset.mode)
      ? []
      : [
          `presets.${name}.mode: mode "${preset.mode}" is not allowed for this loop (allowed: ${allowed.join(', ')})`,
        ],
  );
}

/** 'schedule.weekly[2].preset: unknown…' → (['schedule','weekly',2,'preset'], 'unknown…'). */
export function splitPath(message: string): { path: (string | number)[]; text: string } {
  const at = message.indexOf(': ');
  if (at < 0) return { path: [], text: message };
  const path = message
    .slice(0, at)
    .split(/\.|\[(\d+)\]/)
    .filter((part) => part !== undefined && part !== '')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  return { path, text: message.slice(at + 2) };
}

let systemZone: string | undefined;

/**
 * The zone of this system, or 'UTC' when it cannot be used. Resolved once per process: it
 * builds an Intl.DateTimeFormat, and every loop's cycle asks (nodeTimeZone) when node.timeZone
 * is unset. A changed system zone (TZ, /etc/localtime) takes a restart, as for every process.
 */
export function systemTimeZone(): string {
  systemZone ??= resolveSystemTimeZone();
  return systemZone;
}

function resolveSystemTimeZone(): string {
  try {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return zone && validateTimeZone(zone, 'zone').length === 0 ? zone : 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The node's time zone: node.timeZone when the config gives it, else the system's. */
export function nodeTimeZone(config: { node: { timeZone?: string | undefined } }): string {
  const zone = config.node.timeZone;
  return zone !== undefined && zone !== '' ? zone : systemTimeZone();
}
