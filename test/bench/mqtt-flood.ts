/**
 * MQTT command flood benchmark (`npm run bench:mqtt-flood`; `-- --n 50000` for another number
 * of commands, `--json` for JSON only).
 *
 * Starts a private Mosquitto (test/integration/mosquitto.ts) and the daemon in-process on the
 * demo config (simulated plants, real clock, a real SQLite file in a temp dir, the MqttBridge
 * built by createMqttBridge as `homeostat run` builds it), waits until it publishes, then sends
 * N commands (default 20,000) as fast as one client can (QoS 1), a quarter each of:
 * a setpoint outside the limits, a setpoint that is not a number, a valid setpoint alternating
 * 20/21 (each a change: the rate limit applies), and a command for an unknown loop.
 *
 * Measures, before (5 s idle), during (until every command has its result) and after (10 s
 * idle) the flood: event-loop delay (perf_hooks.monitorEventLoopDelay, p50/p99/max ms), RSS
 * (MB; peak during), the longest gap between two cycles of the room loop (regulation must go
 * on), the rows added to the events table and the growth of the database files. Prints a table
 * and JSON; exits 1 if a command gets no result within FLOOD_TIMEOUT_MS. Targets: p99 < 50 ms
 * during the flood, RSS back near its level after it, a handful of event rows.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import pino from 'pino';
import { createMqttBridge, mqttSettings } from '../../src/commands/mqtt-setup.js';
import { parseConfigText } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import type { MqttBridge } from '../../src/mqtt/bridge.js';
import { RealClock } from '../../src/runtime/real-clock.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { StateStore } from '../../src/store/state-store.js';
import { demoConfigText, makeTempDir, sleep } from '../integration/helpers.js';
import { startMosquitto } from '../integration/mosquitto.js';

const BASE = 'homeostat/demo';
const IDLE_BEFORE_MS = 5_000;
const IDLE_AFTER_MS = 10_000;
/** Every command must have its result within this, ms. */
const FLOOD_TIMEOUT_MS = 120_000;
const START_TIMEOUT_MS = 15_000;

interface Phase {
  name: string;
  durationS: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  rssMb: number;
  rssPeakMb: number;
  /** Longest time between two cycles of the room loop in this phase, s. */
  longestCycleGapS: number;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const mb = (bytes: number) => round(bytes / 1024 / 1024);

function command(i: number): { topic: string; payload: string } {
  switch (i % 4) {
    case 0:
      return { topic: `${BASE}/room/setpoint/set`, payload: String(31 + (i % 500)) };
    case 1:
      return { topic: `${BASE}/room/setpoint/set`, payload: `warm-${i}` };
    case 2:
      return { topic: `${BASE}/room/setpoint/set`, payload: i % 8 === 2 ? '20' : '21' };
    default:
      return { topic: `${BASE}/ghost${i % 100}/setpoint/set`, payload: '20' };
  }
}

function dbBytes(dbPath: string): number {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      total += statSync(`${dbPath}${suffix}`).size;
    } catch {
      // not there
    }
  }
  return total;
}

