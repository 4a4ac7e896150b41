/**
 * Rules that span sections, each a small named function: every id refers to something, no
 * actuator or pin or command topic is shared, gains push the right way, limits fit the safe
 * state. Paths are from the top of the file; load.ts turns them into `a.b.c: message`.
 */
import type { z } from 'zod';
import { relayBandOf } from '../../kinds/fields.js';
import { ACTUATOR_MONITORS } from '../../kinds/monitors/registry.js';
import type { ActuatorConfig } from '../../kinds/registry.js';
import {
  actuatorKindOf,
  gpioPinOf,
  isRelay,
  safeLevelOf,
  sensorKindOf,
  usesMqtt,
} from '../../kinds/registry.js';
import { QUANTITY_DEFAULTS } from './common.js';
import { unknownRef } from './did-you-mean.js';
import type { RawActuator, RawConfig, RawLoop } from './file.js';
import { brewfatherFieldsAreRecorded, recordedSensorsAreKnown } from './record-checks.js';
import { loopSensorIds } from './sensor-set.js';

type Issue = (path: (string | number)[], message: string) => void;
type Rule = (config: RawConfig, issue: Issue) => void;

/** Every cross-section rule, in the order their messages are reported. */
const RULES: Rule[] = [
  sensorsReadKnownPlants,
  mqttKindsHaveABroker,
  actuatorsDriveKnownPlants,
  safetyLimitsNeedSafeOff,
  commandTopicsAreNotShared,
  gpioPinsAreNotShared,
  pwmChannelsAreNotShared,
  loopsUseKnownSensors,
  recordedSensorsAreKnown,
  brewfatherFieldsAreRecorded,
  sensorUnitsFitTheLoop,
  actuatorsServeOneLoop,
  bandModulationFitsThePid,
  gainsPushTheLoopsWay,
  actuatorsDriveTheMeasuredPlant,
];

/** Runs every rule; the zod refinement of the whole file. */
export function checkReferences(config: RawConfig, ctx: z.RefinementCtx): void {
  const issue: Issue = (path, message) => ctx.addIssue({ code: 'custom', path, message });
  for (const rule of RULES) rule(config, issue);
}

/** The simulated plant a sensor reads, if any. */
function sensorPlant(sensor: RawConfig['sensors'][string]): string | undefined {
  return sensorKindOf(sensor.kind).plant?.(sensor);
}

/** The simulated plant an actuator drives and its gain, if any. */
function actuatorPlant(actuator: RawActuator): { plant: string; gain: number } | undefined {
  return actuatorKindOf(actuator.kind).plant?.(actuator);
}

/** `record[key]` for own keys only, so an id like "constructor" never finds a prototype member. */
function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function sensorsReadKnownPlants(config: RawConfig, issue: Issue): void {
  for (const [id, sensor] of Object.entries(config.sensors)) {
    const plant = sensorPlant(sensor);
    if (plant !== undefined && !Object.hasOwn(config.simulation.plants, plant)) {
      issue(['sensors', id, 'plant'], unknownRef('plant', plant, Object.keys(config.simulation.plants)));
    }
  }
}

function mqttKindsHaveABroker(config: RawConfig, issue: Issue): void {
  if (config.mqtt) return;
  for (const section of ['sensors', 'actuators'] as const) {
    for (const [id, item] of Object.entries(config[section])) {
      if (usesMqtt(item)) issue([section, id], `kind ${item.kind} needs the mqtt block (broker)`);
    }
  }
}

function actuatorsDriveKnownPlants(config: RawConfig, issue: Issue): void {
  for (const [id, actuator] of Object.entries(config.actuators)) {
    const driven = actuatorPlant(actuator);
    if (driven && !Object.hasOwn(config.simulation.plants, driven.plant)) {
      issue(
        ['actuators', id, 'plant'],
        unknownRef('plant', driven.plant, Object.keys(config.simulation.plants)),
      );
    }
  }
}

