/**
 * A loop's main entity: what a person adjusts. A climate (discovery-climate.ts) or a
 * humidifier (discovery-humidifier.ts) when Home Assistant can show the loop exactly, else a
 * number for the setpoint and a select for the mode.
 *
 * Pure: no clock, no IO.
 */
import { allowedModes } from '../config/schema.js';
import { climate, climateTemperatureUnit } from './discovery-climate.js';
import { type KeyedComponent, type LoopContext, unit } from './discovery-entity.js';
import { humidifier, humidifierBounds } from './discovery-humidifier.js';
import { STATE_TEMPLATES } from './discovery-templates.js';

/**
 * The main entity: what a person adjusts. A climate or humidifier entity only when Home
 * Assistant can show the loop exactly (a temperature unit it knows, whole-percent humidity
 * bounds inside the limits); otherwise the number and select of a generic loop, which carry the
 * loop's own unit and limits as they are. Never a climate in the wrong unit.
 */
export function mainComponents(context: LoopContext): KeyedComponent[] {
  const { loop, entity, name } = context;
  const temperatureUnit = climateTemperatureUnit(loop.unit);
  if (loop.quantity === 'temperature' && temperatureUnit) {
    return [
      ['climate', climate(context, entity('climate', 'climate', name(null), undefined), temperatureUnit)],
    ];
  }
  const bounds = humidifierBounds(loop);
  if (loop.quantity === 'humidity' && bounds) {
    return [
      ['humidifier', humidifier(context, entity('humidifier', 'humidifier', name(null), undefined), bounds)],
    ];
  }
  // No HA entity fits (a generic quantity, or one HA cannot show): a number for the setpoint, a select for the mode.
  return genericControls(context);
}

function genericControls({ loopId, loop, topics, state, entity, name }: LoopContext): KeyedComponent[] {
  return [
    [
      'setpoint',
      {
        ...entity('number', 'setpoint', name('setpoint'), 'setpoint'),
        cmd_t: topics.loopCommand(loopId, 'setpoint'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.setpoint,
        min: loop.limits.min,
        max: loop.limits.max,
        step: loop.step,
        mode: 'box',
        ...unit(loop),
        ret: false,
      },
    ],
    [
      'mode',
      {
        ...entity('select', 'mode', name('mode'), 'mode'),
        cmd_t: topics.loopCommand(loopId, 'mode'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.mode,
        ops: allowedModes(loop),
        ret: false,
      },
    ],
  ];
}
