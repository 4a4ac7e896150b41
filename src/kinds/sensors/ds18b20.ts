import { z } from 'zod';
import { Ds18b20Sensor } from '../../drivers/ds18b20.js';
import { checkPlausible, plausibleSchema, sensorCommon } from '../fields.js';
import { sensorKind } from '../types.js';
import { checkDs18b20 } from './ds18b20-doctor.js';

const schema = z
  .strictObject({
    kind: z.literal('ds18b20').describe('Sensor kind: decides which other keys apply. Required.'),
    address: z
      .string()
      .regex(/^28-[0-9a-f]{12}$/i, { error: 'use the 1-Wire address, e.g. 28-0316a2795bff' })
      .optional()
      .describe(
        'Its directory under /sys/bus/w1/devices, e.g. 28-0316a2795bff. Default: the only DS18B20 ' +
          'present (an error when there are several).',
      ),
    ...sensorCommon,
    plausible: plausibleSchema({
      min: 'Lowest believable reading, °C.',
      max: 'Highest believable reading, °C; must be greater than min.',
      range: 'Readings outside are rejected by the driver (kept out of history too), °C. Default -55..125.',
    }),
    maxRatePerS: z
      .number()
      .gt(0)
      .default(1)
      .describe(
        'Fastest believable change, °C/s; a faster jump is rejected unless the next read confirms it. Default 1.',
      ),
  })
  .describe(
    'A DS18B20 temperature probe on the 1-Wire bus (dtoverlay=w1-gpio in /boot/firmware/config.txt, ' +
      'GPIO4 by default, 4.7 kΩ pull-up), °C. Rejects CRC errors, the 85 °C power-on value and jumps.',
  )
  .superRefine(checkPlausible);

/** A DS18B20; the 1-Wire pin is the kernel's (dtoverlay), not one of the file's pins. */
export const ds18b20Sensor = sensorKind({
  kind: 'ds18b20',
  schema,
  simulated: false,
  usesMqtt: false,
  driverFields: ['address', 'plausible', 'maxRatePerS'],
  createDriver: (sensor, ctx) =>
    new Ds18b20Sensor({
      id: ctx.id,
      address: sensor.address,
      sysfsRoot: ctx.gpio().sysfsRoot,
      nowMs: ctx.monotonicMs,
      plausible: sensor.plausible,
      maxRatePerS: sensor.maxRatePerS,
    }),
  doctor: {
    whenAbsent: { name: '1-Wire', status: 'skip', detail: 'no DS18B20 in this config' },
    check: checkDs18b20,
  },
});
