/**
 * Values a loop records without regulating on them: outdoor temperature, an
 * iSpindel's gravity and battery, a second probe. They are sampled like every sensor, stored in
 * the loop's history, drawn on its chart and exported (/metrics, the API, `history --csv`); the
 * loop's control never reads them, so their faults never send it safe.
 */
import { z } from 'zod';
import { ref } from './common.js';

const recordEntry = z.union([
  ref('sensor'),
  z.strictObject({
    sensor: ref('sensor').describe('Id of the sensor recorded. Required.'),
    label: z
      .string()
      .min(1)
      .max(40)
      .optional()
      .describe('Name of the series on the chart and in /metrics labels. Default: the sensor id.'),
    unit: z
      .string()
      .max(12)
      .optional()
      .describe(
        "Unit of the series (a label: nothing converts); a unit other than the loop's gets an axis " +
          "of its own on the chart. Default: the loop's unit.",
      ),
  }),
]);

/** The loop key, spread into the loop schema (schema/loop.ts). */
export const recordFields = {
  record: z
    .array(recordEntry)
    .max(8)
    .optional()
    .describe(
      'Sensors recorded beside the loop without regulating on them (outdoor temperature, a ' +
        "hydrometer's gravity, a second probe): each a sensor id, or {sensor, label, unit}. Sampled on " +
        "the sensor's own periodS, stored in the loop's history, drawn on its chart, in /metrics, the " +
        "API and history --csv. A recorded sensor's faults never send the loop safe: a reading " +
        "missing or not a number is a gap in its series. May be another loop's sensor, not this loop's " +
        'own. At most 8. Default: none.',
    ),
};

/** One recorded series of a loop, defaults filled in. */
export interface RecordedSeries {
  sensor: string;
  label: string;
  unit: string;
}

type RecordEntry = z.output<typeof recordEntry>;

/** A loop's recorded series in file order; `loopUnit` is the default unit. */
export function recordedSeriesOf(
  loop: { record?: RecordEntry[] | undefined; unit?: string | undefined },
  loopUnit = loop.unit ?? '',
): RecordedSeries[] {
  return (loop.record ?? []).map((entry) =>
    typeof entry === 'string'
      ? { sensor: entry, label: entry, unit: loopUnit }
      : { sensor: entry.sensor, label: entry.label ?? entry.sensor, unit: entry.unit ?? loopUnit },
  );
}
