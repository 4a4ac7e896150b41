/**
 * Whether a loop's sensor can give an autotune the readings it needs. The relay experiment
 * switches when the value crosses its band (a few tenths of a degree) and fits the curve between
 * switches, so it needs a steady stream of readings: a probe that reports only on a 0.5 °C change
 * (a Zigbee probe: liveness) sends none inside the band, and one that reports every few minutes
 * delays each switch by up to a period, a dead time the fit would take for the plant's. Such a
 * run would wait forever or fit nonsense: it is refused at start with the reason, and a running
 * one whose reading goes quiet ends at once. Pure.
 */
import type { LoopSpec, SensorCadence } from '../loop-spec.js';
import type { ReadingVerdict } from '../sensor-health.js';
import type { Reading } from '../types.js';

/**
 * The longest a sensor may take between readings for an autotune, ms. 60 s is the MQTT kind's
 * default period; the noise phase's 12 readings then take 12 min, and a switch comes at most a
 * minute late, short against the dead time of any plant worth a relay experiment on a Pi.
 */
export const AUTOTUNE_READING_EVERY_MS = 60_000;

const NEED = `autotune needs a reading at least every ${AUTOTUNE_READING_EVERY_MS / 1000} s`;

/** Why the loop's sensors cannot feed an autotune, or undefined when they can. */
export function readingCadenceProblem(spec: LoopSpec, reading: Reading | undefined): string | undefined {
  const sensors: SensorCadence[] = spec.sensorCadence ?? [];
  const onChange = sensors.find((sensor) => sensor.reportsOnChange);
  if (onChange !== undefined) return onChangeProblem(onChange.sensorId);
  // A reading that carries liveness comes from a device that reports on change, whatever the spec says.
  if (reading?.liveness !== undefined) return onChangeProblem(sensors[0]?.sensorId ?? 'of the loop');
  const slow = sensors.find((sensor) => sensor.periodMs > AUTOTUNE_READING_EVERY_MS);
  if (slow === undefined) return undefined;
  return (
    `${NEED}; sensor ${slow.sensorId} reports every ${slow.periodMs / 1000} s (periodS): ` +
    `lower its periodS to ${AUTOTUNE_READING_EVERY_MS / 1000} or less if the device can report that often`
  );
}

/** Why a running autotune must end now: its reading is quiet (kept in force by liveness only). */
export function quietReadingProblem(verdict: ReadingVerdict | undefined): string | undefined {
  if (verdict?.ok !== true || verdict.quiet === undefined) return undefined;
  return `the sensor went quiet (${verdict.quiet}): ${NEED}`;
}

function onChangeProblem(sensorId: string): string {
  return `${NEED}; sensor ${sensorId} reports only on change (liveness): use a sensor that reports periodically`;
}
