import type { Logger } from 'pino';
import { recordedSeriesOf } from '../config/schema/record.js';
import type { Config } from '../config/schema.js';
import type { Reading } from '../core/types.js';
import type { StateStore } from '../store/state-store.js';
import type { Clock } from '../time/clock.js';

/** A recorded series' value now, as /metrics exports it. */
export interface RecordedValueNow {
  loop: string;
  sensor: string;
  label: string;
  unit: string;
  value: number;
}

/**
 * Values of the sensors loops record without regulating (loops.<id>.record). Fed by the
 * sampler's readings (each sensor on its own period, off the control path), buffered in the
 * StateStore for its next flush. Nothing here reaches a loop's cycle: a recorded sensor that
 * fails, goes stale or reads NaN never sends a loop safe nor shows in its SensorHealthy; a
 * non-finite value is stored as a gap, a sensor that stops reading leaves one (the API breaks
 * the line where points are further apart than the sensor's staleAfterS).
 */
export class RecordedValues {
  /** Last reading stored per `loop\0sensor`: a reading seen twice is stored once. */
  private readonly last = new Map<string, Reading>();

  /** `store.state` is read at each use: the store may move to another database. */
  constructor(
    private readonly config: () => Config,
    private readonly store: { readonly state: Pick<StateStore, 'addRecorded'> },
    private readonly clock: Pick<Clock, 'nowMs'>,
    private readonly logger: Logger,
  ) {}

  /** Called with every reading the sampler takes; never throws (it must not stop sampling). */
  reading(sensorId: string, reading: Reading): void {
    try {
      for (const loop of this.loopsRecording(sensorId)) {
        const key = `${loop}\u0000${sensorId}`;
        if (this.last.get(key)?.atMs === reading.atMs) continue;
        this.last.set(key, reading);
        const value = Number.isFinite(reading.value) ? reading.value : null;
        this.store.state.addRecorded(loop, sensorId, { atMs: reading.atMs, value });
      }
    } catch (error) {
      this.logger.error({ err: error, sensor: sensorId }, 'could not buffer a recorded value');
    }
  }

  /**
   * Each recorded series' latest value now (for /metrics): only fresh ones (no older than the
   * sensor's staleAfterS) and numbers; a series without one is left out, never NaN.
   */
  current(): RecordedValueNow[] {
    const config = this.config();
    const nowMs = this.clock.nowMs();
    return Object.entries(config.loops).flatMap(([loop, loopConfig]) =>
      recordedSeriesOf(loopConfig).flatMap(({ sensor, label, unit }) => {
        const reading = this.last.get(`${loop}\u0000${sensor}`);
        const staleAfterMs = (config.sensors[sensor]?.staleAfterS ?? 0) * 1000;
        const fresh = reading !== undefined && nowMs - reading.atMs <= staleAfterMs;
        return fresh && Number.isFinite(reading.value)
          ? [{ loop, sensor, label, unit, value: reading.value }]
          : [];
      }),
    );
  }

  private loopsRecording(sensorId: string): string[] {
    return Object.entries(this.config().loops)
      .filter(([, loop]) => recordedSeriesOf(loop).some((series) => series.sensor === sensorId))
      .map(([id]) => id);
  }
}
