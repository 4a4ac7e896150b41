import { Gauge, type Registry } from 'prom-client';

/** A recorded series' value now (src/daemon/recorded-values.ts). */
export interface RecordedMetricValue {
  loop: string;
  sensor: string;
  unit: string;
  value: number;
}

/**
 * `homeostat_recorded_value{loop,sensor,unit}`: the latest value of each sensor a loop records
 * without regulating (loops.<id>.record), read at scrape time. As for the loops' gauges, an
 * unknown value is an absent series, never NaN: a recorded sensor that is stale, reads NaN or
 * has not read yet has no sample; a loop or series removed from the config disappears at once.
 */
export function defineRecordedGauge(
  registry: Registry,
  read: () => readonly RecordedMetricValue[] | undefined,
): void {
  new Gauge({
    name: 'homeostat_recorded_value',
    help: "Latest value of a sensor a loop records without regulating on it (loops.<id>.record), in the series' unit",
    labelNames: ['loop', 'sensor', 'unit'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { loop, sensor, unit, value } of read() ?? []) {
        if (Number.isFinite(value)) this.set({ loop, sensor, unit }, value);
      }
    },
  });
}
