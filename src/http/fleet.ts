import { z } from 'zod';
import type { Config } from '../config/schema.js';
import type { FleetDropReason, FleetNode } from '../mqtt/fleet.js';
import { apiSchemas } from './schemas.js';

/**
 * GET /api/fleet: every node's loops on this node's broker, as their retained MQTT states say
 * (src/mqtt/fleet.ts collects them). What other nodes publish is shown, never trusted: the
 * collector keeps only validated fields, and the page writes them as text.
 */

const isoTime = z.iso.datetime({ offset: true }).describe('ISO 8601 time');

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

/** What the view reads of the collector (src/mqtt/fleet.ts FleetCollector). */
export interface FleetSource {
  nodes(): FleetNode[];
  dropped(): Readonly<Record<FleetDropReason, number>>;
}

/**
 * The answer of GET /api/fleet. This node's loops take their name and unit from its config (the
 * state payload does not carry them); other nodes' from their payload when it has them.
 */
export function fleetView(source: FleetSource, config: Pick<Config, 'node' | 'loops'>): FleetResponse {
  const selfId = config.node.id;
  const nodes = source.nodes().map((entry) => {
    const self = entry.node === selfId;
    return {
      node: entry.node,
      self,
      online: entry.online ?? null,
      loops: entry.loops.map((state): FleetLoopView => {
        const local = self && Object.hasOwn(config.loops, state.loop) ? config.loops[state.loop] : undefined;
        return {
          loop: state.loop,
          name: local?.name ?? state.name ?? state.loop,
          unit: local?.unit ?? state.unit ?? null,
          measured: state.measured,
          setpoint: state.setpoint,
          mode: state.mode,
          action: state.action,
          output: state.output,
          faulted: state.fault !== undefined,
          faultReason: state.fault ?? null,
          updatedAt: state.updatedAt,
        };
      }),
    };
  });
  // This node first: the page starts with what this dashboard also shows.
  nodes.sort((a, b) => Number(b.self) - Number(a.self));
  const droppedBy = { ...source.dropped() };
  const dropped = droppedBy.tooLarge + droppedBy.invalid + droppedBy.badTopic + droppedBy.full;
  return { nodes, dropped, droppedBy };
}
