/**
 * The components every loop has beside its main entity: the measured value and the output, the
 * problem binary sensors (fault, storage) and the button that resets a latched fault.
 *
 * Pure: no clock, no IO.
 */
import type { LoopConfig } from '../config/schema.js';
import { type KeyedComponent, type LoopContext, unit } from './discovery-entity.js';
import { STATE_TEMPLATES } from './discovery-templates.js';

/** The measured value and the output (a diagnostic, in signed percent). */
export function sensors({ loop, state, entity, name }: LoopContext): KeyedComponent[] {
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
export function binarySensors({ state, entity, name }: LoopContext): KeyedComponent[] {
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

export function faultResetButton({ loopId, topics, entity, name }: LoopContext): KeyedComponent {
  return [
    'fault_reset',
    {
      ...entity('button', 'fault_reset', name('reset fault'), 'fault_reset'),
      cmd_t: topics.loopCommand(loopId, 'faultReset'),
      pl_prs: 'reset',
      ent_cat: 'config',
      ret: false,
    },
  ];
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
