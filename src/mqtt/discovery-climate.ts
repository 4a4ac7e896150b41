/**
 * The climate entity of a temperature loop in a unit Home Assistant knows: modes, setpoint,
 * current temperature and action, the loop's limits, step and precision, and its presets.
 *
 * Pure: no clock, no IO.
 */
import { allowedModes, type LoopConfig } from '../config/schema.js';
import { NO_PRESET } from '../control/commands.js';
import { type EntityBase, type LoopContext, scheduleAttributes } from './discovery-entity.js';
import { CLIMATE_MODE, STATE_TEMPLATES } from './discovery-templates.js';
import type { DiscoveryComponent } from './discovery-types.js';
import type { Topics } from './topics.js';

/**
 * The climate entity's `temperature_unit`: HA's schema accepts only C or F
 * (config_validation.temperature_unit), so °C → C, °F → F and anything else (K, a misspelling)
 * has no climate entity. Without the key HA would assume its own system unit, which is how a
 * K loop showed 293 °C.
 */
export function climateTemperatureUnit(unit: string): 'C' | 'F' | undefined {
  if (unit === '°C') return 'C';
  if (unit === '°F') return 'F';
  return undefined;
}

/** Display precisions HA's MQTT climate accepts (climate.py: PRECISION_TENTHS, _HALVES, _WHOLE). */
const CLIMATE_PRECISIONS = [1, 0.5, 0.1] as const;

/**
 * The climate `precision` for a setpoint step: the coarsest HA precision of which the step is a
 * whole multiple, so every setpoint on the step's grid shows exactly (0.1 → 0.1, 0.5 → 0.5,
 * 1 or 2 → 1), and current values are not shown finer than the loop is set. A step no HA
 * precision divides (0.25, 0.05) gets 0.1, the finest HA has: the smallest display error.
 * Without it HA picks tenths in °C and whole degrees in °F (ClimateEntity.precision).
 */
export function climatePrecision(step: number): 0.1 | 0.5 | 1 {
  for (const precision of CLIMATE_PRECISIONS) {
    const multiple = step / precision;
    if (Math.abs(multiple - Math.round(multiple)) < 1e-9 && Math.round(multiple) >= 1) return precision;
  }
  return 0.1;
}

/**
 * The climate's preset keys when the loop has presets: their names (never 'none': HA adds it,
 * and refuses a list that has it, climate.py valid_preset_mode_configuration), commands on
 * `<loop>/preset/set` (HA sends 'none' to clear, which the command takes as no preset), and
 * the preset in force from the state. HA requires the command topic and the list together.
 */
function climatePresets(
  loopId: string,
  loop: LoopConfig,
  topics: Topics,
  state: string,
): Record<string, unknown> {
  const names = Object.keys(loop.presets ?? {}).filter((preset) => preset !== NO_PRESET);
  if (names.length === 0) return {};
  return {
    pr_modes: names,
    pr_mode_cmd_t: topics.loopCommand(loopId, 'preset'),
    pr_mode_stat_t: state,
    pr_mode_val_tpl: STATE_TEMPLATES.preset,
  };
}

export function climate(
  { loopId, loop, topics, state }: LoopContext,
  base: EntityBase,
  temperatureUnit: 'C' | 'F',
): DiscoveryComponent {
  return {
    ...base,
    modes: allowedModes(loop).map((mode) => CLIMATE_MODE[mode] ?? mode),
    mode_cmd_t: topics.loopCommand(loopId, 'mode'),
    mode_stat_t: state,
    mode_stat_tpl: STATE_TEMPLATES.mode,
    temp_cmd_t: topics.loopCommand(loopId, 'setpoint'),
    temp_stat_t: state,
    temp_stat_tpl: STATE_TEMPLATES.setpoint,
    curr_temp_t: state,
    curr_temp_tpl: STATE_TEMPLATES.measured,
    act_t: state,
    act_tpl: STATE_TEMPLATES.climateAction,
    min_temp: loop.limits.min,
    max_temp: loop.limits.max,
    // The UI's +/- step is the loop's step (HA's default is 1.0); precision is how values show.
    temp_step: loop.step,
    precision: climatePrecision(loop.step),
    temp_unit: temperatureUnit,
    ...climatePresets(loopId, loop, topics, state),
    ...scheduleAttributes(loop, state),
    // HA's default is retain false already (config.py DEFAULT_RETAIN); stated because a
    // retained command would be replayed on every reconnect and undo later changes.
    ret: false,
  };
}
