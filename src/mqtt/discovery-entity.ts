/**
 * What every Home Assistant component of a loop shares: the loop's context handed to each
 * component builder, the entity's identity (unique id, entity id, display name) and the small
 * pieces several components carry (the unit, the schedule's attributes, the profile names).
 *
 * Pure: no clock, no IO.
 */
import type { LoopConfig } from '../config/schema.js';
import { STATE_TEMPLATES } from './discovery-templates.js';
import type { DiscoveryComponent, Platform } from './discovery-types.js';
import type { Topics } from './topics.js';

/** One component and the key it is published under (after the loop's unique-id prefix). */
export type KeyedComponent = [key: string, component: DiscoveryComponent];

/** An entity's identity: platform, display name (null: the device's name), unique id and entity id. */
export interface EntityBase {
  p: Platform;
  name: string | null;
  uniq_id: string;
  def_ent_id: string;
}

/** What every component builder of one loop needs. */
export interface LoopContext {
  loopId: string;
  loop: LoopConfig;
  topics: Topics;
  /** The retained `<loop>/state` topic every entity reads. */
  state: string;
  entity: (platform: Platform, key: string, name: string | null, suffix: string | undefined) => EntityBase;
  /**
   * An entity's display name from its short name ('temperature', 'reset fault'). HA prefixes the
   * device's name itself (MQTT entities have has_entity_name, entity.py), so a loop that is the
   * whole device (`standalone`) gets the short name capitalised, and null for its main entity
   * (the device's name); a loop among several keeps its own name in front to tell them apart.
   */
  name: (short: string | null) => string | null;
}

/** How a loop's entities are named (see LoopContext.name). */
export interface LoopNaming {
  /** The node has this loop only, or the loop's name is the node's name: no loop-name prefix. */
  standalone: boolean;
}

/** Unique-id prefix of a loop's components; also the cmps keys. */
export function loopUniqueId(nodeId: string, loopId: string): string {
  return `homeostat_${nodeId}_${loopId}`;
}

export function entityName(loopName: string, short: string | null, naming: LoopNaming): string | null {
  if (naming.standalone) return short === null ? null : short.charAt(0).toUpperCase() + short.slice(1);
  return short === null ? loopName : `${loopName} ${short}`;
}

/** Entity ids allow only [a-z0-9_]: a node id's `-` becomes `_`. */
export function entityId(platform: Platform, nodeId: string, loopId: string, suffix?: string): string {
  const object = `homeostat_${nodeId.replace(/-/g, '_')}_${loopId}${suffix ? `_${suffix}` : ''}`;
  return `${platform}.${object}`;
}

export function unit(loop: LoopConfig): { unit_of_meas?: string } {
  return loop.unit ? { unit_of_meas: loop.unit } : {};
}

export function profileNames(loop: LoopConfig): string[] {
  return Object.keys(loop.profiles ?? {});
}

/**
 * A loop whose setpoint depends on time or a preset (presets, a weekly schedule, profiles): its
 * schedule part (where the setpoint comes from, until when a manual change holds, the next
 * changes, the profile's progress) as the main entity's attributes, so HA shows the schedule's
 * state on the thermostat itself.
 */
export function scheduleAttributes(loop: LoopConfig, state: string): Partial<DiscoveryComponent> {
  const timed =
    Object.keys(loop.presets ?? {}).length > 0 ||
    (loop.schedule?.weekly?.length ?? 0) > 0 ||
    Object.keys(loop.profiles ?? {}).length > 0;
  return timed ? { json_attr_t: state, json_attr_tpl: STATE_TEMPLATES.scheduleAttributes } : {};
}
