import type { Config } from '../config/schema.js';
import type { FleetDropReason, FleetNode } from '../mqtt/fleet.js';

/**
 * GET /api/fleet: every node's loops on this node's broker, as their retained MQTT states say
 * (src/mqtt/fleet.ts collects them). What other nodes publish is shown, never trusted: the
 * collector keeps only validated fields, and the page writes them as text.
 */

import type { FleetLoopView, FleetResponse } from '../operations/fleet-schemas.js';

export {
  type FleetLoopView,
  type FleetResponse,
  fleetLoopView,
  fleetNodeView,
  fleetResponse,
} from '../operations/fleet-schemas.js';

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
