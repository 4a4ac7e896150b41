import type { Logger } from 'pino';
import { canonicalJson } from '../config/plan.js';
import type { ActuatorConfig, Config, SensorConfig } from '../config/schema.js';
import { Ds18b20Sensor } from './ds18b20.js';
import type { GpioChipOverride } from './gpio/chip.js';
import { GpioInput } from './gpio/input.js';
import { type GpioPortFactory, onoffPortFactory } from './gpio/port.js';
import { GpioPulseRate } from './gpio/pulse-rate.js';
import { GpioRelay } from './gpio/relay.js';
import { MqttLevel, MqttSwitch } from './mqtt/actuator.js';
import { type DeadMan, deadManFor } from './mqtt/payload.js';
import { MqttSensor } from './mqtt/sensor.js';
import { type MqttTransport, offlineTransport } from './mqtt/transport.js';
import { SimContinuous, SimRelay } from './sim/actuator.js';
import { FopdtPlant } from './sim/plant.js';
import { Random, seedFromString } from './sim/random.js';
import { SimSensor } from './sim/sensor.js';
import type { ActuatorDriver, SensorDriver } from './types.js';

/**
 * Every driver a config asks for, by id, plus the simulated plants behind the simulated ones
 * and the broker connection of the MQTT ones (drivers created later, on reload, share it).
 */
export interface Drivers {
  sensors: Map<string, SensorDriver>;
  actuators: Map<string, ActuatorDriver>;
  plants: Map<string, FopdtPlant>;
  /** The node's one MQTT connection; absent: MQTT drivers get an offline transport. */
  mqtt?: MqttTransport;
  /** Where MQTT actuators report state payloads they do not understand. */
  logger?: Logger;
  /** How GPIO drivers open pins; absent: onoff (loaded only when a GPIO driver starts). */
  gpioPortFactory?: GpioPortFactory;
}

/** What drivers need besides the config and the clock. */
export interface DriverDeps {
  /**
   * The daemon's MQTT connection, shared by every MQTT driver. Without it, MQTT drivers are
   * built on an offline transport: unknown states, failed writes, loops safe and saying why.
   */
  mqtt?: MqttTransport | undefined;
  logger?: Logger | undefined;
  /** GPIO drivers' pin access; tests pass a fake `portFactory`. Default: onoff on /sys/class/gpio. */
  gpio?: { portFactory?: GpioPortFactory | undefined } | undefined;
}

/** Builds the drivers named in the config. `nowMs` is the (possibly scaled) clock. */
export function buildDrivers(config: Config, nowMs: () => number, deps: DriverDeps = {}): Drivers {
  const drivers: Drivers = {
    sensors: new Map(),
    actuators: new Map(),
    plants: new Map(),
    ...(deps.mqtt ? { mqtt: deps.mqtt } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.gpio?.portFactory ? { gpioPortFactory: deps.gpio.portFactory } : {}),
  };
  for (const id of Object.keys(config.sensors))
    drivers.sensors.set(id, createSensorDriver(config, id, drivers, nowMs));
  for (const id of Object.keys(config.actuators)) {
    drivers.actuators.set(id, createActuatorDriver(config, id, drivers, nowMs));
  }
  return drivers;
}

/** The shared MQTT connection, or one that explains why there is none. */
function transportOf(drivers: Drivers): MqttTransport {
  return drivers.mqtt ?? offlineTransport('MQTT not configured');
}

/** What every GPIO driver shares: where sysfs is, how pins are opened, the chip override. */
function gpioOf(
  config: Config,
  drivers: Drivers,
): { sysfsRoot: string; portFactory: GpioPortFactory; chip: GpioChipOverride } {
  return {
    sysfsRoot: config.gpio?.sysfsRoot ?? '/sys',
    portFactory: drivers.gpioPortFactory ?? onoffPortFactory,
    chip: { chipLabel: config.gpio?.chipLabel, base: config.gpio?.base },
  };
}

/** The simulated plant `id`, created on first use (a running plant is the simulated world). */
function plantOf(config: Config, id: string, drivers: Drivers, nowMs: () => number): FopdtPlant {
  let plant = drivers.plants.get(id);
  if (!plant) {
    const plantConfig = config.simulation.plants[id];
    // The config schema checks references; this guards against a schema/driver mismatch.
    if (!plantConfig) throw new Error(`unknown simulation plant "${id}"`);
    plant = new FopdtPlant(plantConfig, nowMs());
    drivers.plants.set(id, plant);
  }
  return plant;
}

