/**
 * The Home Assistant components of one loop, one function per group: the main entity (what a
 * person adjusts: climate, humidifier, or a number and a select), the sensors, the binary
 * sensors, the fault-reset button, on PID loops the autotune's buttons and sensor, and on loops
 * with profiles the profile's select, buttons and sensor. Keys
 * are abbreviated as discovery.ts explains; the order of components and of keys is the order
 * they are published in.
 *
 * Every component carries `qos` itself: the device payload's shared `qos` was not applied to
 * components by Home Assistant up to 2026.5 (ARCHITECTURE.md, facts), and a button press sent
 * at QoS 0 can be lost on a reconnect.
 *
 * Pure: no clock, no IO.
 */
import { allowedModes, defaultMode, type LoopConfig } from '../config/schema.js';
import { NO_PRESET } from '../control/commands.js';
import { CLIMATE_MODE, STATE_TEMPLATES } from './discovery-templates.js';
import type { DiscoveryComponent, Platform } from './discovery-types.js';
import type { Topics } from './topics.js';

/** One component and the key it is published under (after the loop's unique-id prefix). */
type KeyedComponent = [key: string, component: DiscoveryComponent];

/** An entity's identity: platform, display name (null: the device's name), unique id and entity id. */
interface EntityBase {
  p: Platform;
  name: string | null;
  uniq_id: string;
  def_ent_id: string;
}