/**
 * The actuator monitors' fields (maxOnS, maxStartsPerHour: kinds/monitors/) limit the time away from the safe state: with a safe state of on
 * they would hold an actuator in its unsafe state, so they need safeState off (safeLevel 0).
 */
function safetyLimitsNeedSafeOff(config: RawConfig, issue: Issue): void {
  for (const [id, actuator] of Object.entries(config.actuators)) {
    // The safe level reads only safeState or safeLevel, which resolution leaves as parsed.
    if (!(safeLevelOf(actuator as ActuatorConfig) > 0)) continue;
    const limits: Record<string, unknown> = actuator;
    for (const { key: field } of ACTUATOR_MONITORS) {
      if (limits[field] !== undefined) {
        issue(
          ['actuators', id, field],
          `needs a safe state of off: ${field} limits the time an actuator is on`,
        );
      }
    }
  }
}

/** Two actuators publishing on one command topic would fight over one device. */
function commandTopicsAreNotShared(config: RawConfig, issue: Issue): void {
  /** command topic → the actuator publishing on it. */
  const owners = new Map<string, string>();
  for (const [id, actuator] of Object.entries(config.actuators)) {
    const topic = actuatorKindOf(actuator.kind).commandTopic?.(actuator);
    if (topic === undefined) continue;
    const other = owners.get(topic);
    if (other !== undefined)
      issue(['actuators', id], `command topic ${topic} is already actuators.${other}'s`);
    else owners.set(topic, id);
  }
}

/** A pin driven or read by two drivers would fight (a relay exported as an input, two counters). */
function gpioPinsAreNotShared(config: RawConfig, issue: Issue): void {
  /** BCM number → its first user, e.g. `sensors.window`. */
  const users = new Map<number, string>();
  for (const section of ['sensors', 'actuators'] as const) {
    for (const [id, item] of Object.entries(config[section])) {
      const pin = gpioPinOf(item);
      if (pin === undefined) continue;
      const other = users.get(pin);
      if (other !== undefined) issue([section, id, 'bcm'], `pin ${pin} is also used by ${other}`);
      else users.set(pin, `${section}.${id}`);
    }
  }
}

/** Two pwm actuators on one channel would fight over its duty cycle (and its safe level). */
function pwmChannelsAreNotShared(config: RawConfig, issue: Issue): void {
  /** `pwmchipN/pwmM` → its first user, e.g. `actuators.fan`. */
  const users = new Map<string, string>();
  for (const [id, actuator] of Object.entries(config.actuators)) {
    if (actuator.kind !== 'pwm') continue;
    const channel = `pwmchip${actuator.chip}/pwm${actuator.channel}`;
    const other = users.get(channel);
    if (other !== undefined) issue(['actuators', id, 'channel'], `${channel} is also used by ${other}`);
    else users.set(channel, `actuators.${id}`);
  }
}

function loopsUseKnownSensors(config: RawConfig, issue: Issue): void {
  for (const [loopId, loop] of Object.entries(config.loops)) {
    if (loop.sensor !== undefined && !Object.hasOwn(config.sensors, loop.sensor)) {
      issue(['loops', loopId, 'sensor'], unknownRef('sensor', loop.sensor, Object.keys(config.sensors)));
    }
    loop.sensors?.forEach((sensor, index) => {
      if (!Object.hasOwn(config.sensors, sensor)) {
        issue(['loops', loopId, 'sensors', index], unknownRef('sensor', sensor, Object.keys(config.sensors)));
      }
    });
    loop.interlocks.forEach((interlock, index) => {
      if (!Object.hasOwn(config.sensors, interlock.sensor)) {
        issue(
          ['loops', loopId, 'interlocks', index, 'sensor'],
          unknownRef('sensor', interlock.sensor, Object.keys(config.sensors)),
        );
      }
    });
    const disturbance = loop.controller.type === 'pid' ? loop.controller.feedforward?.sensor : undefined;
    if (disturbance !== undefined && !Object.hasOwn(config.sensors, disturbance)) {
      issue(
        ['loops', loopId, 'controller', 'feedforward', 'sensor'],
        unknownRef('sensor', disturbance, Object.keys(config.sensors)),
      );
    } else if (disturbance !== undefined && loopSensorIds(loop).includes(disturbance)) {
      issue(
        ['loops', loopId, 'controller', 'feedforward', 'sensor'],
        `"${disturbance}" is the loop's own sensor: the disturbance needs a sensor of its own`,
      );
    }
  }
}

