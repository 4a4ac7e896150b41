/**
 * Memory and CPU footprint benchmark (`npm run bench:footprint`). A Pi Zero 2 W has 512 MB for
 * everything: how much does the daemon take, and how much more per loop?
 *
 * Each figure comes from its own child process running the daemon the way a user runs it,
 * compiled: `node dist/cli.js run` (the script builds dist first; `--runner tsx` runs
 * src/cli.ts under tsx instead, which alone costs ~30 MB more), on generated configs of N
 * simulated loops (footprint/config.ts: the demo's room loop N times, a sensor every 10 s),
 * with a SQLite file in a temp dir; and the bare `node -e 'setInterval(()=>{},1000)'` in the
 * same run as the baseline. Every process preloads footprint/probe.mjs (event-loop delay
 * histogram, 1 s sampling of RSS/heap/CPU; bare node too, so it cancels out).
 *
 * Per run: RSS at the end of the window and its peak, heap used after a full GC, CPU seconds
 * per simulated hour, event-loop delay p99 and max (after a warm-up), and the largest gap
 * between two readings of one sensor (from the stored history, simulated s).
 *
 * Speed: a simulated hour needs `--speed`; it compresses every timer by that factor, so a stall
 * of d ms delays a reading by d × speed simulated ms (220 ms at ×60 is 13 s late; in real time
 * it is nothing against a 10 s period), and the periodic work (status lines, flushes, MQTT
 * status) runs `speed` times as often per real second, raising CPU% and garbage churn. Hence
 * the real-time runs (`--realtime-loops`) for delay and gaps.
 *
 * Options: --duration-s 16 (measured window per run), --warmup-s 8, --speed 60,
 * --loops 1,10,50,200, --mqtt-loops 3,50,200 (private Mosquitto; '' for none),
 * --realtime-loops 1,200 (speed 1; '' for none), --runner dist|tsx, --no-build, --json,
 * --node-flags='…' (V8 flags of the daemon processes; with '='; default the NODE_OPTIONS of
 * systemd/homeostat.service, as the daemon runs on a Pi; --node-flags= for V8's own defaults),
 * --heap-snapshots DIR (instead of the table: a heap snapshot per --snapshot-loops 1,200, with
 * a broker if --snapshot-mqtt; then compare two with
 * `node --import tsx test/bench/footprint/heap-diff.ts DIR/loops-1.heapsnapshot DIR/loops-200.heapsnapshot`).
 * Default run: 10 processes, about 4–5 minutes.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Broker, startMosquitto } from '../integration/mosquitto.js';
import { SENSOR_PERIOD_S } from './footprint/config.js';
import { LATE_SLACK_S, measure, REPO_ROOT, type RunResult, type RunSpec } from './footprint/measure.js';
import { printTable, targetLines } from './footprint/report.js';

const { values } = parseArgs({
  options: {
    'duration-s': { type: 'string', default: '16' },
    'warmup-s': { type: 'string', default: '8' },
    speed: { type: 'string', default: '60' },
    loops: { type: 'string', default: '1,10,50,200' },
    'mqtt-loops': { type: 'string', default: '3,50,200' },
    'realtime-loops': { type: 'string', default: '1,200' },
    'node-flags': { type: 'string' },
    'snapshot-loops': { type: 'string', default: '1,200' },
    'snapshot-mqtt': { type: 'boolean', default: false },
    runner: { type: 'string', default: 'dist' },
    'no-build': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    'heap-snapshots': { type: 'string' },
  },
});
const counts = (text: string) => text.split(',').filter(Boolean).map(Number);
/** The V8 flags the systemd unit gives the daemon (its NODE_OPTIONS). */
function unitNodeFlags(): string {
  const unit = readFileSync(join(REPO_ROOT, 'systemd/homeostat.service'), 'utf8');
  return /^Environment="NODE_OPTIONS=([^"]*)"$/m.exec(unit)?.[1] ?? '';
}
const nodeFlags = values['node-flags'] ?? unitNodeFlags();
const runner = values.runner === 'tsx' ? 'tsx' : 'dist';
const base = {
  speed: Number(values.speed),
  warmupS: Number(values['warmup-s']),
  durationS: Number(values['duration-s']),
  runner,
  nodeFlags: nodeFlags.split(' ').filter(Boolean),
} as const;

async function main(): Promise<void> {
  if (runner === 'dist' && !values['no-build']) {
    execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (values['heap-snapshots']) return heapSnapshots(resolve(values['heap-snapshots']));
  const mqttLoops = counts(values['mqtt-loops']);
  const broker: Broker | undefined = mqttLoops.length > 0 ? await startMosquitto() : undefined;
  const specs: RunSpec[] = [{ ...base, label: 'bare node' }];
  for (const loops of counts(values.loops)) specs.push({ ...base, label: `${loops} loops`, loops });
  for (const loops of mqttLoops) {
    specs.push({ ...base, label: `${loops} loops + MQTT`, loops, mqttUrl: broker!.url });
  }
  for (const loops of counts(values['realtime-loops'])) {
    specs.push({ ...base, speed: 1, label: `${loops} loops real time`, loops });
  }
  const results: RunResult[] = [];
  try {
    for (const spec of specs) {
      if (!values.json)
        process.stderr.write(`measuring ${spec.label} (${spec.warmupS + spec.durationS} s)…\n`);
      results.push(await measure(spec));
    }
  } finally {
    await broker?.dispose();
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ ...base, results }, null, 2)}\n`);
    return;
  }
  printTable(results, { runner, speed: base.speed, durationS: base.durationS });
  process.stdout.write(`daemon V8 flags: ${nodeFlags || '(none: V8 defaults)'}\n`);
  const lines = targetLines(results, { periodS: SENSOR_PERIOD_S, slackS: LATE_SLACK_S });
  for (const line of lines) process.stdout.write(`${line}\n`);
}

async function heapSnapshots(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const broker = values['snapshot-mqtt'] ? await startMosquitto() : undefined;
  try {
    for (const loops of counts(values['snapshot-loops'])) {
      const name = `loops-${loops}${broker ? '-mqtt' : ''}.heapsnapshot`;
      const heapSnapshotPath = join(dir, name);
      const result = await measure({
        ...base,
        label: `${loops} loops`,
        loops,
        heapSnapshotPath,
        ...(broker ? { mqttUrl: broker.url } : {}),
      });
      process.stdout.write(`${heapSnapshotPath}: RSS ${result.rssMb} MB, heap ${result.heapUsedMb} MB\n`);
    }
  } finally {
    await broker?.dispose();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
