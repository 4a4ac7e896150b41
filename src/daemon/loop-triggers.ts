/**
 * Which loops a sensor's new reading or an actuator's availability change concerns, so the
 * daemon runs those loops at once instead of at their next period. Pure: reads the config.
 */
import type { Config } from '../config/schema.js';

/** Loops whose own sensor (one of its set) or interlock is `sensorId`: a window opening pauses at once. */
export function loopsReadingSensor(config: Config, sensorId: string): string[] {
  return Object.entries(config.loops)
    .filter(([, loop]) => {
      const own = loop.sensor === sensorId || loop.sensors?.includes(sensorId) === true;
      return own || loop.interlocks.some((interlock) => interlock.sensor === sensorId);
    })
    .map(([id]) => id);
}

/** Loops that drive `actuatorId` (raise or lower). */
export function loopsDrivingActuator(config: Config, actuatorId: string): string[] {
  return Object.entries(config.loops)
    .filter(([, loop]) => loop.raise === actuatorId || loop.lower === actuatorId)
    .map(([id]) => id);
}
