/**
 * Builds the drivers a config asks for, each by its kind's factory (registry.ts). Reads only
 * the hardware sections of the config (typed here structurally, so kinds need not import
 * config): sensors, actuators, the simulation and the gpio block.
 */
import type { Logger } from 'pino';
import { portFactoryFor } from '../drivers/gpio/file-port.js';
import type { GpioPortFactory } from '../drivers/gpio/port.js';
import { type MqttTransport, offlineTransport } from '../drivers/mqtt/transport.js';
import { disturbanceMessage, FopdtPlant, type PlantParams } from '../drivers/sim/plant.js';
import type { ActuatorDriver, SensorDriver } from '../drivers/types.js';
import { type ClockTimes, timesOf } from '../time/stamps.js';
import { type ActuatorConfig, actuatorKindOf, type SensorConfig, sensorKindOf } from './registry.js';
import type { DriverContext } from './types.js';

/** The parts of a validated config that drivers are built from. */
export interface HardwareConfig {
  /** Resolved: sysfsRoot always set (/sys unless written). */
  gpio: { sysfsRoot: string; chipLabel?: string | undefined; base?: number | undefined };
  simulation: { seed: number; plants: Record<string, PlantParams & { noise: number; quantization: number }> };
  sensors: Record<string, SensorConfig>;
  actuators: Record<string, ActuatorConfig>;
}

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
  /**
   * How GPIO drivers open pins; absent: onoff on /sys (loaded only when a GPIO driver starts),
   * the sysfs files themselves under another gpio.sysfsRoot (drivers/gpio/file-port.ts).
   */
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
  /** GPIO drivers' pin access; tests pass a fake `portFactory`. Default: see `Drivers.gpioPortFactory`. */
  gpio?: { portFactory?: GpioPortFactory | undefined } | undefined;
}

/**
 * The times drivers read: monotonic time for what they measure themselves (a rate limit, a
 * pulse window, the simulated world's time) and the stamps they keep (time/stamps.ts), which a
 * wall-clock step does not move; wall time (`nowMs`) for what leaves them. Both possibly scaled
 * (`--speed`). A function alone is a clock whose two times are the same: a test's fixed or
 * advancing time that never steps.
 */
export type DriverTime = ClockTimes;

type DriverClock = ReturnType<typeof timesOf>;

/** Builds the drivers named in the config, on the daemon's clock (see DriverTime). */
export function buildDrivers(config: HardwareConfig, time: DriverTime, deps: DriverDeps = {}): Drivers {
  const drivers: Drivers = {
    sensors: new Map(),
    actuators: new Map(),
    plants: new Map(),
    ...(deps.mqtt ? { mqtt: deps.mqtt } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.gpio?.portFactory ? { gpioPortFactory: deps.gpio.portFactory } : {}),
  };
  for (const id of Object.keys(config.sensors))
    drivers.sensors.set(id, createSensorDriver(config, id, drivers, time));
  for (const id of Object.keys(config.actuators)) {
    drivers.actuators.set(id, createActuatorDriver(config, id, drivers, time));
  }
  return drivers;
}

/** Builds the driver of one section of `config` (a reload replaces drivers one by one). */
type DriverFactory<Driver> = (
  config: HardwareConfig,
  id: string,
  drivers: Drivers,
  time: DriverTime,
) => Driver;

export const createSensorDriver: DriverFactory<SensorDriver> = (config, id, drivers, time) => {
  const sensor = sectionOf(config.sensors, 'sensor', id);
  return sensorKindOf(sensor.kind).createDriver(sensor, contextOf(config, id, drivers, timesOf(time)));
};

export const createActuatorDriver: DriverFactory<ActuatorDriver> = (config, id, drivers, time) => {
  const actuator = sectionOf(config.actuators, 'actuator', id);
  return actuatorKindOf(actuator.kind).createDriver(actuator, contextOf(config, id, drivers, timesOf(time)));
};

/** What a kind's factory may use: shared connections and plants are created once, on demand. */
function contextOf(config: HardwareConfig, id: string, drivers: Drivers, clock: DriverClock): DriverContext {
  return {
    id,
    nowMs: clock.nowMs,
    monotonicMs: clock.monotonicMs,
    transport: () => drivers.mqtt ?? offlineTransport('MQTT not configured'),
    gpio: () => ({
      sysfsRoot: config.gpio.sysfsRoot,
      // Not onoff under another root: its root is fixed at /sys/class/gpio, so a config pointing
      // gpio.sysfsRoot at a fixture tree had the daemon export pins on the real /sys.
      portFactory: drivers.gpioPortFactory ?? portFactoryFor(config.gpio.sysfsRoot),
      chip: { chipLabel: config.gpio.chipLabel, base: config.gpio.base },
    }),
    plant: (plantId) => plantOf(config, plantId, drivers, clock.monotonicMs),
    simulation: config.simulation,
    logger: drivers.logger,
  };
}

/** The simulated plant `id`, created on first use (a running plant is the simulated world). */
function plantOf(
  config: HardwareConfig,
  id: string,
  drivers: Drivers,
  monotonicMs: () => number,
): FopdtPlant {
  let plant = drivers.plants.get(id);
  if (!plant) {
    const params = sectionOf(config.simulation.plants, 'simulation plant', id);
    const unit = params.kind === 'humidity' ? '%RH' : '°C';
    // The demo tells its story: its window opening and closing are announced.
    const logger = drivers.logger;
    plant = new FopdtPlant(params, monotonicMs(), {
      ...(logger
        ? { onDisturbance: (event) => logger.info({ plant: id }, disturbanceMessage(id, unit, event)) }
        : {}),
    });
    drivers.plants.set(id, plant);
  }
  return plant;
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

/**
 * The section `id` of `record` (own keys only, so an id like "constructor" never finds a
 * prototype member). The config schema checks references; the error guards against a
 * schema/driver mismatch.
 */
function sectionOf<T>(record: Record<string, T>, what: string, id: string): T {
  const section = Object.hasOwn(record, id) ? record[id] : undefined;
  if (section === undefined) throw new Error(`unknown ${what} "${id}"`);
  return section;
}
