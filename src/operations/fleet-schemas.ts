import { z } from 'zod';
import { apiSchemas, isoTime } from './registry.js';

/** GET /api/fleet: every node's loops on this node's broker, as their retained MQTT states say. */

export const fleetLoopView = z
  .object({
    loop: z.string(),
    name: z.string().describe("The config name (this node's loops, or as published), else the loop id"),
    unit: z
      .string()
      .nullable()
      .describe("The loop's unit: this node's config, or as published; null when unknown"),
    measured: z.number().nullable(),
    setpoint: z.number(),
    mode: z.string(),
    action: z.string(),
    output: z.number().describe('Signed controller output −1..1'),
    faulted: z.boolean().describe('Its Faulted condition is True'),
    faultReason: z.string().nullable().describe("The Faulted condition's reason when faulted"),
    updatedAt: isoTime.describe("When the loop last cycled, by its node's clock"),
  })
  .register(apiSchemas, { id: 'FleetLoop' });

export const fleetNodeView = z
  .object({
    node: z.string().describe('Node id (the topic level after baseTopic)'),
    self: z.boolean().describe('This node (its loops are on this dashboard)'),
    online: z.boolean().nullable().describe('Its retained availability; null when it has none'),
    loops: z.array(fleetLoopView),
  })
  .register(apiSchemas, { id: 'FleetNode' });

export const fleetResponse = z
  .object({
    nodes: z.array(fleetNodeView).describe('This node first, then the others by id'),
    dropped: z
      .number()
      .int()
      .describe('MQTT messages not shown since the start: too large, invalid, or beyond the cap'),
    droppedBy: z.object({
      tooLarge: z.number().int(),
      invalid: z.number().int(),
      badTopic: z.number().int(),
      full: z.number().int(),
    }),
  })
  .register(apiSchemas, { id: 'Fleet' });

export type FleetResponse = z.infer<typeof fleetResponse>;
export type FleetLoopView = z.infer<typeof fleetLoopView>;
