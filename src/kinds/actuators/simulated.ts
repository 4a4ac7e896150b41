import { z } from 'zod';
import { SimContinuous, SimRelay } from '../../drivers/sim/actuator.js';
import {
  gainSchema,
  maxOnSchema,
  ref,
  relayFields,
  resolveRelayBand,
  safeLevelSchema,
  type WithBand,
} from '../fields.js';
import { actuatorKind } from '../types.js';
import { asParsed, continuousOutput, relayOutput } from './shared.js';

const relaySchema = z
  .strictObject({
    kind: z.literal('simulated_relay').describe('Actuator kind.'),
    plant: ref('simulation plant'),
    gain: gainSchema,
    ...relayFields,
  })
  .describe('A simulated on/off relay acting on a plant.');

export const simulatedRelay = actuatorKind<typeof relaySchema, WithBand<z.output<typeof relaySchema>>>({
  kind: 'simulated_relay',
  schema: relaySchema,
  ...relayOutput,
  simulated: true,
  usesMqtt: false,
  resolve: resolveRelayBand,
  plant: (relay) => ({ plant: relay.plant, gain: relay.gain }),
  driverFields: ['plant', 'gain'],
  createDriver: (relay, ctx) =>
    new SimRelay({ id: ctx.id, plant: ctx.plant(relay.plant), gain: relay.gain, nowMs: ctx.nowMs }),
});

const continuousSchema = z
  .strictObject({
    kind: z.literal('simulated_continuous').describe('Actuator kind.'),
    plant: ref('simulation plant'),
    gain: gainSchema,
    safeLevel: safeLevelSchema,
    maxOnS: maxOnSchema,
  })
  .describe('A simulated actuator with a continuous output 0..1.');

export const simulatedContinuous = actuatorKind({
  kind: 'simulated_continuous',
  schema: continuousSchema,
  ...continuousOutput,
  simulated: true,
  usesMqtt: false,
  resolve: asParsed,
  plant: (actuator) => ({ plant: actuator.plant, gain: actuator.gain }),
  driverFields: ['plant', 'gain'],
  createDriver: (actuator, ctx) =>
    new SimContinuous({
      id: ctx.id,
      plant: ctx.plant(actuator.plant),
      gain: actuator.gain,
      nowMs: ctx.nowMs,
    }),
});
