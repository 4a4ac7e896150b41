/** What Home Assistant's entities show and send: mode names and value templates over `<loop>/state`. */
import type { Mode } from '../core/types.js';

/**
 * Home Assistant climate HVAC mode for each homeostat temperature mode. The names coincide,
 * so HA's mode commands are homeostat's mode payloads as they are (no command template).
 * heat_cool is HA's "heat or cool as needed", which is what split range does with one setpoint.
 */
export const CLIMATE_MODE: Readonly<Partial<Record<Mode, string>>> = {
  off: 'off',
  heat: 'heat',
  cool: 'cool',
  heat_cool: 'heat_cool',
};

/** Valid climate `action_topic` values (docs: off, heating, cooling, drying, idle, fan). */
export const CLIMATE_ACTIONS = ['off', 'heating', 'cooling', 'drying', 'idle', 'fan'] as const;
/** Valid humidifier `action_topic` values (docs: off, humidifying, drying, idle). */
export const HUMIDIFIER_ACTIONS = ['off', 'humidifying', 'drying', 'idle'] as const;

/**
 * Value templates over the retained `<loop>/state` JSON. They read `mode`, `setpoint`,
 * `measured` (number or null/absent), `output` (−1..1), `action`, `conditions` (a list of
 * `{type, status}`) and `autotune` (an object with `phase`, absent when the loop never ran
 * one): the status publisher must keep those names. `'None'` is HA's payload for "unknown"
 * (const.py PAYLOAD_NONE; the humidifier's payload_reset_humidity and payload_reset_mode
 * default to it too): sensors, climate current temperature, target and action, humidifier
 * state, current and target humidity and mode reset to unknown on it, so a missing reading
 * shows as unknown rather than as a stale number. The humidifier's action is the exception:
 * HA ignores 'None' there (the last action stays).
 */
export const STATE_TEMPLATES = {
  setpoint: '{{ value_json.setpoint }}',
  /**
   * The humidifier's target: HA rounds it to a whole percent and drops one outside its
   * min..max (humidifier.py), so a 30.5 % setpoint under a 31 % minimum would leave HA showing
   * a stale target. Rendered here as the nearest whole percent within the announced bounds
   * (HA shows whole percents anyway); 'None' (unknown) without a number.
   */
  targetHumidity: (min: number, max: number) =>
    `{{ ([[value_json.setpoint | round(0) | int, ${min}] | max, ${max}] | min) ` +
    "if value_json.setpoint is number else 'None' }}",
  mode: '{{ value_json.mode }}',
  measured: "{{ value_json.measured if value_json.measured is number else 'None' }}",
  /** Signed percent: positive raises, negative lowers. */
  outputPercent: "{{ (value_json.output * 100) | round(1) if value_json.output is number else 'None' }}",
  /** ON while the Faulted condition is True (binary_sensor payload_on/off defaults ON/OFF). */
  faulted:
    "{{ 'ON' if (value_json.conditions | default([]) | selectattr('type', 'equalto', 'Faulted') " +
    "| selectattr('status', 'equalto', 'True') | list | length) > 0 else 'OFF' }}",
  /** ON while the StorageHealthy condition is False (the database cannot be used; regulation goes on). */
  storageProblem:
    "{{ 'ON' if (value_json.conditions | default([]) | selectattr('type', 'equalto', 'StorageHealthy') " +
    "| selectattr('status', 'equalto', 'False') | list | length) > 0 else 'OFF' }}",
  climateAction: actionTemplate(CLIMATE_ACTIONS),
  humidifierAction: actionTemplate(HUMIDIFIER_ACTIONS),
  /** Humidifier mode (HA modes exclude off, which is the entity's on/off state): 'None' when off. */
  humidifierMode: "{{ value_json.mode if value_json.mode != 'off' else 'None' }}",
  /** Humidifier on/off state, rendered as its payload_off ('off') or payload_on (`onMode`). */
  humidifierState: (onMode: Mode) => `{{ 'off' if value_json.mode == 'off' else '${onMode}' }}`,
  /**
   * The autotune's phase (noise, relay, done, aborted) from the state's `autotune` object;
   * `idle` when the loop never ran one (no object, or not an object).
   */
  autotunePhase:
    '{{ value_json.autotune.phase if value_json.autotune is defined and value_json.autotune is mapping ' +
    "and value_json.autotune.phase is defined else 'idle' }}",
  /** The whole `autotune` object as the sensor's attributes (progress, result, abort reason); `{}` when none. */
  autotuneAttributes:
    '{{ (value_json.autotune if value_json.autotune is defined and value_json.autotune is mapping ' +
    'else {}) | tojson }}',
  /**
   * The climate's preset_mode from the state's `schedule.preset`: 'none' when no
   * preset is in force (null) or the loop has no `schedule` part. HA takes 'none' as PRESET_NONE
   * (climate.py handle_preset_mode_received) and lists it itself.
   */
  preset:
    '{{ value_json.schedule.preset if value_json.schedule is defined and value_json.schedule is mapping ' +
    "and value_json.schedule.preset is string else 'none' }}",
  /** The profile's state (running, paused, finished) from `schedule.profile`; `idle` when none is started. */
  profileState:
    '{{ value_json.schedule.profile.state if value_json.schedule is defined and value_json.schedule is mapping ' +
    "and value_json.schedule.profile is defined and value_json.schedule.profile is mapping else 'idle' }}",
  /** The whole `schedule.profile` object (name, step, time left) as attributes; `{}` when none is started. */
  profileAttributes:
    '{{ (value_json.schedule.profile if value_json.schedule is defined and value_json.schedule is mapping ' +
    'and value_json.schedule.profile is defined and value_json.schedule.profile is mapping else {}) | tojson }}',
  /**
   * The started profile's name, for the select that starts one; 'None' (HA: no option, select.py)
   * when none is started.
   */
  profileName:
    '{{ value_json.schedule.profile.name if value_json.schedule is defined and value_json.schedule is mapping ' +
    'and value_json.schedule.profile is defined and value_json.schedule.profile is mapping ' +
    "and value_json.schedule.profile.name is string else 'None' }}",
  /** The sensor set of a loop with several sensors (`sensors`: combine, used, dropped, summary); `{}` when absent. */
  /** The schedule part (source, preset, heldUntil, profile, next) as the main entity's attributes. */
  scheduleAttributes:
    '{{ (value_json.schedule if value_json.schedule is defined and value_json.schedule is mapping ' +
    'else {}) | tojson }}',
  sensorsAttributes:
    '{{ (value_json.sensors if value_json.sensors is defined and value_json.sensors is mapping ' +
    'else {}) | tojson }}',
} as const;

function actionTemplate(valid: readonly string[]): string {
  const list = valid.map((a) => `'${a}'`).join(', ');
  return `{{ value_json.action if value_json.action in [${list}] else 'None' }}`;
}
