import type { Logger } from 'pino';
import { recordedSeriesOf } from '../config/schema/record.js';
import type { Config } from '../config/schema.js';
import type { Reading } from '../core/types.js';
import type { StateStore } from '../store/state-store.js';

/**
 * Values of the sensors loops record without regulating (loops.<id>.record). Fed by the
 * sampler's readings (each sensor on its own period, off the control path), buffered in the
 * StateStore for its next flush. Nothing here reaches a loop's cycle: a recorded sensor that
 * fails, goes stale or reads NaN never sends a loop safe nor shows in its SensorHealthy; a
 * non-finite value is stored as a gap, a sensor that stops reading leaves one (the API breaks
 * the line where points are further apart than the sensor's staleAfterS).
 */
export class RecordedValues {
  /** Last reading time stored per `loop\0sensor`: a reading seen twice is stored once. */
  private readonly lastAtMs = new Map<string, number>();

  constructor(
    private readonly deps: {
      config: () => Config;
      state: () => Pick<StateStore, 'addRecorded'>;
      logger: Logger;
    },
  ) {}

  /** Called with every reading the sampler takes; never throws (it must not stop sampling). */
  reading(sensorId: string, reading: Reading): void {
    try {
      for (const loop of this.loopsRecording(sensorId)) {
        const key = `${loop}\u0000${sensorId}`;
        if (this.lastAtMs.get(key) === reading.atMs) continue;
        this.lastAtMs.set(key, reading.atMs);
        const value = Number.isFinite(reading.value) ? reading.value : null;
        this.deps.state().addRecorded(loop, sensorId, { atMs: reading.atMs, value });
      }
    } catch (error) {
      this.deps.logger.error({ err: error, sensor: sensorId }, 'could not buffer a recorded value');
    }
  }

  private loopsRecording(sensorId: string): string[] {
    return Object.entries(this.deps.config().loops)
      .filter(([, loop]) => recordedSeriesOf(loop).some((series) => series.sensor === sensorId))
      .map(([id]) => id);
  }
}
