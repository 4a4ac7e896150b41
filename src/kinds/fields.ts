/**
 * Zod fragments that several hardware kinds share: the sensor timing fields, a relay's timing
 * and safety fields, BCM pin numbers, MQTT topics and JSON field paths. Kinds spread or reuse
 * them so the same field reads the same (and is described the same) in every kind.
 */
import { z } from 'zod';
import { MAX_HALF_BAND } from '../core/duty-band.js';
import { FIELD_PATH_PATTERN, plainTopicProblem } from '../drivers/mqtt/payload.js';
import { maxOnTimeConfig } from './monitors/max-on-time.js';
import { startCapConfig } from './monitors/start-cap.js';
import { BAND_RENAMED } from './renamed-keys.js';

/** A reference to another section of the file (a plant, a sensor, an actuator). */
export const ref = (what: string) => z.string().min(1).describe(`Id of a ${what} defined in this file.`);

/** An exact MQTT topic: wildcards would match other devices, `$` topics are the broker's. */
export const plainTopic = z.string().superRefine((topic, ctx) => {
  const problem = plainTopicProblem(topic);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** A dot path into a JSON payload. */
export const fieldPath = z.string().regex(FIELD_PATH_PATTERN, {
  error: 'use a dot path such as AM2301.Temperature (no spaces, no empty parts)',
});

/** Timing every sensor kind has (spread into its object). */
export const sensorCommon = {
  periodS: z.number().gt(0).default(10).describe('Seconds between two reads. Default 10.'),
  staleAfterS: z
    .number()
    .gt(0)
    .optional()
    .describe('Seconds after which the latest reading counts as missing. Default 3 × periodS.'),
};

/** How a sensor kind describes its `plausible` field, in its own unit and terms. */
export interface PlausibleText {
  /** Of `plausible.min`. */
  min: string;
  /** Of `plausible.max`. */
  max: string;
  /** Of `plausible` itself, with its default. */
  range: string;
}

/** A sensor's believable range: readings outside are rejected by its driver. */
export function plausibleSchema(text: PlausibleText) {
  return z
    .strictObject({ min: z.number().describe(text.min), max: z.number().describe(text.max) })
    .optional()
    .describe(text.range);
}

/** A `plausible` range, when given, must not be empty (a sensor's, a loop's). */
export function checkPlausible(
  section: { plausible?: { min: number; max: number } | undefined },
  ctx: z.RefinementCtx,
): void {
  if (section.plausible && !(section.plausible.min < section.plausible.max)) {
    ctx.addIssue({ code: 'custom', path: ['plausible', 'min'], message: 'must be less than plausible.max' });
  }
}

/** A BCM GPIO number: the Pi's main controller has 54 (58 on a Pi 4, the last 4 unused). */
const bcmSchema = z
  .number()
  .int()
  .min(0)
  .max(53)
  .describe(
    'BCM GPIO number, 0..53 (GPIO17 of pinout diagrams, not the header pin); each pin once per file. ' +
      'Required.',
  );

/**
 * The pin of a GPIO kind (spread into its object): its BCM number and `activeLow`, whose default
 * and meaning are the kind's (a relay board is usually active low, an input is not).
 */
export function gpioPinFields(activeLow: { default: boolean; description: string }) {
  return {
    bcm: bcmSchema,
    activeLow: z.boolean().default(activeLow.default).describe(activeLow.description),
  };
}

/** A simulated actuator's effect on its plant. */
export const gainSchema = z
  .number()
  .describe(
    'Steady-state change of the plant at full output (°C or %RH): +20 for a heater, -15 for a cooler.',
  );

/** The maximum on-time's field, shared by every actuator kind (monitors/max-on-time.ts). */
export const maxOnSchema = maxOnTimeConfig.schema;

/** A continuous actuator's safe output. */
export const safeLevelSchema = z
  .number()
  .min(0)
  .max(1)
  .default(0)
  .describe('Output (0..1) forced on faults, stale readings and shutdown. Default 0.');

/** How long an MQTT actuator trusts its device's last state report. */
export const stateStaleAfterS = z
  .number()
  .gt(0)
  .default(600)
  .describe(
    'A state report older than this many seconds makes the state unknown, and the command is sent ' +
      'again. Keep it above the keep-alive (300 s): the command is re-sent that often and devices ' +
      'answer it with their state. Default 600.',
  );

/** Half width of a relay's modulation band, in the loop's unit, when the file gives none. */
export const DEFAULT_BAND = 0.25;

/** Time-proportioning window, s, when the file gives none. */
export const DEFAULT_WINDOW_S = 600;

/**
 * How a relay under a PID is driven when the file says nothing (neither modulation nor
 * windowS): the duty band. `npm run bench:control` ("homeostat defaults" rows): with the band
 * a PI relay beats Home Assistant's ±0.3 °C hysteresis on both relay plants, where 600 s
 * windows without minimum times regulated twice as badly (defaults must never be
 * worse than the thermostat people replace).
 */
export const DEFAULT_MODULATION: 'window' | 'band' = 'band';

/**
 * Largest half band in duty units a defaulted band is narrowed to (the core's MAX_HALF_BAND):
 * a band that is only a default must never make a valid file invalid, so with kp·band ≥ 0.5
 * the band is narrowed to kp·band = 0.49 (on above output 0.99, off below 0.01: a thermostat
 * whose hysteresis is 0.49/kp either side) instead of failing the check an explicit band gets.
 */
export const DEFAULT_MAX_HALF_BAND = MAX_HALF_BAND;

/** How a relay is driven: shared by every relay kind (simulated, MQTT, GPIO). */
export const relayFields = {
  minOnS: z
    .number()
    .min(0)
    .default(0)
    .describe('Shortest on time, seconds (protects compressors). Default 0.'),
  minOffS: z.number().min(0).default(0).describe('Shortest off time, seconds. Default 0.'),
  // Optional here, defaulted by resolveRelayBand: whether the file gives a window decides the
  // default modulation. The JSON schema still shows the default (meta).
  windowS: z
    .number()
    .gt(0)
    .optional()
    .meta({ default: DEFAULT_WINDOW_S })
    .describe(
      'Time-proportioning window, seconds (modulation window): a PID output of 0.3 is on 30 % of each ' +
        'window. Giving it without modulation chooses modulation window. ' +
        `Default ${DEFAULT_WINDOW_S}.`,
    ),
  modulation: z
    .enum(['window', 'band'])
    .optional()
    .meta({ default: DEFAULT_MODULATION })
    .describe(
      'How a PID output (0..1) drives the relay. band: on above output 0.5 + kp·band, off below ' +
        '0.5 − kp·band; regulates closer than a hysteresis thermostat at a similar switching rate, best ' +
        'with PI (tdS 0). window: time-proportioning over windowS, a predictable switching rate (relay ' +
        'wear, compressors). Minimum on/off times hold with both; a hysteresis controller ignores it. ' +
        'Default band, or window when the relay gives windowS.',
    ),
  // Optional here, defaulted by resolveRelayBand: a default would hide whether `band` was written
  // beside its deprecated name. The JSON schema still shows the default (meta).
  band: z
    .number()
    .gt(0)
    .optional()
    .meta({ default: DEFAULT_BAND })
    .describe(
      "With modulation band: half width of the band in the loop's unit (°C, %RH, or a generic loop's " +
        'own); on the PID output it is kp·band, which must stay below 0.5 when modulation band is ' +
        'written (when band is only the default modulation, a wider kp·band is narrowed to 0.49). ' +
        `Wider: fewer switches, more ripple. Default ${DEFAULT_BAND}.`,
    ),
  bandC: z
    .number()
    .gt(0)
    .optional()
    .meta({ deprecated: true })
    .describe('Deprecated name of band (same value, read with a warning); give only one of them.'),
  safeState: z
    .enum(['off', 'on'])
    .default('off')
    .describe('State forced on faults, stale readings and shutdown. Default off.'),
  maxStartsPerHour: startCapConfig.schema,
  maxOnS: maxOnTimeConfig.schema,
};

const relayObject = z.object(relayFields);
/** A relay's fields as parsed: `band` or its deprecated name `bandC`, either may be absent. */
export type RawRelayFields = z.output<typeof relayObject>;
/** A relay section resolved: `band` always set, `bandC` gone, `windowS` and `modulation` set. */
export type WithBand<Section extends RawRelayFields> = Omit<
  Section,
  'band' | 'bandC' | 'windowS' | 'modulation'
> & {
  band: number;
  windowS: number;
  modulation: 'window' | 'band';
  /**
   * The file gave neither `modulation` nor `windowS`: the modulation is only the default, and a
   * tuning's suggested modulation may replace it (core/tuning/tuning-modulation.ts).
   */
  modulationDefaulted: boolean;
};
/** A relay's fields once resolved (what the relay spec builder reads). */
export type RelayFields = WithBand<RawRelayFields>;

/** The band a relay section asks for: `band`, else its deprecated name `bandC`, else the default. */
export function relayBandOf(raw: Pick<RawRelayFields, 'band' | 'bandC'>): {
  key: 'band' | 'bandC';
  band: number;
} {
  if (raw.bandC !== undefined) return { key: 'bandC', band: BAND_RENAMED.toNew(raw.bandC) };
  return { key: 'band', band: raw.band ?? DEFAULT_BAND };
}

/**
 * The modulation a relay section asks for: the written one; else window when it gives a window
 * (a file written for windows keeps them); else the default, the band.
 */
export function relayModulationOf(raw: Pick<RawRelayFields, 'modulation' | 'windowS'>): 'window' | 'band' {
  if (raw.modulation !== undefined) return raw.modulation;
  return raw.windowS !== undefined ? 'window' : DEFAULT_MODULATION;
}

/** A relay kind's resolution: `band` filled in (from `bandC` when the file still uses it), the window and modulation. */
export function resolveRelayBand<Section extends RawRelayFields>(raw: Section): WithBand<Section> {
  const { band: _band, bandC: _bandC, windowS, modulation: _modulation, ...rest } = raw;
  return {
    ...rest,
    band: relayBandOf(raw).band,
    windowS: windowS ?? DEFAULT_WINDOW_S,
    modulation: relayModulationOf(raw),
    modulationDefaulted: raw.modulation === undefined && windowS === undefined,
  };
}
