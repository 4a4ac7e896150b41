/** Vocabulary every section shares: modes, quantities, id patterns, ranges, per-quantity defaults. */
import { z } from 'zod';
import { MODES, type Quantity } from '../../core/types.js';

export const QUANTITIES = ['temperature', 'humidity', 'generic'] as const satisfies readonly Quantity[];

/** Node ids end up in MQTT topics and Home Assistant unique ids. */
export const NODE_ID_PATTERN = /^[a-z0-9_-]+$/;
/** Loop ids end up in MQTT topics and Home Assistant entity ids (which have no `-`). */
export const LOOP_ID_PATTERN = /^[a-z0-9_]+$/;
/** Sensor, actuator and plant ids: same alphabet as node ids, so paths and topics stay plain. */
export const ID_PATTERN = /^[a-z0-9_-]+$/;

export const modeSchema = z
  .enum(MODES)
  .describe(
    'What the loop is asked to do: off, heat, cool, heat_cool (temperature/generic), humidify, dehumidify, auto (humidity).',
  );

export const idKey = (what: string) =>
  z.string().regex(ID_PATTERN, { error: `invalid ${what} id: use lowercase letters, digits, _ and -` });

export { ref } from '../../kinds/fields.js';

export const rangeSchema = (what: string) =>
  z.strictObject({
    min: z.number().describe(`Lowest ${what}, in the loop's unit.`),
    max: z.number().describe(`Highest ${what}, in the loop's unit; must be greater than min.`),
  });

/** A closed range in the loop's unit. */
export interface Range {
  min: number;
  max: number;
}

/** Defaults that depend on a loop's quantity (temperature's in °C: see defaultPlausible for °F). */
export const QUANTITY_DEFAULTS: Record<Quantity, { unit: string; step: number; plausible: Range }> = {
  temperature: { unit: '°C', step: 0.5, plausible: { min: -55, max: 125 } },
  humidity: { unit: '%', step: 1, plausible: { min: 0, max: 100 } },
  // A generic quantity has no natural range: no plausibility check unless configured.
  generic: {
    unit: '',
    step: 0.5,
    plausible: { min: Number.NEGATIVE_INFINITY, max: Number.POSITIVE_INFINITY },
  },
};

/** The temperature units a loop may have: the two Home Assistant's climate entity can show. */
export const TEMPERATURE_UNITS = ['°C', '°F'] as const;

/**
 * A loop's plausible range when its file gives none: its quantity's, in its unit. A °F loop's is
 * the °C range converted (−55..125 °C = −67..257 °F, a DS18B20's range), or every reading of a
 * 150 °F kettle would be a fault.
 */
export function defaultPlausible(quantity: Quantity, unit: string | undefined): Range {
  const { min, max } = QUANTITY_DEFAULTS[quantity].plausible;
  if (quantity === 'temperature' && unit === '°F') return { min: toFahrenheit(min), max: toFahrenheit(max) };
  return { min, max };
}

function toFahrenheit(celsius: number): number {
  return (celsius * 9) / 5 + 32;
}
