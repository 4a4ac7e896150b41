import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { LoopStatus } from '../core/status.js';
import type { Condition } from '../core/types.js';
import { homeostatVersion } from '../version.js';
import { type AlertChannelFigures, defineAlertMetrics } from './alert-metrics.js';
import { defineRecordedGauge, type RecordedMetricValue } from './recorded-metrics.js';

/**
 * The daemon's Prometheus metrics (`GET /metrics`), in a registry of its own (never prom-client's
 * global one: several nodes in one process, as in tests, must not share series). Choices:
 * - The node id is no label on every series: `homeostat_node_info{node,version} 1` carries it.
 * - An unknown value is an absent series, never NaN: a loop whose reading is missing, stale or
 *   implausible has no `homeostat_loop_measured` sample (Prometheus marks it stale) and
 *   `homeostat_loop_condition{type="SensorHealthy"}` says why; a NaN would silently poison sums,
 *   averages and alert comparisons.
 * - `measured` and `setpoint` carry the loop's unit (config `loops.<id>.unit`) as a label, so
 *   `homeostat_loop_measured - homeostat_loop_setpoint` matches series without `on(loop)`.
 * - Nothing here throws into the regulation path: every update and collector is guarded.
 */

/** Buckets of homeostat_cycle_duration_seconds: 0.1 ms … 1 s, 1-2.5-5 per decade. */
export const CYCLE_DURATION_BUCKETS_S = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** The `loop` label of commands for a loop this registry has no status of (bounded cardinality). */
export const UNKNOWN_LOOP_LABEL = '(unknown)';

export interface NodeMetricsOptions {
  nodeId: string;
  /** prom-client's default process and Node.js metrics, standard names (process_…, nodejs_…). Default true. */
  collectProcess?: boolean;
  /** The `version` label of homeostat_node_info; default the package's version. */
  version?: string;
  /** A loop's unit (config `loops.<id>.unit`), '' for none; read at every loopStatus. Default ''. */
  unitOf?: (loop: string) => string;
  /** Told (once per kind) when a metric update or collector fails; metrics never throw. */
  logger?: Pick<Logger, 'warn'>;
}

/** Read at scrape time. A collector that is absent, throws or answers undefined exports no series. */
export interface MetricsCollectors {
  /** undefined: MQTT is not configured (no series). */
  mqttConnected?: () => boolean | undefined;
  /** Storage operations that failed since start (monotonic). */
  storageFailedOperations?: () => number;
  storageHealthy?: () => boolean;
  /** HTTP: wrong API tokens (compared and refused 401) since start (src/http/guards.ts). */
  httpAuthFailures?: () => number;
  /** HTTP: requests refused 429 because their address was locked out, since start. */
  httpAuthThrottled?: () => number;
  /** HTTP: addresses locked out by the wrong-token throttle now. */
  httpLockedOutAddresses?: () => number;
  /** HTTP: connections closed to make room for another address's, and newcomers refused, since start. */
  httpConnectionsEvicted?: () => number;
  httpConnectionsRefused?: () => number;
  /** The fresh values of the sensors loops record (homeostat_recorded_value). */
  recordedValues?: () => readonly RecordedMetricValue[];
  /** Each alert channel's figures (homeostat_alerts_…). */
  alerts?: () => readonly AlertChannelFigures[];
}

/** What this registry exported for a loop, so it can remove exactly those series. */
interface LoopSeries {
  unit: string | undefined;
  conditions: Set<string>;
  /** `source\u0000result` of the commands counted for the loop. */
  commands: Set<string>;
}

type LoopGauges = ReturnType<typeof defineLoopMetrics>;

const CONDITION_VALUES: Record<Condition['status'], number> = { True: 1, False: 0, Unknown: -1 };

export class NodeMetrics {
  readonly #registry = new Registry();
  readonly #loops: LoopGauges;
  readonly #series = new Map<string, LoopSeries>();
  readonly #unitOf: (loop: string) => string;
  readonly #logger: Pick<Logger, 'warn'> | undefined;
  readonly #reported = new Set<string>();
  #collectors: MetricsCollectors = {};

