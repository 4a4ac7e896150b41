import { z } from 'zod';
import { apiSchemas, isoTime } from './registry.js';

/** The writes' shapes: their bodies, their answer, and the stored tunings a tuning write picks from. */

/** The answer to every write: the MQTT `<loop>/result` payload's fields. */
export const commandResult = z
  .object({
    loop: z.string(),
    accepted: z.boolean(),
    reason: z.string().optional().describe('Why it was refused (nothing was changed)'),
    generation: z.number().int().optional().describe('The loop generation after the command'),
    requestId: z.string().optional(),
    changed: z
      .boolean()
      .optional()
      .describe(
        'Tuning writes: whether the tuning in force changed (false: it already was the one asked for)',
      ),
  })
  .register(apiSchemas, { id: 'CommandResult' });

/**
 * Bodies of the writes. They are handed as text to the MQTT command parser
 * (src/control/commands.ts), the one that validates MQTT commands: these schemas only document
 * them; the parser decides (strict, never clamps).
 */
export const setRequest = z
  .object({
    setpoint: z.number().optional(),
    mode: z.string().optional(),
    requestId: z.string().max(64).optional(),
  })
  .register(apiSchemas, { id: 'SetRequest' });

/**
 * POST /api/loops/{loop}/autotune: `{}` starts with the loop's defaults. Handed as text to the
 * parser of MQTT `autotune/set` (src/control/tuning-payloads.ts), which refuses unknown keys, a
 * cancel with options and durations that are not seconds above 0 (closedLoopS at most 1 day,
 * maxDurationS at most 7 days).
 */
export const autotuneRequest = z
  .object({
    action: z.enum(['start', 'cancel']).optional().describe('Default start'),
    side: z
      .enum(['raise', 'lower'])
      .optional()
      .describe('Which actuator to tune (start only); required in heat_cool and auto. Default: the mode’s'),
    closedLoopS: z
      .number()
      .positive()
      .max(86_400)
      .optional()
      .describe('SIMC closed-loop time constant, seconds (start only). Default: the identified dead time'),
    maxDurationS: z
      .number()
      .positive()
      .max(7 * 86_400)
      .optional()
      .describe('Time limit of the run, seconds (start only). Default: the loop’s, else 48 h'),
    requestId: z.string().max(64).optional(),
  })
  .register(apiSchemas, { id: 'AutotuneRequest' });

/** POST /api/loops/{loop}/tuning: handed as text to the parser of MQTT `tuning/set`. */
export const tuningRequest = z
  .object({
    version: z
      .union([z.number().int().min(1), z.enum(['latest', 'config'])])
      .describe('A stored version, "latest" (accept the newest) or "config" (the config file’s gains)'),
    requestId: z.string().max(64).optional(),
  })
  .register(apiSchemas, { id: 'TuningRequest' });

/** A PID's gains, as a tuning and an autotune's result give them. */
export const pidGainFields = { kp: z.number(), tiS: z.number(), tdS: z.number() };

/**
 * The identified first-order-plus-dead-time model, as a stored tuning and an autotune's result
 * give it (a standard error null: not known).
 */
export const fopdtModelFields = {
  gain: z.number(),
  timeConstantS: z.number(),
  deadTimeS: z.number(),
  ambient: z.number(),
  standardError: z.object({
    gain: z.number().nullable(),
    timeConstantS: z.number().nullable(),
    deadTimeS: z.number().nullable(),
  }),
  rmsResidual: z.number().nullable(),
};

/** One side's PID gains in a stored tuning. */
const tuningGainsView = z.object({
  ...pidGainFields,
  setpointWeight: z
    .number()
    .optional()
    .describe(
      'Setpoint weight b, 0..1 (absent: the config’s b stays); the autotune derives it from the model',
    ),
});

/** One stored tuning (DesiredStore.tunings). */
export const tuningView = z
  .object({
    version: z.number().int(),
    createdAt: isoTime,
    source: z.string().describe('Where the gains came from: autotune or manual'),
    active: z.boolean().describe('In force now'),
    gains: tuningGainsView.describe(
      'The PID’s gains; on a loop with a heater and a cooler, the raise side’s',
    ),
    lowerGains: tuningGainsView
      .optional()
      .describe(
        'A loop with a heater and a cooler: the lower side’s gains (absent: `gains` serve both sides)',
      ),
    model: z
      .object({
        ...fopdtModelFields,
        standardError: fopdtModelFields.standardError.describe('null: not known (fewer than 2 cycles)'),
      })
      .optional()
      .describe('The identified first-order-plus-dead-time model, when there is one'),
    details: z.unknown().optional().describe("The autotune's summary (cycles, noise, band, modulation…)"),
    detailsUnreadable: z.literal(true).optional().describe('The stored details could not be read'),
  })
  .register(apiSchemas, { id: 'Tuning' });

export const tuningsResponse = z
  .object({
    loop: z.string(),
    active: z
      .union([z.number().int(), z.literal('config')])
      .describe('The version in force, or "config": the config file’s gains'),
    tunings: z.array(tuningView).describe('Newest first'),
  })
  .register(apiSchemas, { id: 'Tunings' });

export const sessionRequest = z
  .object({ token: z.string().describe('The API token (http.tokenFile)') })
  .register(apiSchemas, { id: 'SessionRequest' });

/**
 * Bodies of POST /api/loops/{loop}/preset and /profile. Like the other write bodies
 * (above) they only document: the bytes go to the parser of MQTT `preset/set` and
 * `profile/set` (src/control/schedule-payloads.ts), which decides.
 */
export const presetRequest = z
  .object({
    preset: z
      .string()
      .nullable()
      .describe('A preset of the loop (loops.<id>.presets), or null (or "none") for no preset'),
    requestId: z.string().max(64).optional(),
  })
  .register(apiSchemas, { id: 'PresetRequest' });

export const profileRequest = z
  .object({
    action: z.enum(['start', 'pause', 'resume', 'stop']),
    name: z.string().optional().describe('The profile to start (loops.<id>.profiles); start only'),
    requestId: z.string().max(64).optional(),
  })
  .register(apiSchemas, { id: 'ProfileRequest' });

export type CommandResult = z.infer<typeof commandResult>;
export type TuningView = z.infer<typeof tuningView>;
export type TuningsResponse = z.infer<typeof tuningsResponse>;
