import { z } from 'zod';
import { Random, seedFromString } from '../../drivers/sim/random.js';
import { SimSensor } from '../../drivers/sim/sensor.js';
import { ref, sensorCommon } from '../fields.js';
import { sensorKind } from '../types.js';

const schema = z
  .strictObject({
    kind: z.literal('simulated').describe('Sensor kind: decides which other keys apply. Required.'),
    plant: ref('simulation plant').describe(
      'Id of the plant (under simulation.plants) this sensor reads. Required.',
    ),
    ...sensorCommon,
  })
  .describe('Reads a simulated plant.');

export const simulatedSensor = sensorKind({
  kind: 'simulated',
  schema,
  simulated: true,
  usesMqtt: false,
  plant: (sensor) => sensor.plant,
  driverFields: ['plant'],
  createDriver(sensor, ctx) {
    // The config schema checks the plant exists; the fallback only keeps types honest.
    const plant = ctx.simulation.plants[sensor.plant] ?? { noise: 0, quantization: 0 };
    return new SimSensor({
      id: ctx.id,
      plant: ctx.plant(sensor.plant),
      nowMs: ctx.monotonicMs,
      noise: plant.noise,
      quantization: plant.quantization,
      random: new Random((ctx.simulation.seed ^ seedFromString(ctx.id)) >>> 0),
    });
  },
});
