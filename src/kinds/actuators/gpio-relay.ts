import { z } from 'zod';
import { GpioRelay } from '../../drivers/gpio/relay.js';
import { gpioPinFields, relayFields, type WithBand } from '../fields.js';
import { actuatorKind } from '../types.js';
import { relayOutput } from './shared.js';

const schema = z
  .strictObject({
    kind: z.literal('gpio_relay').describe('Actuator kind: decides which other keys apply. Required.'),
    ...gpioPinFields({
      default: true,
      description:
        'The relay is energised when the pin is low, as on most opto-isolated relay boards; false for ' +
        'boards switched by a high pin. Default true.',
    }),
    ...relayFields,
  })
  .describe(
    'A relay on a Raspberry Pi GPIO pin, read back every cycle. Never switched on at start; a pin ' +
      'still exported from a previous run is adopted at its level, without a glitch.',
  );

export const gpioRelay = actuatorKind<typeof schema, WithBand<z.output<typeof schema>>>({
  kind: 'gpio_relay',
  schema,
  ...relayOutput,
  simulated: false,
  usesMqtt: false,
  gpioPin: (relay) => relay.bcm,
  driverFields: ['bcm', 'activeLow'],
  createDriver: (relay, ctx) =>
    new GpioRelay({ id: ctx.id, bcm: relay.bcm, activeLow: relay.activeLow, ...ctx.gpio() }),
  // A sysfs output keeps its level when the process is gone: `safe` writes the pin itself.
  safe: (relay) => ({
    via: 'gpio',
    bcm: relay.bcm,
    activeLow: relay.activeLow,
    safeLevel: relay.safeState === 'on' ? 1 : 0,
  }),
  // An integer `bcm` is still the best guess of what is wired; defaults as in the schema
  // (activeLow true, safeState off).
  safeFromBroken: (section) =>
    Number.isInteger(section.bcm) && (section.bcm as number) >= 0
      ? {
          via: 'gpio',
          bcm: section.bcm as number,
          activeLow: section.activeLow !== false,
          safeLevel: section.safeState === 'on' ? 1 : 0,
        }
      : undefined,
});
