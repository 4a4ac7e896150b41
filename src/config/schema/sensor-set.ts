/**
 * Several sensors per loop: `sensors` instead of `sensor`, with `combine`,
 * `minHealthy` and `outlierLimit`. The rules are the pure core's (core/sensor-set-report.ts:
 * validateSensorSet); this file gives them their config shape, defaults and paths.
 */
import { z } from 'zod';
import type { CombineMethod, SensorSetSpec } from '../../core/sensor-set.js';
import { validateSensorSet } from '../../core/sensor-set-report.js';
import { ref } from './common.js';

const METHODS = ['mean', 'median', 'min', 'max', 'first'] as const satisfies readonly CombineMethod[];

/** Defaults of a loop with `sensors`: the median of all, regulating while one is healthy. */
export const SENSOR_SET_DEFAULTS = { combine: 'median', minHealthy: 1 } as const;

/** The loop keys of a sensor set, spread into the loop schema (schema/loop.ts). */
export const sensorSetFields = {
  sensors: z
    .array(ref('sensor'))
    .optional()
    .describe(
      'Ids of several sensors that measure the quantity, combined into one reading (combine); for ' +
        'combine first also the fallback order. Instead of sensor, not with it. Default: none (sensor).',
    ),
  combine: z
    .enum(METHODS, { error: `must be one of ${METHODS.join(', ')}` })
    .optional()
    .describe(
      'How the healthy readings of sensors make one: mean, median, min, max, or first (the first ' +
        'healthy sensor in the list: a fallback order). Only with sensors. Default median.',
    ),
  minHealthy: z
    .number()
    .optional()
    .describe(
      'Fewer healthy sensors than this (fresh, plausible, not dropped as outliers): the loop goes to ' +
        'its safe state. A whole number from 1 to the number of sensors. Only with sensors. Default 1.',
    ),
  outlierLimit: z
    .number()
    .optional()
    .describe(
      'Largest distance (loop unit) a reading may have from the median of the healthy ones (3 or more), ' +
        'or two readings from each other (both dropped: no majority). Above 0. Only with sensors. ' +
        'Default: no outlier rejection.',
    ),
};

/** The sensor keys of a loop as parsed (before and after resolution alike). */
interface LoopSensorKeys {
  sensor?: string | undefined;
  sensors?: string[] | undefined;
  combine?: CombineMethod | undefined;
  minHealthy?: number | undefined;
  outlierLimit?: number | undefined;
}

/** Every sensor a loop regulates on, in its order: `[sensor]`, or `sensors`. */
export function loopSensorIds(loop: LoopSensorKeys): string[] {
  if (loop.sensors !== undefined) return [...loop.sensors];
  return loop.sensor === undefined ? [] : [loop.sensor];
}

/**
 * The sensor set of a loop with `sensors`, defaults filled in; undefined for a loop with one
 * `sensor` (it keeps the single sensor's path through the core, unchanged).
 */
export function sensorSetOf(loop: LoopSensorKeys): SensorSetSpec | undefined {
  if (loop.sensors === undefined) return undefined;
  return {
    sensors: [...loop.sensors],
    combine: loop.combine ?? SENSOR_SET_DEFAULTS.combine,
    minHealthy: loop.minHealthy ?? SENSOR_SET_DEFAULTS.minHealthy,
    ...(loop.outlierLimit === undefined ? {} : { outlierLimit: loop.outlierLimit }),
  };
}

/**
 * The loop's default staleness: its sensor's, or with several the largest of theirs. With
 * several it is the cap of each member's own limit (each sensor is judged by its own staleAfterS:
 * core/sensor-set.ts), so this default caps nothing; a staleAfterS the file sets does.
 */
export function defaultStaleAfterS(
  loop: LoopSensorKeys,
  sensors: Record<string, { staleAfterS: number } | undefined>,
): number {
  const known = loopSensorIds(loop)
    .filter((id) => Object.hasOwn(sensors, id))
    .map((id) => sensors[id]!.staleAfterS);
  // The reference rules guarantee the sensors exist; the fallback only keeps types honest.
  return known.length > 0 ? Math.max(...known) : 30;
}

type Issue = { path: (string | number)[]; message: string };

/**
 * A loop's sensor keys: exactly one of `sensor` and `sensors`; the set's own keys only with
 * `sensors`; then the set's rules (validateSensorSet's messages). Paths relative to the loop.
 */
export function sensorKeyIssues(loop: LoopSensorKeys): Issue[] {
  if (loop.sensor !== undefined && loop.sensors !== undefined) {
    return [{ path: ['sensors'], message: 'give sensor (one id) or sensors (a list), not both' }];
  }
  if (loop.sensor === undefined && loop.sensors === undefined) {
    return [{ path: ['sensor'], message: 'required: give sensor (one id) or sensors (a list)' }];
  }
  if (loop.sensors === undefined) {
    return (['combine', 'minHealthy', 'outlierLimit'] as const)
      .filter((key) => loop[key] !== undefined)
      .map((key) => ({
        path: [key],
        message: 'only with sensors (a list): one sensor has nothing to combine',
      }));
  }
  return validateSensorSet(sensorSetOf(loop)!);
}
