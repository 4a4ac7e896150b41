import { z } from 'zod';
import { GpioInput } from '../../drivers/gpio/input.js';
import { gpioPinFields, sensorCommon } from '../fields.js';
import { DEBOUNCE_RENAMED } from '../renamed-keys.js';
import { sensorKind } from '../types.js';

/** How long a level must hold before an edge counts, seconds, when the file gives none. */
const DEFAULT_DEBOUNCE_S = 0.02;

const schema = z
  .strictObject({
    kind: z.literal('gpio_input').describe('Sensor kind: decides which other keys apply. Required.'),
    ...gpioPinFields({
      default: false,
      description: 'Read 1 when the pin is low (a switch to ground with a pull-up). Default false.',
    }),
    // Optional here, defaulted by resolveDebounce: a default would hide whether debounceS was
    // written beside its deprecated name. The JSON schema still shows the default (meta).
    debounceS: z
      .number()
      .min(0)
      .optional()
      .meta({ default: DEFAULT_DEBOUNCE_S })
      .describe(
        'An edge counts once the level has been stable this long, seconds (0.02 = 20 ms); 0 = off. ' +
          `Default ${DEFAULT_DEBOUNCE_S}.`,
      ),
    debounceMs: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ deprecated: true })
      .describe(
        'Deprecated: debounceS in milliseconds (read as debounceMs / 1000, with a warning); give only one of them.',
      ),
    ...sensorCommon,
  })
  .describe(
    'A digital input read as 0 or 1 (window contact, float switch); use quantity generic. Read every ' +
      'periodS and at once on each edge. Set the pull-up/down in config.txt (gpio=<bcm>=ip,pu).',
  );

type RawGpioInput = z.output<typeof schema>;
/** A gpio_input section with `debounceS` resolved (from `debounceMs` when the file still uses it). */
export type GpioInputConfig = Omit<RawGpioInput, 'debounceS' | 'debounceMs'> & { debounceS: number };

function resolveDebounce(raw: RawGpioInput): GpioInputConfig {
  const { debounceMs, debounceS, ...rest } = raw;
  return {
    ...rest,
    debounceS:
      debounceMs !== undefined ? DEBOUNCE_RENAMED.toNew(debounceMs) : (debounceS ?? DEFAULT_DEBOUNCE_S),
  };
}

export const gpioInputSensor = sensorKind<typeof schema, GpioInputConfig>({
  kind: 'gpio_input',
  schema,
  simulated: false,
  usesMqtt: false,
  resolve: resolveDebounce,
  gpioPin: (sensor) => sensor.bcm,
  driverFields: ['bcm', 'activeLow', 'debounceS'],
  createDriver: (sensor, ctx) =>
    new GpioInput({
      id: ctx.id,
      bcm: sensor.bcm,
      activeLow: sensor.activeLow,
      // The driver counts in ms (onoff's debounceTimeout), to the µs: 0.007 s is 7 ms, not 7.000…01.
      debounceMs: Math.round(sensor.debounceS * 1e6) / 1e3,
      ...ctx.gpio(),
    }),
});
