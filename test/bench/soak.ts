/**
 * Soak benchmark (`npm run bench:soak`): the demo daemon as a child process (`homeostat run`, the
 * way systemd runs it, with the fault suite's probe preloaded) on a private Mosquitto, for a long
 * time, with a command every few seconds over MQTT and HTTP, optionally beside CPU hogs that push
 * the load average up. Prints, per phase of the run, the event-loop delay (p99 of the 100 ms
 * probe windows and the worst one), the load average beside it, the longest gap between two
 * states of each loop, and the live heap's growth. Figures, never assertions.
 *
 *   npm run bench:soak                          30 min at ×1 with 2 hogs (the setting)
 *   npm run bench:soak -- --minutes 3 --speed 60 --hogs 0
 *   npm run bench:soak -- --json                JSON only
 *
 * A stall is a probe window whose delay exceeds STALL_MS: the daemon's event loop was held (a
 * long synchronous store transaction, a large JSON encode, a GC pause) or the process was not
 * scheduled (the load). The load average is printed beside each so the two can be told apart.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { faultConfigText, LOOPS, setpointTopic, stateTopic } from '../faults/support/config.js';
import {
  liveHeapBytes,
  type ProbeSample,
  probeSamples,
  startProbedDaemon,
} from '../faults/support/daemon.js';
import { apiBase, postJson } from '../faults/support/http.js';
import { TestMqtt } from '../faults/support/mqtt.js';
import { type CliProcess, makeTempDir, sleep } from '../integration/helpers.js';
import { startMosquitto } from '../integration/mosquitto.js';
import { percentile, STALL_MS, stallCause, startHog } from './stalls.js';

/** Commands: one every this, alternating MQTT and HTTP and the loops, ms. */
const COMMAND_EVERY_MS = 3_000;

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    speed: { type: 'string', default: '1' },
    hogs: { type: 'string', default: '2' },
    phases: { type: 'string', default: '6' },
    json: { type: 'boolean', default: false },
  },
});
const minutes = Number(args.minutes);
const speed = Number(args.speed);
const hogCount = Number(args.hogs);
const phaseCount = Math.max(1, Number(args.phases));

interface PhaseFigures {
  phase: string;
  load1: { min: number; max: number };
  loopP99Ms: number;
  loopMaxMs: number;
  stalls: number;
  /** Stalls with the process on CPU for most of the delay: its own work (or a GC pause). */
  busyStalls: number;
  /** The worst of those, ms: what the daemon itself held the event loop for. */
  busyMaxMs: number;
  longestStateGapS: Record<string, number>;
}

/** Arrival times of each loop's states (the payloads are not kept: a long run has many). */
function stateArrivals(client: TestMqtt): Map<string, number[]> {
  const arrivals = new Map<string, number[]>(LOOPS.map((loop) => [stateTopic(loop), []]));
  client.client.on('message', (topic) => arrivals.get(topic)?.push(Date.now()));
  return arrivals;
}

function stateGaps(arrivals: Map<string, number[]>, fromMs: number, toMs: number): Record<string, number> {
  const gaps: Record<string, number> = {};
  for (const loop of LOOPS) {
    const times = (arrivals.get(stateTopic(loop)) ?? []).filter((at) => at >= fromMs && at <= toMs);
    let longestMs = 0;
    let previous = fromMs;
    for (const at of [...times, toMs]) {
      longestMs = Math.max(longestMs, at - previous);
      previous = at;
    }
    gaps[loop] = Math.round(longestMs / 100) / 10;
  }
  return gaps;
}

function phaseFigures(
  name: string,
  samples: ProbeSample[],
  loads: number[],
  gaps: Record<string, number>,
): PhaseFigures {
  const delays = samples.map((s) => s.maxDelayMs);
  const stalls = samples.filter((s) => s.maxDelayMs > STALL_MS);
  const busy = stalls.filter((s) => stallCause(s) !== 'not scheduled');
  return {
    phase: name,
    load1: { min: Math.min(...loads), max: Math.max(...loads) },
    loopP99Ms: percentile(delays, 99),
    loopMaxMs: Math.max(0, ...delays),
    stalls: stalls.length,
    busyStalls: busy.length,
    busyMaxMs: Math.max(0, ...busy.map((s) => s.maxDelayMs)),
    longestStateGapS: gaps,
  };
}