/** What every component builder of one loop needs. */
interface LoopContext {
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

/**
 * The main entity: what a person adjusts. A climate or humidifier entity only when Home
 * Assistant can show the loop exactly (a temperature unit it knows, whole-percent humidity
 * bounds inside the limits); otherwise the number and select of a generic loop, which carry the
 * loop's own unit and limits as they are. Never a climate in the wrong unit.
 */
function mainComponents(context: LoopContext): KeyedComponent[] {
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

function genericControls({ loopId, loop, topics, state, entity, name }: LoopContext): KeyedComponent[] {
  return [
    [
      'setpoint',
      {
        ...entity('number', 'setpoint', name('setpoint'), 'setpoint'),
        cmd_t: topics.loopSetpointSet(loopId),
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
        cmd_t: topics.loopModeSet(loopId),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.mode,
        ops: allowedModes(loop),
        ret: false,
      },
    ],
  ];
}

/** The measured value and the output (a diagnostic, in signed percent). */
function sensors({ loop, state, entity, name }: LoopContext): KeyedComponent[] {
  const measured = MEASURED[loop.quantity];
  return [
    [
      measured.key,
      {
        ...entity('sensor', measured.key, name(measured.name), measured.key),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.measured,
        stat_cla: 'measurement',
        ...(measured.deviceClass && measured.units.includes(loop.unit)
          ? { dev_cla: measured.deviceClass }
          : {}),
        ...unit(loop),
        // Several sensors: which were used and which dropped (and why) as the value's attributes.
        ...(hasSensorSet(loop)
          ? { json_attr_t: state, json_attr_tpl: STATE_TEMPLATES.sensorsAttributes }
          : {}),
      },
    ],
    [
      'output',
      {
        ...entity('sensor', 'output', name('output'), 'output'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.outputPercent,
        stat_cla: 'measurement',
        unit_of_meas: '%',
        ent_cat: 'diagnostic',
      },
    ],
  ];
}

/** The loop's problems: faulted, and storage unusable. */
function binarySensors({ state, entity, name }: LoopContext): KeyedComponent[] {
  return [
    [
      'fault',
      {
        ...entity('binary_sensor', 'fault', name('fault'), 'fault'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.faulted,
        dev_cla: 'problem',
        ent_cat: 'diagnostic',
      },
    ],
    [
      'storage',
      {
        ...entity('binary_sensor', 'storage', name('storage problem'), 'storage'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.storageProblem,
        dev_cla: 'problem',
        ent_cat: 'diagnostic',
      },
    ],
  ];
}

function faultResetButton({ loopId, topics, entity, name }: LoopContext): KeyedComponent {
  return [
    'fault_reset',
    {
      ...entity('button', 'fault_reset', name('reset fault'), 'fault_reset'),
      cmd_t: topics.loopFaultReset(loopId),
      pl_prs: 'reset',
      ent_cat: 'config',
      ret: false,
    },
  ];
}

/**
 * The relay autotune from Home Assistant: a button that starts it with the loop's defaults
 * (`start`; a two-sided mode needs the side, so there the press is refused with why, on
 * `<loop>/result`), one that cancels it, one that accepts the newest stored tuning (`latest`),
 * and a sensor with the phase (`idle` before any run) and the whole run as attributes.
 */
function autotuneComponents({ loopId, topics, state, entity, name }: LoopContext): KeyedComponent[] {
  const button = (key: string, short: string, topic: string, payload: string): KeyedComponent => [
    key,
    {
      ...entity('button', key, name(short), key),
      cmd_t: topic,
      pl_prs: payload,
      ent_cat: 'config',
      ret: false,
    },
  ];
  return [
    button('autotune', 'autotune', topics.loopAutotuneSet(loopId), 'start'),
    button('autotune_cancel', 'cancel autotune', topics.loopAutotuneSet(loopId), 'cancel'),
    button('tuning_accept', 'accept tuning', topics.loopTuningSet(loopId), 'latest'),
    [
      'autotune_status',
      {
        ...entity('sensor', 'autotune_status', name('autotune status'), 'autotune_status'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.autotunePhase,
        json_attr_t: state,
        json_attr_tpl: STATE_TEMPLATES.autotuneAttributes,
        ent_cat: 'diagnostic',
      },
    ],
  ];
}

/**
 * A loop's profiles from Home Assistant: a select that starts one (`start NAME` on
 * `<loop>/profile/set`; it shows the started profile, unknown when none), buttons that pause,
 * resume and stop it, and a sensor with its state (`idle` when none is started) and its progress
 * (step, time left) as attributes.
 */
function profileComponents({ loopId, loop, topics, state, entity, name }: LoopContext): KeyedComponent[] {
  const topic = topics.loopProfileSet(loopId);
  const button = (action: 'pause' | 'resume' | 'stop'): KeyedComponent => {
    const key = `profile_${action}`;
    return [
      key,
      {
        ...entity('button', key, name(`${action} profile`), key),
        cmd_t: topic,
        pl_prs: action,
        ret: false,
      },
    ];
  };
  return [
    [
      'profile',
      {
        ...entity('select', 'profile', name('profile'), 'profile'),
        cmd_t: topic,
        // HA sends the option picked; the command is `start NAME`.
        cmd_tpl: 'start {{ value }}',
        stat_t: state,
        val_tpl: STATE_TEMPLATES.profileName,
        ops: profileNames(loop),
        ret: false,
      },
    ],
    button('pause'),
    button('resume'),
    button('stop'),
    [
      'profile_status',
      {
        ...entity('sensor', 'profile_status', name('profile status'), 'profile_status'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.profileState,
        json_attr_t: state,
        json_attr_tpl: STATE_TEMPLATES.profileAttributes,
      },
    ],
  ];
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
    pr_mode_cmd_t: topics.loopPresetSet(loopId),
    pr_mode_stat_t: state,
    pr_mode_val_tpl: STATE_TEMPLATES.preset,
  };
}

function profileNames(loop: LoopConfig): string[] {
  return Object.keys(loop.profiles ?? {});
}

/**
 * A loop whose setpoint depends on time or a preset (presets, a weekly schedule, profiles): its
 * schedule part (where the setpoint comes from, until when a manual change holds, the next
 * changes, the profile's progress) as the main entity's attributes, so HA shows the schedule's
 * state on the thermostat itself.
 */
function scheduleAttributes(loop: LoopConfig, state: string): Partial<DiscoveryComponent> {
  const timed =
    Object.keys(loop.presets ?? {}).length > 0 ||
    (loop.schedule?.weekly?.length ?? 0) > 0 ||
    Object.keys(loop.profiles ?? {}).length > 0;
  return timed ? { json_attr_t: state, json_attr_tpl: STATE_TEMPLATES.scheduleAttributes } : {};
}

/** Whether the loop reads a set of sensors (`sensors`), whose status the state carries. */
function hasSensorSet(loop: LoopConfig): boolean {
  const { sensors } = loop as { sensors?: unknown };
  return Array.isArray(sensors) && sensors.length > 0;
}

/**
 * The measured-value sensor per quantity; device_class only with a unit HA accepts for it
 * (sensor/const.py DEVICE_CLASS_UNITS: temperature °C, °F, K; humidity %), so a misspelt unit
 * is shown as it is rather than converted as a temperature.
 */
const MEASURED: Record<
  LoopConfig['quantity'],
  { key: string; name: string; deviceClass?: string; units: string[] }
> = {
  temperature: {
    key: 'temperature',
    name: 'temperature',
    deviceClass: 'temperature',
    units: ['°C', '°F', 'K'],
  },
  humidity: { key: 'humidity', name: 'humidity', deviceClass: 'humidity', units: ['%'] },
  generic: { key: 'measured', name: 'measured value', units: [] },
};

function unit(loop: LoopConfig): { unit_of_meas?: string } {
  return loop.unit ? { unit_of_meas: loop.unit } : {};
}

function climate(
  { loopId, loop, topics, state }: LoopContext,
  base: EntityBase,
  temperatureUnit: 'C' | 'F',
): DiscoveryComponent {
  return {
    ...base,
    modes: allowedModes(loop).map((mode) => CLIMATE_MODE[mode] ?? mode),
    mode_cmd_t: topics.loopModeSet(loopId),
    mode_stat_t: state,
    mode_stat_tpl: STATE_TEMPLATES.mode,
    temp_cmd_t: topics.loopSetpointSet(loopId),
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

function humidifier(
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
    cmd_t: topics.loopModeSet(loopId),
    pl_on: onMode,
    pl_off: 'off',
    stat_t: state,
    stat_val_tpl: STATE_TEMPLATES.humidifierState(onMode),
    hum_cmd_t: topics.loopSetpointSet(loopId),
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
          mode_cmd_t: topics.loopModeSet(loopId),
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
