import { z } from 'zod';
import { FileValueSensor } from '../../drivers/file-value.js';
import { hasWildcard, patternProblem } from '../../drivers/sysfs-glob.js';
import { checkPlausible, plausibleSchema, sensorCommon } from '../fields.js';
import { type CheckResult, type DoctorEnv, failedCheck, sensorKind } from '../types.js';

const schema = z
  .strictObject({
    kind: z.literal('file_value').describe('Sensor kind: decides which other keys apply. Required.'),
    path: z
      .string()
      .regex(/^\//, { error: 'must be an absolute path, e.g. /sys/class/thermal/thermal_zone0/temp' })
      .superRefine((path, ctx) => {
        // A relative path has its own message above; brackets and ** are refused even without
        // * or ?, since a person writing them means a pattern this reader does not expand.
        const problem = path.startsWith('/') ? patternProblem(path) : undefined;
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe(
        'Absolute path of a file holding one number, read at every sample (a sysfs attribute such as ' +
          '/sys/class/thermal/thermal_zone0/temp, an IIO or hwmon channel, a 1-Wire-like device). It may ' +
          'be a pattern with * and ? inside one path segment that must match exactly one file, e.g. ' +
          '/sys/bus/i2c/devices/1-0076/iio:device*/in_humidityrelative_input (the iio:deviceN and hwmonN ' +
          'numbers change between boots; the bus address does not): matching none or several is a failed ' +
          'read that lists the matches (doctor shows it too). An IIO channel file ending in _raw (a name ' +
          'starting in or out, such as in_temp_raw) is read as the kernel ABI says: (raw + offset) × scale, from the ' +
          "sibling files named with _offset and _scale instead of _raw (the channel's own, e.g. " +
          "in_voltage0_scale, else its type's, in_voltage_scale; absent: offset 0, scale 1), before the scale and " +
          'offset below; IIO files ending in _input and hwmon files are already processed. IIO and hwmon units: ' +
          'temperature milli °C, relative humidity milli %, IIO pressure kPa. A path under /sys is read ' +
          'under gpio.sysfsRoot when that is not /sys; other paths as written. Required.',
      ),
    scale: z
      .number()
      .refine((scale) => scale !== 0, { error: 'must not be 0' })
      .default(1)
      .describe(
        'Multiplier applied to the number read (to the processed value of an IIO _raw file), e.g. 0.001 ' +
          'for milli °C or milli % (IIO and hwmon temperature and humidity), 10 for IIO kPa to hPa. Default 1.',
      ),
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
    'A number read from a file (sysfs, an IIO or hwmon kernel sensor such as a BME280, SHT3x or ' +
      'DHT22: see docs/kernel-sensors.md): value × scale + offset. A file saying nan or inf sends the ' +
      'loop safe at once; a missing file, a read error (a DHT22 timing out) or anything else but one ' +
      'decimal number is a failed read: the last reading is kept until it goes stale.',
  )
  .superRefine(checkPlausible);

type FileValueSection = z.output<typeof schema>;

const driverOf = (id: string, sensor: FileValueSection, sysfsRoot: string) =>
  new FileValueSensor({
    id,
    path: sensor.path,
    sysfsRoot,
    scale: sensor.scale,
    offset: sensor.offset,
    plausible: sensor.plausible,
  });

/**
 * Doctor: every configured file (or the one file its pattern matches, under gpio.sysfsRoot)
 * exists and holds a number.
 */
async function checkFiles(
  items: { id: string; section: FileValueSection }[],
  env: DoctorEnv,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const { id, section } of items) {
    const name = `file sensors.${id}`;
    const driver = driverOf(id, section, env.sysfsRoot);
    try {
      const path = driver.resolvePath();
      const value = await driver.read();
      if (!Number.isFinite(value)) throw new Error(`${path} says the value is unknown (${value})`);
      results.push({ name, status: 'ok', detail: `${value} (${path})` });
    } catch (error) {
      results.push(failedCheck(name, error, fileFix(section.path)));
    }
  }
  return results;
}

function fileFix(path: string): string {
  if (hasWildcard(path)) {
    return (
      `make the pattern match exactly one file: narrow it (the bus address, the channel) or, when it ` +
      `matches none, check the device's overlay and wiring (homeostat doctor lists the kernel sensors present)`
    );
  }
  return `check that ${path} exists, is readable by the user running homeostat and holds one number (cat ${path})`;
}

export const fileValueSensor = sensorKind({
  kind: 'file_value',
  schema,
  simulated: false,
  usesMqtt: false,
  driverFields: ['path', 'scale', 'offset', 'plausible'],
  createDriver: (sensor, ctx) => driverOf(ctx.id, sensor, ctx.gpio().sysfsRoot),
  doctor: { check: checkFiles },
});