/** Sends one command every COMMAND_EVERY_MS until `stop()`; counts the answers. */
function commandTraffic(client: TestMqtt, httpBase: string) {
  let n = 0;
  const counts = { mqtt: 0, http: 0, httpAccepted: 0 };
  const timer = setInterval(() => {
    n += 1;
    const loop = n % 3 === 0 ? 'fermenter' : 'room';
    const setpoint = 18 + (n % 5);
    if (n % 2 === 0) {
      counts.mqtt += 1;
      void client.publish(setpointTopic(loop), String(setpoint), { qos: 1 }).catch(() => undefined);
    } else {
      counts.http += 1;
      void postJson(httpBase, `/api/loops/${loop}`, { setpoint })
        .then((answer) => {
          if (answer.status === 200) counts.httpAccepted += 1;
        })
        .catch(() => undefined);
    }
  }, COMMAND_EVERY_MS);
  return { counts, stop: () => clearInterval(timer) };
}

async function main(): Promise<void> {
  const { dir, remove } = makeTempDir('homeostat-soak-');
  const broker = await startMosquitto();
  const hogs: ChildProcess[] = [];
  const configPath = join(dir, 'homeostat.yaml');
  const dbPath = join(dir, 'state.db');
  writeFileSync(configPath, faultConfigText({ brokerUrl: broker.url, memoryFlushS: 30 }));
  const client = await TestMqtt.connect(broker.url, ['homeostat/demo/+/state'], {
    keepPayloads: () => false,
  });
  const arrivals = stateArrivals(client);
  const daemon = startProbedDaemon({ configPath, dbPath, speed, dir, name: 'soak' });
  try {
    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    const { base } = await apiBase(daemon.run);
    for (let i = 0; i < hogCount; i++) hogs.push(startHog());
    const heapBefore = await liveHeapBytes(daemon);
    const traffic = commandTraffic(client, base);
    const phases: PhaseFigures[] = [];
    const startedAtMs = Date.now();
    const phaseMs = (minutes * 60_000) / phaseCount;
    for (let p = 0; p < phaseCount; p++) {
      const fromMs = Date.now();
      const loads: number[] = [];
      while (Date.now() - fromMs < phaseMs) {
        loads.push(loadavg()[0]!);
        await sleep(Math.min(5_000, phaseMs));
      }
      const toMs = Date.now();
      const name = `${((p * phaseMs) / 60_000).toFixed(0)}–${(((p + 1) * phaseMs) / 60_000).toFixed(0)} min`;
      phases.push(
        phaseFigures(
          name,
          probeSamples(daemon.probePath, fromMs, toMs),
          loads,
          stateGaps(arrivals, fromMs, toMs),
        ),
      );
      if (!args.json) console.error(`soak: ${name} done`);
    }
    traffic.stop();
    const heapAfter = await liveHeapBytes(daemon);
    print(phases, traffic.counts, heapBefore, heapAfter);
    printWorst(probeSamples(daemon.probePath, startedAtMs), daemon.run);
  } finally {
    for (const hog of hogs) hog.kill('SIGKILL');
    await daemon.run.kill('SIGTERM');
    await client.end();
    await broker.dispose();
    remove();
  }
}

