/**
 * A loop's Brewfather custom stream (https://docs.brewfather.app/integrations/custom-stream):
 * its temperature and recorded values (an iSpindel's gravity, a fridge probe) posted to
 * Brewfather's log, at most once per 15 minutes as Brewfather asks.
 */
import { z } from 'zod';

/** Brewfather ignores a device's posts closer than this, s. */
export const BREWFATHER_MIN_INTERVAL_S = 900;

/** The stream fields a recorded series can fill (Brewfather's names). */
export const BREWFATHER_VALUE_FIELDS = [
  'gravity',
  'aux_temp',
  'ext_temp',
  'pressure',
  'ph',
  'bpm',
  'battery',
] as const;
export type BrewfatherValueField = (typeof BREWFATHER_VALUE_FIELDS)[number];

const FIELD_TEXT: Record<BrewfatherValueField, string> = {
  gravity: 'gravity (in gravityUnit)',
  aux_temp: 'Fridge Temp in Brewfather',
  ext_temp: 'Room Temp in Brewfather',
  pressure: 'pressure (in pressureUnit)',
  ph: 'pH',
  bpm: 'airlock bubbles per minute',
  battery: "a hydrometer's battery, volts",
};

const valueFields = Object.fromEntries(
  BREWFATHER_VALUE_FIELDS.map((field) => [
    field,
    z
      .string()
      .min(1)
      .optional()
      .describe(
        `Sensor id of one of this loop's record entries, posted as ${field}: ${FIELD_TEXT[field]}. Default: none.`,
      ),
  ]),
) as Record<BrewfatherValueField, z.ZodOptional<z.ZodString>>;

export const brewfatherSchema = z
  .strictObject({
    streamIdFile: z
      .string()
      .min(1)
      .describe(
        'Path of a file holding the logging id of Settings → Power-ups → Custom Stream (or the whole ' +
          'URL shown there); anyone who has it can post to your account, so it is read like a token. Required.',
      ),
    name: z
      .string()
      .regex(/^[-_ .A-Za-z0-9]{1,40}$/, { error: 'name: 1–40 letters, digits, spaces, - _ and .' })
      .optional()
      .describe('The device name in Brewfather (one per stream). Default: the loop id.'),
    everyS: z
      .number()
      .int()
      .min(BREWFATHER_MIN_INTERVAL_S, {
        error: 'everyS: at least 900 (Brewfather ignores posts closer than 15 min)',
      })
      .default(BREWFATHER_MIN_INTERVAL_S)
      .describe(
        'Seconds between posts; Brewfather ignores a device posting more often than every 900. Default 900.',
      ),
    beer: z.string().max(60).optional().describe('The beer, shown with the readings. Default: none.'),
    ...valueFields,
    gravityUnit: z
      .enum(['G', 'P'])
      .default('G')
      .describe('G: specific gravity (1.XXX); P: degrees Plato. Default G.'),
    pressureUnit: z.enum(['PSI', 'BAR', 'KPA']).default('PSI').describe('Unit of pressure. Default PSI.'),
    apiUrl: z
      .url({ protocol: /^https?$/, error: 'apiUrl must be an http:// or https:// URL' })
      .default('https://log.brewfather.net')
      .describe('The log server. Default https://log.brewfather.net.'),
  })
  .describe(
    "Post this loop's temperature (and recorded values such as gravity) to a Brewfather custom stream, at most every 15 min. Temperature loops only. Default: none.",
  );

export type BrewfatherConfig = z.output<typeof brewfatherSchema>;
