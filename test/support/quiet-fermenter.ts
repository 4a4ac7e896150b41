/**
 * The quiet-sensor scenario, shared by test/daemon-quiet-sensor.test.ts and
 * test/bench/quiet.ts: the demo's fermenter (config/demo.yaml: plant `chamber`, heater and
 * cooler relays, loop `fermenter`) read through a Zigbee probe that reports only on change, in a
 * real Daemon on a ManualClock with a fake MQTT transport. Not a test file itself.
 *
 * The probe publishes what Zigbee2MQTT publishes for a battery temperature/humidity sensor:
 * - its state on `zigbee2mqtt/fermenter_probe`, a JSON object of the device's exposes
 *   (temperature, humidity, battery, voltage, linkquality) with `last_seen` when Zigbee2MQTT's
 *   `advanced.last_seen` is `ISO_8601` (zigbee2mqtt.io, guide/usage/mqtt_topics_and_messages
 *   and guide/configuration/other-options), when the temperature moved by at least 0.5 °C since
 *   its last report, or else about hourly (Aqara, Sonoff SNZB-02 "report on a
 *   0.3–0.5 °C change or about hourly"; an Aqara device checks in about hourly and Zigbee2MQTT
 *   republishes its whole state each time, see src/kinds/sensors/mqtt-binary.ts); here every
 *   50 min, inside maxQuietS' default 90 min (a run may leave the check-in out);
 * - its availability on `zigbee2mqtt/fermenter_probe/availability`, retained, `{"state":"online"}`
 *   or `{"state":"offline"}` (zigbee2mqtt.io, guide/configuration/device-availability). For a
 *   battery ("passive") device Zigbee2MQTT says offline only after its timeout (25 h by
 *   default), so a probe that dies usually goes silent with its availability still online.
 */
import assert from 'node:assert/strict';
import type { LoopStatus } from '../../src/core/status.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import { buildDrivers, type Drivers } from '../../src/kinds/build.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { FakeTransport } from '../drivers/mqtt/fake-transport.js';
import { demoConfigText, validConfig } from './config.js';
import { memoryDaemon } from './store.js';

export const PROBE_TOPIC = 'zigbee2mqtt/fermenter_probe';
export const AVAILABILITY_TOPIC = `${PROBE_TOPIC}/availability`;
/** The probe reports when the temperature moved this much since its last report, °C. */
export const REPORT_STEP_C = 0.5;
/** The probe's report when nothing changed ("about hourly"), ms; a run may say none. */
export const HEARTBEAT_MS = 50 * 60_000;
/** How often the probe measures (it reports only some of these), ms. */
export const PROBE_TICK_MS = 10_000;
/** The daemon's resync: a loop cycles at least this often (daemon.ts, resyncMs default). */
export const ONE_CYCLE_MS = 30_000;
/** The liveness block's maxQuietS when not given (src/kinds/sensors/mqtt-liveness.ts). */
export const MAX_QUIET_MS = 5_400_000;
export const HOUR_MS = 3_600_000;
const START_MS = Date.UTC(2026, 0, 1);

/** One loop cycle as its status said. */
export interface CycleRecord {
  atMs: number;
  /** Every actuator held at its safe state (Faulted True). */
  safe: boolean;
  faultReason: string;
  healthy: 'True' | 'False' | 'Unknown';
  healthyReason: string;
  healthyMessage: string;
  wanted: Record<string, number>;
}

/** What a run counted, from the first report on. */
export interface QuietCounts {
  cycles: number;
  /** Cycles with every actuator held safe. */
  safeCycles: number;
  /** SensorHealthy going from True to False. */
  healthyFlaps: number;
  /** Simulated time spent safe, ms. */
  safeMs: number;
  /** Messages the probe published on its state topic. */
  reports: number;
}

/**
 * The demo's fermenter alone, its sensor a Zigbee probe over MQTT, with or without liveness;
 * at the demo's setpoint (18 °C, below the cellar: the cooler works) unless `setpointC`.
 */
export function quietFermenterConfigText(withLiveness: boolean, setpointC?: number): string {
  return demoConfigText((doc) => {
    for (const path of [
      ['loops', 'room'],
      ['loops', 'greenhouse_humidity'],
      ['sensors', 'room_temp'],
      ['sensors', 'greenhouse_rh'],
      ['sensors', 'chamber_temp'],
      ['actuators', 'room_heater'],
      ['actuators', 'fogger'],
      ['simulation', 'plants', 'room'],
      ['simulation', 'plants', 'greenhouse_air'],
    ]) {
      doc.deleteIn(path);
    }
    doc.setIn(['sensors', 'fermenter_probe'], {
      kind: 'mqtt',
      topic: PROBE_TOPIC,
      field: 'temperature',
      // periodS 60 and staleAfterS 180 (3 × periodS): the kind's defaults, the "before" figure.
      ...(withLiveness
        ? { liveness: { preset: 'zigbee2mqtt', device: PROBE_TOPIC, lastSeenField: 'last_seen' } }
        : {}),
    });
    doc.setIn(['loops', 'fermenter', 'sensor'], 'fermenter_probe');
    // A steady fermenter: the beer is at the setpoint (18 °C) when the day starts.
    doc.setIn(['simulation', 'plants', 'chamber', 'initial'], 18);
    if (setpointC !== undefined) doc.setIn(['loops', 'fermenter', 'setpoint'], setpointC);
  });
}

