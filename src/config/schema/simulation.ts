import { z } from 'zod';
import { idKey } from './common.js';

export const disturbanceSchema = z.strictObject({
  atS: z.number().min(0).describe('When it starts, seconds after the simulation starts.'),
  offset: z
    .number()
    .describe('Steady-state shift it adds to the plant (°C or %RH), e.g. -3 for an open window.'),
  durationS: z.number().gt(0).optional().describe('How long it lasts, seconds. Default: forever.'),
  name: z
    .string()
    .min(1)
    .max(60)
    .optional()
    .describe(
      'What it stands for, as the log announces it ("window open"). Default: none ("a disturbance").',
    ),
});

export const plantSchema = z
  .strictObject({
    kind: z
      .enum(['thermal', 'humidity'])
      .default('thermal')
      .describe('What the plant models. Default thermal.'),
    ambient: z.number().describe('Value (°C or %RH) the plant settles to with every input off. Required.'),
    initial: z.number().optional().describe('Starting value (°C or %RH). Default: ambient.'),
    timeConstantS: z.number().gt(0).describe('First-order time constant, seconds. Required.'),
    deadTimeS: z
      .number()
      .min(0)
      .default(0)
      .describe('Transport delay between input and response, seconds. Default 0.'),
    noise: z.number().min(0).default(0).describe('Sensor noise standard deviation (°C or %RH). Default 0.'),
    quantization: z
      .number()
      .min(0)
      .default(0)
      .describe('Sensor resolution (°C or %RH), e.g. 0.0625 for a DS18B20. Default 0 (none).'),
    disturbances: z
      .array(disturbanceSchema)
      .default([])
      .describe('Scheduled steps in the ambient. Default none.'),
  })
  .describe('A simulated first-order plant with dead time.');

export const simulationSchema = z
  .strictObject({
    plants: z
      .record(idKey('plant'), plantSchema)
      .default({})
      .describe('Simulated plants by id, driven by simulated actuators and read by simulated sensors.'),
    seed: z.number().int().default(1).describe('Random seed for sensor noise, so runs repeat. Default 1.'),
  })
  .describe('Simulated hardware (the demo, tests, --speed).');

/** A simulated plant; `initial` resolved to `ambient` when absent. */
export type PlantConfig = z.output<typeof plantSchema> & { initial: number };
export type DisturbanceConfig = z.output<typeof disturbanceSchema>;

export interface SimulationConfig {
  plants: Record<string, PlantConfig>;
  seed: number;
}

/** The simulation with every plant's `initial` resolved. */
export function resolveSimulation(raw: z.output<typeof simulationSchema>): SimulationConfig {
  return {
    seed: raw.seed,
    plants: Object.fromEntries(
      Object.entries(raw.plants).map(([id, plant]) => [
        id,
        { ...plant, initial: plant.initial ?? plant.ambient },
      ]),
    ),
  };
}