/**
 * Sensor kinds whose readings have one unit whatever the file says. Others (mqtt, a file, a
 * pulse rate, a simulated plant) give what their source gives, in units only the person knows.
 */
const FIXED_UNITS: Readonly<Record<string, string>> = { ds18b20: '°C' };

/**
 * A loop's unit is a label: nothing converts. A sensor that reports a fixed unit (a DS18B20: °C)
 * in a loop with another unit (°F) would be regulated as if 20 °C were 20 °F: the heater would run
 * on a wrong number. Checked for the loop's own sensors and its feedforward's disturbance sensor
 * (the model's ambient is in the loop's unit too). A generic loop without a unit claims none.
 */
function sensorUnitsFitTheLoop(config: RawConfig, issue: Issue): void {
  for (const [loopId, loop] of Object.entries(config.loops)) {
    const unit = loop.unit ?? QUANTITY_DEFAULTS[loop.quantity].unit;
    if (unit === '') continue;
    const path = ['loops', loopId];
    const refs: { sensorId: string; path: (string | number)[]; role: string }[] = [];
    if (loop.sensor !== undefined)
      refs.push({ sensorId: loop.sensor, path: [...path, 'sensor'], role: 'sensor' });
    loop.sensors?.forEach((sensorId, index) => {
      refs.push({ sensorId, path: [...path, 'sensors', index], role: 'sensor' });
    });
    const disturbance = loop.controller.type === 'pid' ? loop.controller.feedforward?.sensor : undefined;
    if (disturbance !== undefined) {
      refs.push({
        sensorId: disturbance,
        path: [...path, 'controller', 'feedforward', 'sensor'],
        role: 'disturbance sensor',
      });
    }
    for (const ref of refs) {
      const sensor = own(config.sensors, ref.sensorId);
      const fixed = sensor ? FIXED_UNITS[sensor.kind] : undefined;
      if (fixed === undefined || fixed === unit) continue;
      const fix =
        loop.quantity === 'temperature'
          ? `use unit: ${fixed} for this loop (setpoint and limits in ${fixed})`
          : `a ${sensor!.kind} measures temperature: use it in a temperature loop in ${fixed}`;
      issue(
        ref.path,
        `${ref.role} "${ref.sensorId}" is a ${sensor!.kind}, which reports ${fixed}, but the loop's unit is ` +
          `${unit} (a label: nothing converts): ${fix}`,
      );
    }
  }
}

/** Each known actuator of each loop, with its role; unknown ones are actuatorsServeOneLoop's. */
function* loopActuators(config: RawConfig) {
  for (const [loopId, loop] of Object.entries(config.loops)) {
    for (const role of ['raise', 'lower'] as const) {
      const actuatorId = loop[role];
      if (actuatorId === undefined) continue;
      const actuator = own(config.actuators, actuatorId);
      yield { loopId, loop, role, actuatorId, actuator, path: ['loops', loopId, role] };
    }
  }
}

