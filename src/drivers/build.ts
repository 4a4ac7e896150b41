import type { Config } from '../config/schema.js';
import { SimContinuous, SimRelay } from './sim/actuator.js';
import { FopdtPlant } from './sim/plant.js';
import { Random, seedFromString } from './sim/random.js';
import { SimSensor } from './sim/sensor.js';
import type { ActuatorDriver, SensorDriver } from './types.js';

/** Every driver a config asks for, by id, plus the simulated plants behind the simulated ones. */
export interface Drivers {
  sensors: Map<string, SensorDriver>;
  actuators: Map<string, ActuatorDriver>;
  plants: Map<string, FopdtPlant>;
}

/** Builds the drivers named in the config. `nowMs` is the (possibly scaled) clock. */
export function buildDrivers(config: Config, nowMs: () => number): Drivers {
  const startMs = nowMs();
  const plants = new Map<string, FopdtPlant>();
  for (const [id, plant] of Object.entries(config.simulation.plants)) {
    plants.set(id, new FopdtPlant(plant, startMs));
  }
  const plantOf = (id: string): FopdtPlant => {
    const plant = plants.get(id);
    // The config schema checks references; this guards against a schema/driver mismatch.
    if (!plant) throw new Error(`unknown simulation plant "${id}"`);
    return plant;
  };

  const sensors = new Map<string, SensorDriver>();
  for (const [id, sensor] of Object.entries(config.sensors)) {
    switch (sensor.kind) {
      case 'simulated': {
        const plant = config.simulation.plants[sensor.plant]!;
        sensors.set(
          id,
          new SimSensor({
            id,
            plant: plantOf(sensor.plant),
            nowMs,
            noise: plant.noise,
            quantization: plant.quantization,
            random: new Random((config.simulation.seed ^ seedFromString(id)) >>> 0),
          }),
        );
        break;
      }
    }
  }

  const actuators = new Map<string, ActuatorDriver>();
  for (const [id, actuator] of Object.entries(config.actuators)) {
    switch (actuator.kind) {
      case 'simulated_relay':
        actuators.set(id, new SimRelay({ id, plant: plantOf(actuator.plant), gain: actuator.gain, nowMs }));
        break;
      case 'simulated_continuous':
        actuators.set(
          id,
          new SimContinuous({ id, plant: plantOf(actuator.plant), gain: actuator.gain, nowMs }),
        );
        break;
    }
  }
  return { sensors, actuators, plants };
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