export function createSensorDriver(
  config: Config,
  id: string,
  drivers: Drivers,
  nowMs: () => number,
): SensorDriver {
  const sensor = config.sensors[id];
  if (!sensor) throw new Error(`unknown sensor "${id}"`);
  switch (sensor.kind) {
    case 'simulated': {
      const plant = config.simulation.plants[sensor.plant]!;
      return new SimSensor({
        id,
        plant: plantOf(config, sensor.plant, drivers, nowMs),
        nowMs,
        noise: plant.noise,
        quantization: plant.quantization,
        random: new Random((config.simulation.seed ^ seedFromString(id)) >>> 0),
      });
    }
    case 'mqtt':
      return new MqttSensor({
        id,
        transport: transportOf(drivers),
        topic: sensor.topic,
        field: sensor.field,
        staleAfterMs: sensor.staleAfterS * 1000,
        nowMs,
      });
    case 'ds18b20':
      return new Ds18b20Sensor({
        id,
        address: sensor.address,
        sysfsRoot: gpioOf(config, drivers).sysfsRoot,
        nowMs,
        plausible: sensor.plausible,
        maxRatePerS: sensor.maxRatePerS,
      });
    case 'gpio_input':
      return new GpioInput({
        id,
        bcm: sensor.bcm,
        activeLow: sensor.activeLow,
        debounceMs: sensor.debounceMs,
        ...gpioOf(config, drivers),
      });
    case 'pulse_rate':
      return new GpioPulseRate({
        id,
        bcm: sensor.bcm,
        activeLow: sensor.activeLow,
        edge: sensor.edge,
        windowS: sensor.windowS,
        factor: sensor.factor,
        nowMs,
        ...gpioOf(config, drivers),
      });
  }
}

export function createActuatorDriver(
  config: Config,
  id: string,
  drivers: Drivers,
  nowMs: () => number,
): ActuatorDriver {
  const actuator = config.actuators[id];
  if (!actuator) throw new Error(`unknown actuator "${id}"`);
  switch (actuator.kind) {
    case 'simulated_relay':
      return new SimRelay({
        id,
        plant: plantOf(config, actuator.plant, drivers, nowMs),
        gain: actuator.gain,
        nowMs,
      });
    case 'simulated_continuous':
      return new SimContinuous({
        id,
        plant: plantOf(config, actuator.plant, drivers, nowMs),
        gain: actuator.gain,
        nowMs,
      });
    case 'mqtt_switch':
      return new MqttSwitch({
        id,
        transport: transportOf(drivers),
        commandTopic: actuator.commandTopic,
        stateTopic: actuator.stateTopic,
        payloadOn: actuator.payloadOn,
        payloadOff: actuator.payloadOff,
        stateOn: actuator.stateOn,
        stateOff: actuator.stateOff,
        stateField: actuator.stateField,
        stateStaleAfterMs: actuator.stateStaleAfterS * 1000,
        nowMs,
        logger: drivers.logger,
        deadMan: switchDeadMan(actuator),
      });
    case 'mqtt_level':
      return new MqttLevel({
        id,
        transport: transportOf(drivers),
        commandTopic: actuator.commandTopic,
        stateTopic: actuator.stateTopic,
        commandField: actuator.commandField,
        stateField: actuator.stateField,
        levelScale: actuator.levelScale,
        stateStaleAfterMs: actuator.stateStaleAfterS * 1000,
        nowMs,
        logger: drivers.logger,
      });
    case 'gpio_relay':
      return new GpioRelay({
        id,
        bcm: actuator.bcm,
        activeLow: actuator.activeLow,
        ...gpioOf(config, drivers),
      });
  }
}

/** An MQTT relay's dead man's switch from its resolved config (the schema checked it can be built). */
function switchDeadMan(actuator: Extract<ActuatorConfig, { kind: 'mqtt_switch' }>): DeadMan | undefined {
  if (actuator.deadManS <= 0 || actuator.preset === undefined) return undefined;
  const built = deadManFor(actuator.preset, actuator, actuator.deadManS);
  return built.ok ? built.deadMan : undefined;
}

/** Settings a loop reads (timing, safe state) rather than the driver: changing them keeps the driver. */
const LOOP_LEVEL_KEYS = new Set([
  'periodS',
  'staleAfterS',
  'minOnS',
  'minOffS',
  'windowS',
  'modulation',
  'bandC',
  'safeState',
  'safeLevel',
]);

/**
 * What identifies a driver: its config section without the loop-level settings. Two configs
 * with the same key can share the running driver (a reload keeps it: no glitch, no re-export).
 * Simulated plants are the simulated world: they keep running across reloads, so edits to
 * `simulation` take effect at the next start; so do edits to the top-level `gpio` block for
 * GPIO drivers whose own section is unchanged.
 */
export function driverKey(section: SensorConfig | ActuatorConfig): string {
  // An MQTT sensor checks staleness itself (it keeps a pushed value): its staleAfterS is the driver's.
  // A pulse counter's windowS is its counting window, not a relay's modulation window.
  const loopLevel = (key: string) =>
    LOOP_LEVEL_KEYS.has(key) &&
    !(section.kind === 'mqtt' && key === 'staleAfterS') &&
    !(section.kind === 'pulse_rate' && key === 'windowS');
  return canonicalJson(Object.fromEntries(Object.entries(section).filter(([key]) => !loopLevel(key))));
}

/**
 * `--speed N` runs the clock N× faster: only meaningful when every driver is simulated (real
 * hardware and real time cannot be sped up). Returns the problem, or undefined when allowed.
 */
export function speedProblem(drivers: Pick<Drivers, 'sensors' | 'actuators'>): string | undefined {
  const real = [...drivers.sensors.values(), ...drivers.actuators.values()].filter((d) => !d.simulated);
  if (real.length === 0) return undefined;
  return `--speed needs every driver to be simulated; real drivers: ${real.map((d) => d.id).join(', ')}`;
}