/** Every loop actuator exists and serves one role of one loop. */
function actuatorsServeOneLoop(config: RawConfig, issue: Issue): void {
  /** actuator id → where it is already used, e.g. `loops.room.raise`. */
  const usedBy = new Map<string, { loop: string; role: 'raise' | 'lower' }>();
  for (const { loopId, role, actuatorId, actuator, path } of loopActuators(config)) {
    if (!actuator) {
      issue(path, unknownRef('actuator', actuatorId, Object.keys(config.actuators)));
      continue;
    }
    const previous = usedBy.get(actuatorId);
    if (previous?.loop === loopId) {
      issue(path, `actuator "${actuatorId}" is already this loop's ${previous.role} actuator`);
    } else if (previous) {
      issue(path, `actuator "${actuatorId}" is already used by loops.${previous.loop}.${previous.role}`);
    } else {
      usedBy.set(actuatorId, { loop: loopId, role });
    }
  }
}

/**
 * A relay's band modulation needs the loop's PID: the band is a band of the PID output, kp
 * turns band into it, and it must stay inside 0..1 (kp·band < 0.5). Messages name the key the
 * file uses (band, or its old name bandC).
 */
function bandModulationFitsThePid(config: RawConfig, issue: Issue): void {
  for (const { loopId, loop, role, actuatorId, actuator } of loopActuators(config)) {
    if (actuator) checkModulation(actuatorId, actuator, loopId, loop.controller, role, issue);
  }
}

function checkModulation(
  actuatorId: string,
  actuator: RawActuator,
  loopId: string,
  controller: RawLoop['controller'],
  role: 'raise' | 'lower',
  issue: Issue,
): void {
  if (!isRelay(actuator) || actuator.modulation !== 'band') return;
  if (controller.type !== 'pid') {
    issue(
      ['actuators', actuatorId, 'modulation'],
      `modulation "band" needs a pid controller, but loops.${loopId} uses ${controller.type} ` +
        '(use modulation "window" or a pid controller)',
    );
    return;
  }
  const { key, band } = relayBandOf(actuator);
  // A split-range loop's lower actuator runs on the lower side's gains when it has its own.
  const lowerKp = role === 'lower' ? controller.lower?.kp : undefined;
  const kp = lowerKp ?? controller.kp;
  const kpName = lowerKp === undefined ? 'kp' : 'lower.kp';
  const halfBand = kp * band;
  if (halfBand >= 0.5) {
    issue(
      ['actuators', actuatorId, key],
      `band too wide for ${kpName}: ${kpName} ${kp} × ${key} ${band} = ${round(halfBand)} ` +
        `(must be < 0.5, so ${key} < ${round(0.5 / kp)} for loops.${loopId})`,
    );
  }
}

/** A raise actuator that lowers the plant would drive the loop away from its setpoint forever. */
function gainsPushTheLoopsWay(config: RawConfig, issue: Issue): void {
  for (const { role, actuatorId, actuator, path } of loopActuators(config)) {
    const driven = actuator && actuatorPlant(actuator);
    if (!driven) continue;
    const wrongWay = role === 'raise' ? !(driven.gain > 0) : !(driven.gain < 0);
    if (wrongWay) {
      issue(
        path,
        `actuator "${actuatorId}" has gain ${driven.gain} on plant "${driven.plant}"; ` +
          `a ${role} actuator needs a ${role === 'raise' ? 'positive' : 'negative'} gain`,
      );
    }
  }
}

/** A simulated loop's actuators drive the plant its sensors read (the first one that differs is named). */
function actuatorsDriveTheMeasuredPlant(config: RawConfig, issue: Issue): void {
  for (const { loop, actuatorId, actuator, path } of loopActuators(config)) {
    const driven = actuator && actuatorPlant(actuator);
    if (!driven) continue;
    for (const sensorId of loopSensorIds(loop)) {
      const sensor = own(config.sensors, sensorId);
      const measuredPlant = sensor ? sensorPlant(sensor) : undefined;
      if (measuredPlant !== undefined && driven.plant !== measuredPlant) {
        issue(
          path,
          `actuator "${actuatorId}" drives plant "${driven.plant}" but sensor "${sensorId}" reads plant "${measuredPlant}"`,
        );
        break;
      }
    }
  }
}

/** For messages: at most 4 significant digits, no float noise. */
function round(value: number): number {
  return Number(value.toPrecision(4));
}
