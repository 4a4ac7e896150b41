import { z } from 'zod';
import { SimContinuous, SimRelay } from '../../drivers/sim/actuator.js';
import { gainSchema, maxOnSchema, ref, relayFields, safeLevelSchema, type WithBand } from '../fields.js';
import { actuatorKind, type DriverContext, type SafeTarget } from '../types.js';
import { asParsed, continuousOutput, relayOutput } from './shared.js';

/** A simulated actuator is part of the daemon's own world: nothing of it outlives the process. */
const simulatedSafe = (): SafeTarget => ({ via: 'none', why: 'simulated: it ends with the daemon' });

/** The fields both simulated actuators have: the plant they act on and how much. */
interface PlantUse {
  plant: string;
  gain: number;
}

/** The traits both simulated actuators share: no hardware, a plant driven with a gain. */
const drivesPlant = {
  simulated: true,
  usesMqtt: false,
  plant: (actuator: PlantUse) => ({ plant: actuator.plant, gain: actuator.gain }),
  driverFields: ['plant', 'gain'] as const,
};

/** Both drivers' options: the plant (created on first use), the gain and the clock. */
const simOptions = (actuator: PlantUse, ctx: DriverContext) => ({
  id: ctx.id,
  plant: ctx.plant(actuator.plant),
  gain: actuator.gain,
  nowMs: ctx.monotonicMs,
});

const relaySchema = z
  .strictObject({
    kind: z.literal('simulated_relay').describe('Actuator kind: decides which other keys apply. Required.'),
    plant: ref('simulation plant').describe(
      'Id of the plant (under simulation.plants) this actuator drives. Required.',
    ),
    gain: gainSchema,
    ...relayFields,
  })
  .describe('A simulated on/off relay acting on a plant.');

export const simulatedRelay = actuatorKind<typeof relaySchema, WithBand<z.output<typeof relaySchema>>>({
  kind: 'simulated_relay',
  schema: relaySchema,
  ...relayOutput,
  ...drivesPlant,
  createDriver: (relay, ctx) => new SimRelay(simOptions(relay, ctx)),
  safe: simulatedSafe,
});

const continuousSchema = z
  .strictObject({
    kind: z
      .literal('simulated_continuous')
      .describe('Actuator kind: decides which other keys apply. Required.'),
    plant: ref('simulation plant').describe(
      'Id of the plant (under simulation.plants) this actuator drives. Required.',
    ),
    gain: gainSchema,
    safeLevel: safeLevelSchema,
    maxOnS: maxOnSchema,
  })
  .describe('A simulated actuator with a continuous output 0..1.');

export const simulatedContinuous = actuatorKind({
  kind: 'simulated_continuous',
  schema: continuousSchema,
  ...continuousOutput,
  ...drivesPlant,
  resolve: asParsed,
  createDriver: (actuator, ctx) => new SimContinuous(simOptions(actuator, ctx)),
  safe: simulatedSafe,
});