  constructor(opts: NodeMetricsOptions) {
    this.#unitOf = opts.unitOf ?? (() => '');
    this.#logger = opts.logger;
    const info = new Gauge({
      name: 'homeostat_node_info',
      help: 'Always 1: which node and homeostat version this is',
      labelNames: ['node', 'version'],
      registers: [this.#registry],
    });
    info.set({ node: opts.nodeId, version: opts.version ?? homeostatVersion() }, 1);
    this.#loops = defineLoopMetrics(this.#registry);
    this.#defineScrapeGauges();
    this.#defineHttpGuardMetrics();
    defineRecordedGauge(
      this.#registry,
      () => this.#read('recordedValues') as RecordedMetricValue[] | undefined,
    );
    defineAlertMetrics(this.#registry, () => this.#read('alerts') as AlertChannelFigures[] | undefined);
    if (opts.collectProcess ?? true) collectDefaultMetrics({ register: this.#registry });
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  /** The metrics in Prometheus text format; collectors are read now. */
  render(): Promise<string> {
    return this.#registry.metrics();
  }

  /** After each cycle: the loop's gauges from its status. */
  loopStatus(status: LoopStatus): void {
    this.#safely('loopStatus', () => {
      const { loop } = status;
      const series = this.#seriesOf(loop);
      const unit = this.#unitOf(loop);
      const g = this.#loops;
      if (series.unit !== undefined && series.unit !== unit) {
        g.measured.remove({ loop, unit: series.unit });
        g.setpoint.remove({ loop, unit: series.unit });
      }
      series.unit = unit;
      setOrRemove(g.measured, { loop, unit }, status.measured);
      setOrRemove(g.setpoint, { loop, unit }, status.setpoint);
      setOrRemove(g.output, { loop }, status.output);
      setOrRemove(g.generation, { loop }, status.generation);
      setOrRemove(g.observedGeneration, { loop }, status.observedGeneration);
      const faulted = status.conditions.find((condition) => condition.type === 'Faulted');
      setOrRemove(g.faulted, { loop }, faulted && (faulted.status === 'True' ? 1 : 0));
      this.#conditions(loop, series, status.conditions);
    });
  }

  /** One cycle's duration (ms, wall time, failed cycles too). */
  cycleDuration(loop: string, durationMs: number): void {
    this.#safely('cycleDuration', () => {
      if (!Number.isFinite(durationMs) || durationMs < 0) return;
      this.#seriesOf(loop);
      this.#loops.cycleDuration.observe({ loop }, durationMs / 1000);
    });
  }

  /**
   * A command answered (MQTT, HTTP, CLI…). `refusal` is not a label: it is free text and would
   * make one series per message. A loop with no status here (a typo in a topic or URL) counts
   * under loop="(unknown)", so user input cannot grow the series without bound.
   */
  command(source: string, loop: string, accepted: boolean, _refusal?: string): void {
    this.#safely('command', () => {
      const result = accepted ? 'accepted' : 'rejected';
      const series = this.#series.get(loop);
      const label = series ? loop : UNKNOWN_LOOP_LABEL;
      series?.commands.add(`${source}\u0000${result}`);
      this.#loops.commands.inc({ source, loop: label, result });
    });
  }

  /** A reload removed the loop: every series it had goes (a status after this brings them back). */
  removeLoop(loop: string): void {
    this.#safely('removeLoop', () => {
      const series = this.#series.get(loop);
      if (!series) return;
      const g = this.#loops;
      if (series.unit !== undefined) {
        g.measured.remove({ loop, unit: series.unit });
        g.setpoint.remove({ loop, unit: series.unit });
      }
      for (const gauge of [g.output, g.generation, g.observedGeneration, g.faulted]) gauge.remove({ loop });
      for (const type of series.conditions) g.condition.remove({ loop, type });
      for (const key of series.commands) {
        const [source, result] = key.split('\u0000');
        g.commands.remove({ source, loop, result });
      }
      g.cycleDuration.remove({ loop });
      this.#series.delete(loop);
    });
  }

  /** Replaces the collectors named in `c` (the others are kept); they are read at each scrape. */
  setCollectors(c: MetricsCollectors): void {
    this.#collectors = { ...this.#collectors, ...c };
  }

  #seriesOf(loop: string): LoopSeries {
    let series = this.#series.get(loop);
    if (!series) {
      series = { unit: undefined, conditions: new Set(), commands: new Set() };
      this.#series.set(loop, series);
    }
    return series;
  }

  /** One series per condition type the status has; a type it no longer has is removed. */
  #conditions(loop: string, series: LoopSeries, conditions: Condition[]): void {
    const now = new Set<string>();
    for (const { type, status } of conditions) {
      now.add(type);
      setOrRemove(this.#loops.condition, { loop, type }, CONDITION_VALUES[status]);
    }
    for (const type of series.conditions) if (!now.has(type)) this.#loops.condition.remove({ loop, type });
    series.conditions = now;
  }

  /** Gauges whose value is read from the collectors at scrape time. */
  #defineScrapeGauges(): void {
    const flag = (value: unknown) => (typeof value === 'boolean' ? Number(value) : undefined);
    this.#scrapedGauge(
      'homeostat_mqtt_connected',
      '1 while connected to the MQTT broker; absent when MQTT is not configured',
      'mqttConnected',
      flag,
    );
    this.#scrapedTotal(
      'homeostat_storage_failed_operations_total',
      'Database operations that failed since the daemon started',
      'storageFailedOperations',
    );
    this.#scrapedGauge(
      'homeostat_storage_healthy',
      '1 while the database accepts writes, 0 when it refuses them',
      'storageHealthy',
      flag,
    );
  }

  #defineHttpGuardMetrics(): void {
    this.#scrapedTotal(
      'homeostat_http_auth_failures_total',
      'HTTP requests with a wrong API token (refused 401) since the daemon started',
      'httpAuthFailures',
    );
    this.#scrapedTotal(
      'homeostat_http_auth_throttled_total',
      'HTTP requests refused 429 because their address sent too many wrong tokens, since start',
      'httpAuthThrottled',
    );
    this.#scrapedTotal(
      'homeostat_http_connections_evicted_total',
      "HTTP connections closed to make room for a newcomer (the busiest address's longest waiting)",
      'httpConnectionsEvicted',
    );
    this.#scrapedTotal(
      'homeostat_http_connections_refused_total',
      'HTTP connections refused at once: their address, or the pool, held nothing that could be closed',
      'httpConnectionsRefused',
    );
    this.#scrapedGauge(
      'homeostat_http_locked_out_addresses',
      'Addresses whose API token checks are refused now (too many wrong tokens)',
      'httpLockedOutAddresses',
      (count) => (typeof count === 'number' ? count : undefined),
    );
  }

  /** A gauge set at scrape time from a collector (absent while `value` makes nothing of it). */
  #scrapedGauge(
    name: string,
    help: string,
    collector: keyof MetricsCollectors,
    value: (read: unknown) => number | undefined,
  ): void {
    const metrics = this;
    new Gauge({
      name,
      help,
      registers: [this.#registry],
      collect() {
        setOrRemove(this, {}, value(metrics.#read(collector)));
      },
    });
  }

  /** A counter whose total a collector keeps, read at scrape time (absent unless a count). */
  #scrapedTotal(name: string, help: string, collector: keyof MetricsCollectors): void {
    const metrics = this;
    new Counter({
      name,
      help,
      registers: [this.#registry],
      collect() {
        this.reset();
        const total = metrics.#read(collector);
        if (typeof total === 'number' && Number.isFinite(total) && total >= 0) this.inc(total);
        else this.remove();
      },
    });
  }

  /** The collector's answer, or undefined when it is absent or throws (the series is then absent). */
  #read(name: keyof MetricsCollectors): unknown {
    try {
      return this.#collectors[name]?.();
    } catch (error) {
      this.#report(`collector ${name}`, error);
      return undefined;
    }
  }

  #safely(what: string, update: () => void): void {
    try {
      update();
    } catch (error) {
      this.#report(what, error);
    }
  }

  /** Once per kind: a broken metric repeats every cycle, its log line need not. */
  #report(what: string, error: unknown): void {
    if (this.#reported.has(what)) return;
    this.#reported.add(what);
    try {
      this.#logger?.warn({ err: error }, `metrics: ${what} failed (reported once)`);
    } catch {
      // A logger that throws must not reach the regulation path either.
    }
  }
}

