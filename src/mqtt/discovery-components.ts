/**
 * The Home Assistant components of one loop, assembled from one module per group: the main
 * entity (what a person adjusts: climate, humidifier, or a number and a select;
 * discovery-main.ts), the sensors, the binary sensors and the fault-reset button
 * (discovery-sensors.ts), on PID loops the autotune's buttons and sensor
 * (discovery-autotune.ts), and on loops with profiles the profile's select, buttons and sensor
 * (discovery-profile.ts). Keys are abbreviated as discovery.ts explains; the order of
 * components and of keys is the order they are published in.
 *
 * Every component carries `qos` itself: the device payload's shared `qos` was not applied to
 * components by Home Assistant up to 2026.5 (ARCHITECTURE.md, facts), and a button press sent
 * at QoS 0 can be lost on a reconnect.
 *
 * Pure: no clock, no IO.
 */
import type { LoopConfig } from '../config/schema.js';
import { autotuneComponents } from './discovery-autotune.js';
import {
  entityId,
  entityName,
  type KeyedComponent,
  type LoopContext,
  type LoopNaming,
  loopUniqueId,
  profileNames,
} from './discovery-entity.js';
import { mainComponents } from './discovery-main.js';
import { profileComponents } from './discovery-profile.js';
import { binarySensors, faultResetButton, sensors } from './discovery-sensors.js';
import type { DiscoveryComponent } from './discovery-types.js';
import type { Topics } from './topics.js';

/** Every component of one loop, keyed by unique id. */
export function loopComponents(
  nodeId: string,
  loopId: string,
  loop: LoopConfig,
  topics: Topics,
  naming: LoopNaming,
): Record<string, DiscoveryComponent> {
  const uid = loopUniqueId(nodeId, loopId);
  const context: LoopContext = {
    name: (short) => entityName(loop.name, short, naming),
    loopId,
    loop,
    topics,
    state: topics.loopState(loopId),
    entity: (platform, key, name, suffix) => ({
      p: platform,
      name,
      uniq_id: `${uid}_${key}`,
      def_ent_id: entityId(platform, nodeId, loopId, suffix),
    }),
  };
  const components: KeyedComponent[] = [
    ...mainComponents(context),
    // For every loop: what it measures, what it outputs, whether it is faulted, and a reset.
    ...sensors(context),
    ...binarySensors(context),
    faultResetButton(context),
    // A PID loop's gains can be tuned: start, cancel, accept, and what the run is doing.
    ...(loop.controller.type === 'pid' ? autotuneComponents(context) : []),
    // A loop with profiles: start one, pause, resume or stop it, and see where it is.
    ...(profileNames(loop).length > 0 ? profileComponents(context) : []),
  ];
  return Object.fromEntries(
    components.map(([key, component]) => [`${uid}_${key}`, { ...component, qos: COMPONENT_QOS }]),
  );
}

/** QoS of every component's subscriptions and commands (commands are absolute: duplicates are harmless). */
const COMPONENT_QOS = 1;
