import { z } from 'zod';
import { GpioPulseRate } from '../../drivers/gpio/pulse-rate.js';
import { gpioPinFields, sensorCommon } from '../fields.js';
import { sensorKind } from '../types.js';

const schema = z
  .strictObject({
    kind: z.literal('pulse_rate').describe('Sensor kind: decides which other keys apply. Required.'),
    ...gpioPinFields({
      default: false,
      description: 'Invert the pin (an open-collector output pulling low). Default false.',
    }),
    edge: z
      .enum(['rising', 'falling'])
      .default('rising')
      .describe('Which transition is one pulse (after activeLow). Default rising.'),
    windowS: z
      .number()
      .gt(0)
      .default(60)
      .describe(
        'Pulses are counted over the last windowS seconds; longer is smoother and slower. No reading ' +
          'until one window has passed. Default 60.',
      ),
    factor: z
      .number()
      .gt(0)
      .default(1)
      .describe(
        'Quantity per pulse: the reading is pulses per minute × factor. 0.0022222 (1/450 L per pulse, ' +
          'a YF-S201 flow meter) gives L/min. Default 1 (pulses/min).',
      ),
    ...sensorCommon,
  })
  .describe(
    'A pulse counter read as a rate (flow meter, anemometer, S0 energy meter); use quantity generic. ' +
      'No debounce: bouncy reed contacts need an RC filter.',
  );

export const pulseRateSensor = sensorKind({
  kind: 'pulse_rate',
  schema,
  simulated: false,
  usesMqtt: false,
  gpioPin: (sensor) => sensor.bcm,
  // windowS is the counting window, the driver's (not a relay's modulation window).
  driverFields: ['bcm', 'activeLow', 'edge', 'windowS', 'factor'],
  createDriver: (sensor, ctx) =>
    new GpioPulseRate({
      id: ctx.id,
      bcm: sensor.bcm,
      activeLow: sensor.activeLow,
      edge: sensor.edge,
      windowS: sensor.windowS,
      factor: sensor.factor,
      nowMs: ctx.monotonicMs,
      ...ctx.gpio(),
    }),
});