/** The fermenter in a started Daemon, the probe played on its plant; time moves only by `runFor`. */
export class QuietFermenter {
  readonly clock = new ManualClock(START_MS);
  readonly transport = new FakeTransport();
  readonly cycles: CycleRecord[] = [];
  reports = 0;
  /** The probe's state: reporting, silent (dead without a word), or said offline. */
  probe: 'reporting' | 'silent' | 'offline' = 'reporting';
  lastReport: { atMs: number; temperatureC: number } | undefined;
  private daemon: Daemon | undefined;
  private drivers: Drivers | undefined;

  /** The probe's report when nothing changed, ms; null: none, only on change. */
  readonly heartbeatMs: number | null;
  private readonly setpointC: number | undefined;

  constructor(
    readonly withLiveness: boolean,
    opts: { heartbeatMs?: number | null; setpointC?: number } = {},
  ) {
    this.heartbeatMs = opts.heartbeatMs === undefined ? HEARTBEAT_MS : opts.heartbeatMs;
    this.setpointC = opts.setpointC;
  }

  async start(): Promise<void> {
    const text = quietFermenterConfigText(this.withLiveness, this.setpointC);
    const config = validConfig(text);
    this.drivers = buildDrivers(config, () => this.clock.nowMs(), { mqtt: this.transport });
    this.daemon = memoryDaemon(config, this.drivers, this.clock, text);
    this.daemon.subscribe({ status: (status) => this.record(status) });
    await this.daemon.start();
    this.availability('online');
    this.report(this.temperatureC());
    await this.clock.advance(0);
  }

  async stop(): Promise<void> {
    await this.daemon?.stop();
  }

  /** Moves time by `ms` in probe ticks, the probe measuring and reporting as it would. */
  async runFor(ms: number): Promise<void> {
    const endMs = this.clock.nowMs() + ms;
    while (this.clock.nowMs() < endMs) {
      await this.clock.advance(Math.min(PROBE_TICK_MS, endMs - this.clock.nowMs()));
      this.tick();
      await this.clock.advance(0);
    }
  }

  /** The probe dies without a word: no more reports, availability stays online (retained). */
  goSilent(): void {
    this.probe = 'silent';
  }

  /** Zigbee2MQTT says the probe is offline. */
  async goOffline(): Promise<void> {
    this.probe = 'offline';
    this.availability('offline');
    await this.clock.advance(0);
  }

  nowMs(): number {
    return this.clock.nowMs();
  }

  /** The chamber's true temperature now, °C. */
  temperatureC(): number {
    const plant = this.drivers?.plants.get('chamber');
    assert.ok(plant, 'the chamber plant exists once its relays are built');
    return plant.valueAt(this.clock.nowMs());
  }

  /** Counts over the cycles from `fromMs` (default: the first report) to now. */
  counts(fromMs = START_MS): QuietCounts {
    const cycles = this.cycles.filter((c) => c.atMs >= fromMs);
    let healthyFlaps = 0;
    let safeMs = 0;
    cycles.forEach((cycle, i) => {
      const before = cycles[i - 1];
      if (before?.healthy === 'True' && cycle.healthy === 'False') healthyFlaps++;
      const nextAtMs = cycles[i + 1]?.atMs ?? this.clock.nowMs();
      if (cycle.safe) safeMs += nextAtMs - cycle.atMs;
    });
    return {
      cycles: cycles.length,
      safeCycles: cycles.filter((c) => c.safe).length,
      healthyFlaps,
      safeMs,
      reports: this.reports,
    };
  }

  private tick(): void {
    if (this.probe !== 'reporting') return;
    const temperatureC = this.temperatureC();
    const last = this.lastReport ?? { atMs: Number.NEGATIVE_INFINITY, temperatureC: Number.NaN };
    const changed = !(Math.abs(temperatureC - last.temperatureC) < REPORT_STEP_C);
    const due = this.heartbeatMs !== null && this.clock.nowMs() - last.atMs >= this.heartbeatMs;
    if (changed || due) this.report(temperatureC);
  }

  private report(temperatureC: number): void {
    const rounded = Math.round(temperatureC * 100) / 100; // Zigbee2MQTT's 2 decimals
    const state = {
      battery: 97,
      humidity: 61.2,
      linkquality: 116,
      temperature: rounded,
      voltage: 2995,
      last_seen: new Date(this.clock.nowMs()).toISOString(),
    };
    this.transport.deliver(PROBE_TOPIC, JSON.stringify(state));
    this.reports++;
    this.lastReport = { atMs: this.clock.nowMs(), temperatureC };
  }

  private availability(state: 'online' | 'offline'): void {
    this.transport.deliver(AVAILABILITY_TOPIC, JSON.stringify({ state }), { retain: true });
  }

  private record(status: LoopStatus): void {
    if (status.loop !== 'fermenter') return;
    const condition = (type: string) => status.conditions.find((c) => c.type === type);
    const healthy = condition('SensorHealthy');
    const faulted = condition('Faulted');
    this.cycles.push({
      atMs: status.updatedAtMs,
      safe: faulted?.status === 'True',
      faultReason: faulted?.reason ?? '',
      healthy: healthy?.status ?? 'Unknown',
      healthyReason: healthy?.reason ?? '',
      healthyMessage: healthy?.message ?? '',
      wanted: Object.fromEntries(Object.entries(status.actuators).map(([id, a]) => [id, a.wanted])),
    });
  }
}

/** The 24-hour figures, with and without liveness: the bench's table and the test's before/after. */
export async function quietDay(
  withLiveness: boolean,
  hours = 24,
  heartbeatMs: number | null = HEARTBEAT_MS,
): Promise<QuietCounts> {
  const fermenter = new QuietFermenter(withLiveness, { heartbeatMs });
  await fermenter.start();
  const fromMs = fermenter.nowMs();
  await fermenter.runFor(hours * HOUR_MS);
  await fermenter.stop();
  return fermenter.counts(fromMs);
}