async function main(): Promise<number> {
  const { values: args } = parseArgs({
    options: { n: { type: 'string', default: '20000' }, json: { type: 'boolean', default: false } },
  });
  const n = Number(args.n);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--n must be a positive integer, got ${args.n}`);

  const broker = await startMosquitto();
  const { dir, remove } = makeTempDir('homeostat-bench-flood-');
  const cleanups: Array<() => unknown> = [() => remove(), () => broker.dispose()];
  try {
    const text = demoConfigText((doc) => doc.setIn(['mqtt', 'url'], broker.url));
    const loaded = parseConfigText(text);
    if (!loaded.ok) throw new Error(`demo config invalid: ${loaded.errors.join('; ')}`);
    const config = loaded.config;
    const clock = new RealClock();
    const logger = pino({ level: 'warn' }, pino.destination(2));
    const dbPath = join(dir, 'state.db');
    const opened = openStore({ path: dbPath, logger, nowMs: () => clock.nowMs() });
    const desired = new DesiredStore(opened.db, () => clock.nowMs());
    let bridge: MqttBridge | undefined;
    const daemon: Daemon = new Daemon({
      config,
      configText: text,
      clock,
      logger,
      store: { desired, state: new StateStore(opened.db) },
      statusEveryMs: 0,
      onStatus: (status) => bridge?.publishStatus(status),
      onConfigApplied: (_config, removed) => bridge?.configChanged(removed),
    });
    const settings = mqttSettings(config, undefined, {});
    if (!settings) throw new Error('the demo config names no broker');
    const started = createMqttBridge({ settings, config, daemon: () => daemon, desired, clock, logger });
    bridge = started;
    cleanups.push(() => opened.db.close());
    cleanups.push(async () => {
      await daemon.stop();
      await started.stop();
    });
    await daemon.start();
    started.start();

    // The flooding client, and a watcher counting results.
    const watcher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    cleanups.push(() => watcher.endAsync(true));
    let results = 0;
    let sawState = false;
    watcher.on('message', (topic) => {
      if (topic.endsWith('/result')) results += 1;
      else sawState = true;
    });
    await watcher.subscribeAsync([`${BASE}/+/result`, `${BASE}/room/state`], { qos: 1 });
    const startDeadline = Date.now() + START_TIMEOUT_MS;
    while (!sawState) {
      if (Date.now() > startDeadline) throw new Error('the daemon published no state');
      await sleep(50);
    }
    // The command subscriptions are in place once a probe command is answered.
    while (results === 0) {
      await watcher.publishAsync(`${BASE}/room/setpoint/set`, '20', { qos: 1 });
      await sleep(100);
    }
    await sleep(500);
    results = 0;

    // Sampling: RSS and the room loop's cycles, every 50 ms.
    let rssPeak = 0;
    let lastCycleAtMs = Date.now();
    let lastUpdatedAtMs = daemon.statuses().find((s) => s.loop === 'room')?.updatedAtMs;
    let longestGapMs = 0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      const updatedAtMs = daemon.statuses().find((s) => s.loop === 'room')?.updatedAtMs;
      const now = Date.now();
      if (updatedAtMs !== lastUpdatedAtMs) {
        lastUpdatedAtMs = updatedAtMs;
        lastCycleAtMs = now;
      }
      longestGapMs = Math.max(longestGapMs, now - lastCycleAtMs);
    }, 50);
    cleanups.push(() => clearInterval(sampler));
    const histogram = monitorEventLoopDelay({ resolution: 5 });
    histogram.enable();
    cleanups.push(() => histogram.disable());

    const phases: Phase[] = [];
    const endPhase = (name: string, startedAtMs: number) => {
      phases.push({
        name,
        durationS: round((Date.now() - startedAtMs) / 1000),
        loopDelayP50Ms: round(histogram.percentile(50) / 1e6),
        loopDelayP99Ms: round(histogram.percentile(99) / 1e6),
        loopDelayMaxMs: round(histogram.max / 1e6),
        rssMb: mb(process.memoryUsage.rss()),
        rssPeakMb: mb(rssPeak),
        longestCycleGapS: round(longestGapMs / 1000),
      });
      histogram.reset();
      rssPeak = process.memoryUsage.rss();
      longestGapMs = 0;
    };
    const eventRows = () => (opened.db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;

    // Before.
    let phaseStart = Date.now();
    histogram.reset();
    rssPeak = process.memoryUsage.rss();
    await sleep(IDLE_BEFORE_MS);
    endPhase('before', phaseStart);
    const rowsBefore = eventRows();
    const bytesBefore = dbBytes(dbPath);

    // During: every command published, then wait for every result.
    phaseStart = Date.now();
    const flooder = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    cleanups.push(() => flooder.endAsync(true));
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const { topic, payload } = command(i);
      sends.push(flooder.publishAsync(topic, payload, { qos: 1 }));
      // Yield now and then so the client writes to the socket while it builds the rest.
      if (i % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(sends);
    const deadline = Date.now() + FLOOD_TIMEOUT_MS;
    while (results < n && Date.now() < deadline) await sleep(20);
    endPhase('during', phaseStart);
    const answered = results;

    // After.
    phaseStart = Date.now();
    await sleep(IDLE_AFTER_MS);
    endPhase('after', phaseStart);
    const rowsAdded = eventRows() - rowsBefore;
    const bytesAdded = dbBytes(dbPath) - bytesBefore;

    const figures = {
      commands: n,
      answered,
      eventRowsAdded: rowsAdded,
      dbGrowthKb: round(bytesAdded / 1024),
      phases,
    };
    if (!args.json) {
      console.log(`MQTT flood: ${n} commands (¼ out of limits, ¼ not a number, ¼ changes, ¼ unknown loops)`);
      console.log(`answered: ${answered}/${n}; event rows added: ${rowsAdded}; database growth: ${figures.dbGrowthKb} KB`);
      console.log('phase    duration s  loop delay p50/p99/max ms  RSS MB (peak)  longest room cycle gap s');
      for (const p of phases) {
        console.log(
          `${p.name.padEnd(8)} ${String(p.durationS).padStart(10)}  ${`${p.loopDelayP50Ms}/${p.loopDelayP99Ms}/${p.loopDelayMaxMs}`.padStart(25)}  ${`${p.rssMb} (${p.rssPeakMb})`.padStart(13)}  ${String(p.longestCycleGapS).padStart(24)}`,
        );
      }
    }
    console.log(JSON.stringify(figures));
    return answered === n ? 0 : 1;
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.error(`cleanup failed: ${(error as Error).message}`);
      }
    }
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
