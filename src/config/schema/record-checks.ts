/** The references of a loop's `record` list (schema/record.ts), as rules of references.ts. */
import { BREWFATHER_VALUE_FIELDS } from './brewfather.js';
import { unknownRef } from './did-you-mean.js';
import type { RawConfig } from './file.js';
import { recordedSeriesOf } from './record.js';
import { loopSensorIds } from './sensor-set.js';

type Issue = (path: (string | number)[], message: string) => void;

/**
 * Every recorded sensor exists and is recorded once; none is the loop's own sensor (its values
 * are the history's measured already); labels differ (they name the chart's lines and the
 * metrics' series). Another loop's sensor, an interlock or a feedforward sensor may be recorded.
 */
export function recordedSensorsAreKnown(config: RawConfig, issue: Issue): void {
  for (const [loopId, loop] of Object.entries(config.loops)) {
    const own = loopSensorIds(loop);
    const sensors = new Set<string>();
    const labels = new Set<string>();
    recordedSeriesOf(loop).forEach(({ sensor, label }, index) => {
      const entry = loop.record?.[index];
      const path = ['loops', loopId, 'record', index, ...(typeof entry === 'string' ? [] : ['sensor'])];
      if (!Object.hasOwn(config.sensors, sensor))
        issue(path, unknownRef('sensor', sensor, Object.keys(config.sensors)));
      else if (own.includes(sensor)) {
        issue(path, `"${sensor}" is the loop's own sensor: its values are in the history already`);
      } else if (sensors.has(sensor)) issue(path, `sensor "${sensor}" is recorded twice`);
      else if (labels.has(label)) {
        issue(['loops', loopId, 'record', index], `label "${label}" is already another recorded series'`);
      }
      sensors.add(sensor);
      labels.add(label);
    });
  }
}

/**
 * A Brewfather stream posts a temperature loop's values, and its fields name sensors the loop
 * records (they are sampled only when recorded).
 */
export function brewfatherFieldsAreRecorded(config: RawConfig, issue: Issue): void {
  for (const [loopId, loop] of Object.entries(config.loops)) {
    const stream = loop.brewfather;
    if (!stream) continue;
    const path = ['loops', loopId, 'brewfather'];
    if ((loop.quantity ?? 'temperature') !== 'temperature') {
      issue(path, `a Brewfather stream posts a temperature; this loop regulates ${loop.quantity}`);
    }
    const recorded = recordedSeriesOf(loop).map((series) => series.sensor);
    for (const field of BREWFATHER_VALUE_FIELDS) {
      const sensor = stream[field];
      if (sensor === undefined || recorded.includes(sensor)) continue;
      issue([...path, field], `"${sensor}" is not recorded by this loop: add it to loops.${loopId}.record`);
    }
  }
}