function print(
  phases: PhaseFigures[],
  counts: { mqtt: number; http: number; httpAccepted: number },
  heapBefore: number | undefined,
  heapAfter: number | undefined,
): void {
  const all = phases.flatMap((p) => [p.loopP99Ms]);
  const worst = Math.max(...phases.map((p) => p.loopMaxMs));
  const stalls = phases.reduce((sum, p) => sum + p.stalls, 0);
  const busyMax = Math.max(...phases.map((p) => p.busyMaxMs));
  const heapGrowthMb =
    heapBefore !== undefined && heapAfter !== undefined ? (heapAfter - heapBefore) / 1e6 : undefined;
  const simulatedDays = (minutes * speed) / (24 * 60);
  const summary = {
    minutes,
    speed,
    hogs: hogCount,
    commands: counts,
    loopP99MsWorstPhase: Math.max(...all),
    loopMaxMs: worst,
    stallsOver100Ms: stalls,
    worstOnCpuMs: busyMax,
    heapGrowthMb,
    heapGrowthMbPerSimulatedDay: heapGrowthMb === undefined ? undefined : heapGrowthMb / simulatedDays,
    phases,
  };
  if (args.json) {
    console.log(JSON.stringify(summary, null, 2));
    return;
  }
  console.log(`\n== soak: ${minutes} min at ×${speed}, ${hogCount} CPU hogs beside the daemon (2 cores)\n`);
  console.log(
    '| phase | load avg (1 min) | event loop p99 | worst window | windows > 100 ms | of them on CPU (own work, GC) | worst on CPU | longest state gap (room / fermenter / greenhouse) |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const p of phases) {
    const gaps = LOOPS.map((loop) => `${p.longestStateGapS[loop]} s`);
    console.log(
      `| ${p.phase} | ${p.load1.min.toFixed(1)}–${p.load1.max.toFixed(1)} | ${p.loopP99Ms.toFixed(1)} ms | ${p.loopMaxMs.toFixed(1)} ms | ${p.stalls} | ${p.busyStalls} | ${p.busyMaxMs.toFixed(1)} ms | ${[gaps[2], gaps[0], gaps[1]].join(' / ')} |`,
    );
  }
  console.log(
    `\ncommands: ${counts.mqtt} over MQTT, ${counts.http} over HTTP (${counts.httpAccepted} answered 200); ` +
      `live heap ${heapBefore === undefined ? '?' : (heapBefore / 1e6).toFixed(1)} → ${heapAfter === undefined ? '?' : (heapAfter / 1e6).toFixed(1)} MB` +
      (summary.heapGrowthMbPerSimulatedDay === undefined
        ? ''
        : ` (${summary.heapGrowthMbPerSimulatedDay.toFixed(2)} MB per simulated day)`),
  );
  console.log(
    `worst event-loop window ${worst.toFixed(1)} ms; ${stalls} windows over ${STALL_MS} ms; worst with the daemon on CPU ${busyMax.toFixed(1)} ms`,
  );
}

/**
 * The five worst windows, and the five worst with the daemon on CPU (its own work or a GC: what
 * a change in homeostat can shorten), with their cause and the daemon's log lines around them.
 */
function printWorst(samples: ProbeSample[], run: CliProcess): void {
  if (args.json) return;
  const byDelay = [...samples].sort((a, b) => b.maxDelayMs - a.maxDelayMs);
  console.log('\nworst windows (cause: gc, busy = on CPU, not scheduled = other processes ran):');
  printWindows(byDelay.slice(0, 5), run);
  console.log('worst windows with the daemon on CPU:');
  printWindows(byDelay.filter((s) => stallCause(s) !== 'not scheduled').slice(0, 5), run);
}

function printWindows(worst: ProbeSample[], run: CliProcess): void {
  for (const sample of worst) {
    const fromMs = sample.atMs - (sample.elapsedMs ?? 100) - 200;
    const lines = run
      .filter((line) => line.time >= fromMs && line.time <= sample.atMs)
      .map((line) => line.msg.slice(0, 80));
    console.log(
      `  ${new Date(sample.atMs).toISOString()}  ${sample.maxDelayMs} ms  ${stallCause(sample)} ` +
        `(cpu ${sample.cpuMs ?? '?'} ms of ${sample.elapsedMs ?? '?'}, gc ${sample.gcMaxMs ?? '?'} ms)` +
        (lines.length > 0 ? `; log: ${lines.slice(-3).join(' | ')}` : ''),
    );
  }
}

await main();
