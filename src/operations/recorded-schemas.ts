import { z } from 'zod';
import { apiSchemas, historyResponse as loopHistory } from './schemas.js';

/**
 * The history answer with the loop's recorded sensors (loops.<id>.record): the
 * History shape of schemas.ts plus `recorded`, one series per recorded sensor. Kept apart so
 * schemas.ts does not grow.
 */

const isoTime = z.iso.datetime({ offset: true }).describe('ISO 8601 time');

export const recordedPoint = z
  .object({
    at: isoTime,
    value: z
      .number()
      .nullable()
      .describe('The value in the series unit; null: a gap (no reading, not a number, or stale)'),
  })
  .register(apiSchemas, { id: 'RecordedPoint' });

export const recordedSeriesView = z
  .object({
    sensor: z.string().describe('Id of the sensor recorded'),
    label: z.string().describe('Name of the series (loops.<id>.record label; default the sensor id)'),
    unit: z.string().describe("Unit of the series (a label); default the loop's unit"),
    points: z.array(recordedPoint),
  })
  .register(apiSchemas, { id: 'RecordedSeries' });

export const historyResponse = loopHistory
  .extend({
    recorded: z
      .array(recordedSeriesView)
      .optional()
      .describe(
        "Sensors recorded beside the loop, never regulated on, in the config's order (bucket means " +
          'beyond maxPoints); absent from daemons without recording',
      ),
  })
  .register(apiSchemas, { id: 'History' });

export type HistoryResponse = z.infer<typeof historyResponse>;
export type RecordedSeriesView = z.infer<typeof recordedSeriesView>;
