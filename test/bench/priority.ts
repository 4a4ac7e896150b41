/**
 * Priority benchmark (`npm run bench:priority`): does a higher CPU priority keep the daemon's
 * event loop on time on a loaded Pi? Two demo daemons run side by side in one run, each as a
 * child process (`homeostat run`, with the fault suite's probe) on its own Mosquitto, with the
 * same MQTT command traffic, beside CPU hogs: one at the default priority, one reniced (the
 * unit's `Nice=`). Prints, for each, the event-loop delay (p99 of the 100 ms probe windows, the
 * worst window) and the windows over 100 ms with the daemon off CPU ("not scheduled": what a
 * priority can fix) and on CPU (its own work or a GC: what it cannot). Figures, never assertions.
 *
 *   npm run bench:priority                        5 min, 4 hogs, nice -10 (the unit's) against 0
 *   npm run bench:priority -- --minutes 2 --hogs 6 --nice -10
 *
 * Needs root (or CAP_SYS_NICE) for a negative nice value; without it, it says so and stops.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg, setPriority } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { faultConfigText, LOOPS, setpointTopic } from '../faults/support/config.js';
import {
  type ProbedDaemon,
  type ProbeSample,
  probeSamples,
  startProbedDaemon,
} from '../faults/support/daemon.js';
import { TestMqtt } from '../faults/support/mqtt.js';
import { makeTempDir, sleep } from '../integration/helpers.js';
import { type Broker, startMosquitto } from '../integration/mosquitto.js';
import { percentile, STALL_MS, stallCause, startHog } from './stalls.js';

const COMMAND_EVERY_MS = 3_000;
const WARM_UP_MS = 15_000;

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    hogs: { type: 'string', default: '4' },
    nice: { type: 'string', default: '-10' },
  },
});
const minutes = Number(args.minutes);
const hogCount = Number(args.hogs);
const niceValue = Number(args.nice);

interface Contender {
  name: string;
  nice: number;
  broker: Broker;
  client: TestMqtt;
  daemon: ProbedDaemon;
}

async function startContender(dir: string, name: string, nice: number): Promise<Contender> {
  const broker = await startMosquitto();
  const configPath = join(dir, `${name}.yaml`);
  writeFileSync(configPath, faultConfigText({ brokerUrl: broker.url, memoryFlushS: 30 }));
  const client = await TestMqtt.connect(broker.url, [], { keepPayloads: () => false });
  const daemon = startProbedDaemon({ configPath, dbPath: join(dir, `${name}.db`), speed: 1, dir, name });
  await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
  const pid = daemon.run.child.pid;
  if (pid === undefined) throw new Error(`${name}: no pid`);
  setPriority(pid, nice);
  return { name, nice, broker, client, daemon };
}

function figures(contender: Contender, fromMs: number, toMs: number) {
  const samples = probeSamples(contender.daemon.probePath, fromMs, toMs);
  const stalls = samples.filter((s) => s.maxDelayMs > STALL_MS);
  const offCpu = stalls.filter((s) => stallCause(s) === 'not scheduled');
  const worst = samples.reduce<ProbeSample | undefined>(
    (a, b) => (a && a.maxDelayMs >= b.maxDelayMs ? a : b),
    undefined,
  );
  return {
    daemon: contender.name,
    nice: contender.nice,
    windows: samples.length,
    p99Ms: percentile(
      samples.map((s) => s.maxDelayMs),
      99,
    ),
    worstMs: worst?.maxDelayMs ?? 0,
    stalls: stalls.length,
    notScheduled: offCpu.length,
    worstNotScheduledMs: Math.max(0, ...offCpu.map((s) => s.maxDelayMs)),
    onCpu: stalls.length - offCpu.length,
    /** When the worst window ended, s after the measurement began. */
    worstAtS: Math.round(((worst?.atMs ?? fromMs) - fromMs) / 1000),
  };
}

async function main(): Promise<void> {
  const { dir, remove } = makeTempDir('homeostat-priority-');
  const contenders: Contender[] = [];
  const hogs: ChildProcess[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    contenders.push(await startContender(dir, 'default', 0));
    contenders.push(await startContender(dir, `nice${niceValue}`, niceValue));
    for (let i = 0; i < hogCount; i++) hogs.push(startHog());
    let n = 0;
    timer = setInterval(() => {
      n += 1;
      const loop = LOOPS[n % LOOPS.length]!;
      for (const { client } of contenders) {
        void client.publish(setpointTopic(loop), String(18 + (n % 5)), { qos: 1 }).catch(() => undefined);
      }
    }, COMMAND_EVERY_MS);
    // The first seconds after a start (module loading, JIT, the first flushes) are not the
    // steady state a priority is about: measured from WARM_UP_MS after the hogs started.
    await sleep(WARM_UP_MS);
    const fromMs = Date.now();
    const loads: number[] = [];
    while (Date.now() - fromMs < minutes * 60_000) {
      loads.push(loadavg()[0]!);
      await sleep(5_000);
    }
    const toMs = Date.now();
    print(
      contenders.map((c) => figures(c, fromMs, toMs)),
      loads,
    );
  } finally {
    if (timer) clearInterval(timer);
    for (const hog of hogs) hog.kill('SIGKILL');
    for (const c of contenders) {
      await c.daemon.run.kill('SIGTERM');
      await c.client.end();
      await c.broker.dispose();
    }
    remove();
  }
}

function print(rows: ReturnType<typeof figures>[], loads: number[]): void {
  console.log(
    `\n== priority: ${minutes} min at ×1, ${hogCount} CPU hogs, two daemons side by side ` +
      `(load avg ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)})\n`,
  );
  console.log(
    '| daemon | nice | windows | event loop p99 | worst window (at) | windows > 100 ms | of them not scheduled | worst not scheduled | on CPU (own work, GC) |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) {
    console.log(
      `| ${r.daemon} | ${r.nice} | ${r.windows} | ${r.p99Ms.toFixed(1)} ms | ${r.worstMs.toFixed(1)} ms (${r.worstAtS} s) | ${r.stalls} | ${r.notScheduled} | ${r.worstNotScheduledMs.toFixed(1)} ms | ${r.onCpu} |`,
    );
  }
  const [base, niced] = rows;
  if (base && niced && niced.stalls > 0) {
    console.log(`\nstalls, default ÷ reniced: ${(base.stalls / niced.stalls).toFixed(1)}×`);
  } else if (base && niced) {
    console.log(`\nstalls: ${base.stalls} at the default priority, none reniced`);
  }
}

try {
  setPriority(process.pid, 0);
  await main();
} catch (error) {
  if (
    (error as NodeJS.ErrnoException).code === 'EACCES' ||
    (error as NodeJS.ErrnoException).code === 'EPERM'
  ) {
    console.error(`bench:priority: a nice value of ${niceValue} needs root or CAP_SYS_NICE`);
    process.exitCode = 1;
  } else throw error;
}
