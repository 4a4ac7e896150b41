/**
 * The Home Assistant entity that says a loop's actuator cannot be confirmed: a `problem`
 * binary_sensor, ON while the loop's ActuatorConfirmed condition is False because a device is
 * offline (`DeviceOffline`) or an actuator that should be off has not confirmed it
 * (`NotConfirmedOff`), with the condition's message ("heater is not confirmed off: device
 * offline since 12:03 UTC") as an attribute. Not ON for `Pending`: a command on its way is
 * normal for a cycle. Only loops with an MQTT actuator get it (a GPIO relay is read back).
 *
 * Pure: no clock, no IO.
 */
import type { Config, LoopConfig } from '../config/schema.js';
import { entityId, entityName, type LoopNaming, loopUniqueId } from './discovery-entity.js';
import type { DiscoveryComponent } from './discovery-types.js';
import type { Topics } from './topics.js';

/** The ActuatorConfirmed reasons that mean a person should look (core/actuator-availability.ts). */
export const ACTUATOR_PROBLEM_REASONS = ['DeviceOffline', 'NotConfirmedOff'] as const;

const CONFIRMED =
  "(value_json.conditions | default([]) | selectattr('type', 'equalto', 'ActuatorConfirmed') | list)";

/** ON while ActuatorConfirmed is False for one of ACTUATOR_PROBLEM_REASONS. */
export const ACTUATOR_PROBLEM_TEMPLATE =
  `{{ 'ON' if (${CONFIRMED} | selectattr('status', 'equalto', 'False') ` +
  `| selectattr('reason', 'in', ${JSON.stringify(ACTUATOR_PROBLEM_REASONS).replace(/"/g, "'")}) ` +
  "| list | length) > 0 else 'OFF' }}";

/** The condition's reason and message as the entity's attributes. */
export const ACTUATOR_ATTRIBUTES_TEMPLATE =
  `{% set c = ${CONFIRMED} | first | default({}) %}` +
  "{{ {'reason': c.reason | default(''), 'message': c.message | default('')} | tojson }}";

/** The loop's actuator problem entity, keyed by unique id; none when its actuators are not MQTT devices. */
export function actuatorProblemComponents(
  config: Config,
  ids: { nodeId: string; loopId: string },
  loop: LoopConfig,
  topics: Topics,
  naming: LoopNaming,
): Record<string, DiscoveryComponent> {
  const mqttActuator = [loop.raise, loop.lower].some((id) => {
    const kind = id === undefined ? undefined : config.actuators[id]?.kind;
    return kind === 'mqtt_switch' || kind === 'mqtt_level';
  });
  if (!mqttActuator) return {};
  const { nodeId, loopId } = ids;
  const uniqueId = `${loopUniqueId(nodeId, loopId)}_actuator`;
  const state = topics.loopState(loopId);
  return {
    [uniqueId]: {
      p: 'binary_sensor',
      name: entityName(loop.name, 'actuator problem', naming),
      uniq_id: uniqueId,
      def_ent_id: entityId('binary_sensor', nodeId, loopId, 'actuator'),
      stat_t: state,
      val_tpl: ACTUATOR_PROBLEM_TEMPLATE,
      json_attr_t: state,
      json_attr_tpl: ACTUATOR_ATTRIBUTES_TEMPLATE,
      dev_cla: 'problem',
      ent_cat: 'diagnostic',
      qos: 1,
    },
  };
}
