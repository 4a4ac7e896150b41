/**
 * The Home Assistant components of one loop, one function per group: the main entity (what a
 * person adjusts: climate, humidifier, or a number and a select), the sensors, the binary
 * sensors, the fault-reset button and, on PID loops, the autotune's buttons and sensor. Keys
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
import { CLIMATE_MODE, STATE_TEMPLATES } from './discovery-templates.js';
import type { DiscoveryComponent, Platform } from './discovery-types.js';
import type { Topics } from './topics.js';

/** One component and the key it is published under (after the loop's unique-id prefix). */
type KeyedComponent = [key: string, component: DiscoveryComponent];

/** An entity's identity: platform, display name, unique id and entity id. */
interface EntityBase {
  p: Platform;
  name: string;
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
  entity: (platform: Platform, key: string, name: string, suffix: string | undefined) => EntityBase;
}

/** Every component of one loop, keyed by unique id. */
export function loopComponents(
  nodeId: string,
  loopId: string,
  loop: LoopConfig,
  topics: Topics,
): Record<string, DiscoveryComponent> {
  const uid = loopUniqueId(nodeId, loopId);
  const context: LoopContext = {
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
  ];
  return Object.fromEntries(
    components.map(([key, component]) => [`${uid}_${key}`, { ...component, qos: COMPONENT_QOS }]),
  );
}

/** QoS of every component's subscriptions and commands (commands are absolute: duplicates are harmless). */
const COMPONENT_QOS = 1;

/** Unique-id prefix of a loop's components; also the cmps keys. */
function loopUniqueId(nodeId: string, loopId: string): string {
  return `homeostat_${nodeId}_${loopId}`;
}

/** Entity ids allow only [a-z0-9_]: a node id's `-` becomes `_`. */
function entityId(platform: Platform, nodeId: string, loopId: string, suffix?: string): string {
  const object = `homeostat_${nodeId.replace(/-/g, '_')}_${loopId}${suffix ? `_${suffix}` : ''}`;
  return `${platform}.${object}`;
}

/** The main entity: what a person adjusts. */
function mainComponents(context: LoopContext): KeyedComponent[] {
  const { loop, entity } = context;
  if (loop.quantity === 'temperature') {
    return [['climate', climate(context, entity('climate', 'climate', loop.name, undefined))]];
  }
  if (loop.quantity === 'humidity') {
    return [['humidifier', humidifier(context, entity('humidifier', 'humidifier', loop.name, undefined))]];
  }
  // No HA entity fits a generic quantity: a number for the setpoint, a select for the mode.
  return genericControls(context);
}

function genericControls({ loopId, loop, topics, state, entity }: LoopContext): KeyedComponent[] {
  return [
    [
      'setpoint',
      {
        ...entity('number', 'setpoint', `${loop.name} setpoint`, 'setpoint'),
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
        ...entity('select', 'mode', `${loop.name} mode`, 'mode'),
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
function sensors({ loop, state, entity }: LoopContext): KeyedComponent[] {
  const measured = MEASURED[loop.quantity];
  return [
    [
      measured.key,
      {
        ...entity('sensor', measured.key, `${loop.name} ${measured.key}`, measured.key),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.measured,
        stat_cla: 'measurement',
        ...(measured.deviceClass && measured.units.includes(loop.unit)
          ? { dev_cla: measured.deviceClass }
          : {}),
        ...unit(loop),
      },
    ],
    [
      'output',
      {
        ...entity('sensor', 'output', `${loop.name} output`, 'output'),
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
function binarySensors({ loop, state, entity }: LoopContext): KeyedComponent[] {
  return [
    [
      'fault',
      {
        ...entity('binary_sensor', 'fault', `${loop.name} fault`, 'fault'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.faulted,
        dev_cla: 'problem',
        ent_cat: 'diagnostic',
      },
    ],
    [
      'storage',
      {
        ...entity('binary_sensor', 'storage', `${loop.name} storage problem`, 'storage'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.storageProblem,
        dev_cla: 'problem',
        ent_cat: 'diagnostic',
      },
    ],
  ];
}

function faultResetButton({ loopId, loop, topics, entity }: LoopContext): KeyedComponent {
  return [
    'fault_reset',
    {
      ...entity('button', 'fault_reset', `${loop.name} reset fault`, 'fault_reset'),
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
function autotuneComponents({ loopId, loop, topics, state, entity }: LoopContext): KeyedComponent[] {
  const button = (key: string, name: string, topic: string, payload: string): KeyedComponent => [
    key,
    {
      ...entity('button', key, `${loop.name} ${name}`, key),
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
        ...entity('sensor', 'autotune_status', `${loop.name} autotune status`, 'autotune_status'),
        stat_t: state,
        val_tpl: STATE_TEMPLATES.autotunePhase,
        json_attr_t: state,
        json_attr_tpl: STATE_TEMPLATES.autotuneAttributes,
        ent_cat: 'diagnostic',
      },
    ],
  ];
}

/** The measured-value sensor per quantity; device_class only with a unit HA accepts for it. */
const MEASURED: Record<LoopConfig['quantity'], { key: string; deviceClass?: string; units: string[] }> = {
  temperature: { key: 'temperature', deviceClass: 'temperature', units: ['°C', '°F', 'K'] },
  humidity: { key: 'humidity', deviceClass: 'humidity', units: ['%'] },
  generic: { key: 'measured', units: [] },
};

function unit(loop: LoopConfig): { unit_of_meas?: string } {
  return loop.unit ? { unit_of_meas: loop.unit } : {};
}

function climate({ loopId, loop, topics, state }: LoopContext, base: EntityBase): DiscoveryComponent {
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
    temp_step: loop.step,
    temp_unit: loop.unit === '°F' ? 'F' : 'C',
    // Retained commands would be replayed on every reconnect and undo later changes.
    ret: false,
  };
}

function humidifier({ loopId, loop, topics, state }: LoopContext, base: EntityBase): DiscoveryComponent {
  const activeModes = allowedModes(loop).filter((mode) => mode !== 'off');
  // Turning the entity on restores the file's mode, or the mode using every actuator.
  const onMode = loop.mode !== 'off' ? loop.mode : defaultMode(loop);
  // HA bounds: 0 <= min < max <= 100 (whole percent in older versions).
  const minHumidity = clamp(Math.ceil(loop.limits.min), 0, 99);
  const maxHumidity = clamp(Math.floor(loop.limits.max), minHumidity + 1, 100);
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
    hum_state_tpl: STATE_TEMPLATES.setpoint,
    current_humidity_topic: state,
    current_humidity_template: STATE_TEMPLATES.measured,
    act_t: state,
    act_tpl: STATE_TEMPLATES.humidifierAction,
    min_hum: minHumidity,
    max_hum: maxHumidity,
    // With both actuators the user also picks humidify, dehumidify or auto.
    ...(activeModes.length > 1
      ? {
          modes: activeModes,
          mode_cmd_t: topics.loopModeSet(loopId),
          mode_stat_t: state,
          mode_stat_tpl: STATE_TEMPLATES.humidifierMode,
        }
      : {}),
    // The humidifier platform retains commands by default; retained commands would be replayed.
    ret: false,
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