function defineLoopMetrics(registry: Registry) {
  const registers = [registry];
  const loop = (name: string, help: string) =>
    new Gauge<'loop'>({ name: `homeostat_loop_${name}`, help, labelNames: ['loop'], registers });
  const inUnit = (name: string, help: string) =>
    new Gauge<'loop' | 'unit'>({
      name: `homeostat_loop_${name}`,
      help,
      labelNames: ['loop', 'unit'],
      registers,
    });
  return {
    measured: inUnit('measured', 'Reading used by the last cycle; absent when missing or unhealthy'),
    setpoint: inUnit('setpoint', 'Desired value of the loop'),
    output: loop('output', 'Signed controller output -1..1: positive raises, negative lowers'),
    faulted: loop('faulted', '1 while the Faulted condition is True (actuators held safe)'),
    generation: loop('generation', 'Generation of the desired state'),
    observedGeneration: loop('observed_generation', 'Generation the loop has reconciled'),
    condition: new Gauge<'loop' | 'type'>({
      name: 'homeostat_loop_condition',
      help: 'Loop conditions: 1 True, 0 False, -1 Unknown',
      labelNames: ['loop', 'type'],
      registers,
    }),
    cycleDuration: new Histogram<'loop'>({
      name: 'homeostat_cycle_duration_seconds',
      help: 'Wall time of a loop cycle (observe, reconcile, act), failed cycles included',
      labelNames: ['loop'],
      buckets: CYCLE_DURATION_BUCKETS_S,
      registers,
    }),
    commands: new Counter<'source' | 'loop' | 'result'>({
      name: 'homeostat_commands_total',
      help: 'Commands answered, by source (mqtt, http, cli, homeassistant…) and result',
      labelNames: ['source', 'loop', 'result'],
      registers,
    }),
  };
}

/** Sets a finite value, or removes the series: an unknown value is an absent series, never NaN. */
function setOrRemove<L extends string>(
  gauge: Gauge<L>,
  labels: Partial<Record<L, string | number>>,
  value: number | undefined,
): void {
  if (typeof value === 'number' && Number.isFinite(value)) gauge.set(labels, value);
  else gauge.remove(labels);
}
