import { roundHundredths } from './numbers.js';
import {
  COMBINE_METHODS,
  type DroppedSensor,
  type DropReason,
  MAX_SET_SENSORS,
  type SensorSetResult,
  type SensorSetSpec,
} from './sensor-set.js';

/** A sensor set's text for people: config errors (validateSensorSet) and a status line. */

/** A problem with a sensor set; the path is relative to the loop (`loops.<id>.` + path). */
export interface SensorSetIssue {
  path: Array<string | number>;
  message: string;
}

/**
 * The rules combineReadings relies on, for the config layer. combineReadings stays safe without
 * them (duplicates count once, minHealthy is at least 1), but such a config is a mistake a person
 * should hear about before the loop silently never regulates.
 */
export function validateSensorSet(spec: SensorSetSpec): SensorSetIssue[] {
  const issues: SensorSetIssue[] = [];
  if (spec.sensors.length === 0)
    issues.push({ path: ['sensors'], message: 'at least one sensor is required' });
  if (spec.sensors.length > MAX_SET_SENSORS) {
    issues.push({
      path: ['sensors'],
      message: `at most ${MAX_SET_SENSORS} sensors in one loop (${spec.sensors.length} listed)`,
    });
  }
  spec.sensors.forEach((sensor, index) => {
    const first = spec.sensors.indexOf(sensor);
    if (first !== index) {
      issues.push({
        path: ['sensors', index],
        message: `sensor "${sensor}" is already listed at sensors.${first} (a sensor counts once)`,
      });
    }
  });
  if (!COMBINE_METHODS.includes(spec.combine)) {
    issues.push({ path: ['combine'], message: `must be one of ${COMBINE_METHODS.join(', ')}` });
  }
  const distinct = new Set(spec.sensors).size;
  if (!Number.isInteger(spec.minHealthy) || spec.minHealthy < 1) {
    issues.push({ path: ['minHealthy'], message: 'must be a whole number, at least 1' });
  } else if (spec.minHealthy > distinct) {
    issues.push({
      path: ['minHealthy'],
      message: `${spec.minHealthy} is more than the ${distinct} sensor(s) listed: the loop could never regulate`,
    });
  }
  const limit = spec.outlierLimit;
  if (limit !== undefined && !(Number.isFinite(limit) && limit > 0)) {
    issues.push({ path: ['outlierLimit'], message: 'must be a number above 0 (loop unit)' });
  }
  return issues;
}

/**
 * One line for the status and the dashboard, e.g.
 * `median of 3 (dropped probe-2: 4.8 °C from the others)`, `first of 2: b (dropped a: stale)`.
 * @param unit the loop's unit (config `loops.<id>.unit`), '' for none.
 */
export function describeSensorSet(spec: SensorSetSpec, result: SensorSetResult, unit: string): string {
  const count = new Set(spec.sensors).size;
  const dropped =
    result.dropped.length > 0
      ? ` (dropped ${result.dropped.map((d) => droppedText(d, unit)).join(', ')})`
      : '';
  if (!result.verdict.ok) {
    // When the set fails nothing is used: every sensor not dropped was healthy.
    const healthy = count - result.dropped.length;
    return `no reading: ${healthy} of ${count} healthy, ${Math.max(1, spec.minHealthy)} needed${dropped}`;
  }
  const which = spec.combine === 'first' ? `: ${result.used.join(', ')}` : '';
  return `${spec.combine} of ${count}${which}${dropped}`;
}

const PLAIN: Record<Exclude<DropReason, 'Outlier' | 'Disagree'>, string> = {
  Missing: 'missing',
  Stale: 'stale',
  Offline: 'device offline',
  NotFinite: 'not a number',
  Implausible: 'implausible',
};

function droppedText(d: DroppedSensor, unit: string): string {
  const distance = d.distance === undefined ? '' : `${roundHundredths(d.distance)}${unit ? ` ${unit}` : ''}`;
  if (d.reason === 'Outlier') return `${d.sensor}: ${distance} from the others`;
  if (d.reason === 'Disagree') return `${d.sensor}: disagrees by ${distance}`;
  return `${d.sensor}: ${PLAIN[d.reason]}`;
}
