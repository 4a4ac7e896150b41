/**
 * The humidifier entity of a humidity loop whose limits Home Assistant can show: on/off as the
 * mode, the target humidity within whole-percent bounds, and the mode when both actuators exist.
 *
 * Pure: no clock, no IO.
 */
import { allowedModes, defaultMode, type LoopConfig } from '../config/schema.js';
import { type EntityBase, type LoopContext, scheduleAttributes } from './discovery-entity.js';
import { STATE_TEMPLATES } from './discovery-templates.js';
import type { DiscoveryComponent } from './discovery-types.js';

/**
 * The humidifier's min/max humidity, or undefined when the entity cannot represent the loop.
 * HA rounds every target humidity it receives to a whole percent (Python round, half to even)
 * and drops one outside min..max (humidifier.py, _target_humidity_received), and its UI sends
 * whole percents. So the bounds are the limits rounded inward, ceil(min) and floor(max): every
 * value HA sends lies within the limits homeostat accepts. HA also requires
 * 0 <= min < max <= 100 (valid_humidity_range_configuration); limits with fewer than two whole
 * percents inside (40.2..40.8), or a unit other than %, get the generic number instead.
 */
export function humidifierBounds(loop: LoopConfig): { min: number; max: number } | undefined {
  if (loop.unit !== '%') return undefined;
  const min = Math.max(0, Math.ceil(loop.limits.min));
  const max = Math.min(100, Math.floor(loop.limits.max));
  return min < max ? { min, max } : undefined;
}

export function humidifier(
  { loopId, loop, topics, state }: LoopContext,
  base: EntityBase,
  bounds: { min: number; max: number },
): DiscoveryComponent {
  const activeModes = allowedModes(loop).filter((mode) => mode !== 'off');
  // Turning the entity on restores the file's mode, or the mode using every actuator.
  const onMode = loop.mode !== 'off' ? loop.mode : defaultMode(loop);
  return {
    ...base,
    dev_cla: loop.raise === undefined ? 'dehumidifier' : 'humidifier',
    // On/off is the mode: payload_on is a mode, payload_off is "off", both plain mode/set payloads.
    cmd_t: topics.loopCommand(loopId, 'mode'),
    pl_on: onMode,
    pl_off: 'off',
    stat_t: state,
    stat_val_tpl: STATE_TEMPLATES.humidifierState(onMode),
    hum_cmd_t: topics.loopCommand(loopId, 'setpoint'),
    hum_stat_t: state,
    // The setpoint as the whole percent HA keeps, within the bounds (see humidifierBounds).
    hum_state_tpl: STATE_TEMPLATES.targetHumidity(bounds.min, bounds.max),
    curr_hum_t: state,
    curr_hum_tpl: STATE_TEMPLATES.measured,
    act_t: state,
    act_tpl: STATE_TEMPLATES.humidifierAction,
    min_hum: bounds.min,
    max_hum: bounds.max,
    // With both actuators the user also picks humidify, dehumidify or auto.
    ...(activeModes.length > 1
      ? {
          modes: activeModes,
          mode_cmd_t: topics.loopCommand(loopId, 'mode'),
          mode_stat_t: state,
          mode_stat_tpl: STATE_TEMPLATES.humidifierMode,
        }
      : {}),
    ...scheduleAttributes(loop, state),
    // HA's default is retain false already (config.py DEFAULT_RETAIN); stated because a
    // retained command would be replayed on every reconnect and undo later changes.
    ret: false,
  };
}
