import { z } from 'zod';
import { GpioInput } from '../../drivers/gpio/input.js';
import { bcmSchema, sensorCommon } from '../fields.js';
import { sensorKind } from '../types.js';

const schema = z
  .strictObject({
    kind: z.literal('gpio_input').describe('Sensor kind.'),
    bcm: bcmSchema,
    activeLow: z
      .boolean()
      .default(false)
      .describe('Read 1 when the pin is low (a switch to ground with a pull-up). Default false.'),
    debounceMs: z
      .number()
      .int()
      .min(0)
      .default(20)
      .describe('An edge counts once the level has been stable this long, ms; 0 = off. Default 20.'),
    ...sensorCommon,
  })
  .describe(
    'A digital input read as 0 or 1 (window contact, float switch); use quantity generic. Read every ' +
      'periodS and at once on each edge. Set the pull-up/down in config.txt (gpio=<bcm>=ip,pu).',
  );

export const gpioInputSensor = sensorKind({
  kind: 'gpio_input',
  schema,
  simulated: false,
  usesMqtt: false,
  gpioPin: (sensor) => sensor.bcm,
  driverFields: ['bcm', 'activeLow', 'debounceMs'],
  createDriver: (sensor, ctx) =>
    new GpioInput({
      id: ctx.id,
      bcm: sensor.bcm,
      activeLow: sensor.activeLow,
      debounceMs: sensor.debounceMs,
      ...ctx.gpio(),
    }),
});
