import { z } from 'zod';
import { FileValueSensor } from '../../drivers/file-value.js';
import { checkPlausible, plausibleSchema, sensorCommon } from '../fields.js';
import { type CheckResult, failedCheck, sensorKind } from '../types.js';

const schema = z
  .strictObject({
    kind: z.literal('file_value').describe('Sensor kind: decides which other keys apply. Required.'),
    path: z
      .string()
      .regex(/^\//, { error: 'must be an absolute path, e.g. /sys/class/thermal/thermal_zone0/temp' })
      .describe(
        'Absolute path of a file holding one number, read at every sample (a sysfs attribute such as ' +
          '/sys/class/thermal/thermal_zone0/temp, an hwmon or 1-Wire-like device). Required.',
      ),
    scale: z
      .number()
      .refine((scale) => scale !== 0, { error: 'must not be 0' })
      .default(1)
      .describe('Multiplier applied to the number read, e.g. 0.001 for millidegrees. Default 1.'),
    offset: z
      .number()
      .default(0)
      .describe("Added after scale, in the loop's unit (a calibration correction). Default 0."),
    ...sensorCommon,
    plausible: plausibleSchema({
      min: 'Lowest believable reading, after scale and offset.',
      max: 'Highest believable reading, after scale and offset; greater than min.',
      range: 'Readings outside are rejected by the driver (kept out of history too). Default: no check.',
    }),
  })
  .describe(
    'A number read from a file (sysfs, hwmon, a 1-Wire-like device): value × scale + offset. A ' +
      'file saying nan or inf sends the loop safe at once; a missing file or anything else but ' +
      'one decimal number is a failed read: the reading goes stale.',
  )
  .superRefine(checkPlausible);

type FileValueSection = z.output<typeof schema>;

const driverOf = (id: string, sensor: FileValueSection) =>
  new FileValueSensor({
    id,
    path: sensor.path,
    scale: sensor.scale,
    offset: sensor.offset,
    plausible: sensor.plausible,
  });

/** Doctor: every configured file exists and holds a number. */
async function checkFiles(items: { id: string; section: FileValueSection }[]): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const { id, section } of items) {
    const name = `file sensors.${id}`;
    try {
      const value = await driverOf(id, section).read();
      if (!Number.isFinite(value)) throw new Error(`${section.path} says the value is unknown (${value})`);
      results.push({ name, status: 'ok', detail: `${value} (${section.path})` });
    } catch (error) {
      results.push(
        failedCheck(
          name,
          error,
          `check that ${section.path} exists, is readable by the user running homeostat and holds one number (cat ${section.path})`,
        ),
      );
    }
  }
  return results;
}

export const fileValueSensor = sensorKind({
  kind: 'file_value',
  schema,
  simulated: false,
  usesMqtt: false,
  driverFields: ['path', 'scale', 'offset', 'plausible'],
  createDriver: (sensor, ctx) => driverOf(ctx.id, sensor),
  doctor: { check: checkFiles },
});
