/**
 * HTTP API and dashboard benchmark (`npm run bench:http`; options after `--`). Figures measured
 * side by side in one run and printed, never asserted.
 *
 * 1. Latency on loopback (http/latency.ts, http/writes.ts): a real node in this process with
 *    the server on 127.0.0.1 port 0, on N generated loops (the footprint bench's config), the
 *    clock at a given speed. GET one loop, GET all loops (--reads each), GET /metrics and a 6 h
 *    history of 500 points (--heavy-reads each), then --writes setpoint writes round-robin
 *    over the loops: write → answer, → SSE `event` frame, → SSE `status` frame with the new
 *    setpoint (shown, then applied). Writes keep to the daemon's change limit (10 at once,
 *    30 per minute per loop, on the daemon's clock; the node has no option to raise it): hence
 *    3 loops at ×10 (5 changes/s per loop), 50 loops at ×1 (the first 500 writes need no wait).
 *    Either way the loops cycle 3–5 times a second in all while the requests come.
 * 2. Memory (http/memory.ts): the built daemon (dist/cli.js) twice side by side, http on and
 *    http.enabled false, same config and the systemd unit's NODE_OPTIONS; median VmRSS when
 *    idle, and after a dashboard visit with 3 SSE streams open and a few /metrics scrapes.
 * 3. Page weight: DashboardAssets.weight() (every asset, plain and gzipped), and the page plus
 *    the assets it names as served over the socket.
 *
 * Options: --loops 3,50 --speeds 10,1 (clock speed of each latency run) --reads 2000
 * --heavy-reads 500 --writes 300 --memory-loops 3,50 --settle-s 10 --readings 7
 * --node-options='…' (default the unit's) --no-build --skip-memory --skip-latency --json.
 * Default run: about 2–3 minutes.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { DashboardAssets } from '../../src/http/static.js';
import { REPO_ROOT } from './footprint/measure.js';
import { type LatencyResult, measureLatency } from './http/latency.js';
import { type MemoryResult, measureMemory, unitNodeOptions } from './http/memory.js';
import {
  latencyTable,
  memoryTable,
  P99_TARGET_MS,
  RSS_TARGET_MB,
  summaryTable,
  verdicts,
} from './http/report.js';

const { values } = parseArgs({
  options: {
    loops: { type: 'string', default: '3,50' },
    speeds: { type: 'string', default: '10,1' },
    reads: { type: 'string', default: '2000' },
    'heavy-reads': { type: 'string', default: '500' },
    writes: { type: 'string', default: '300' },
    'memory-loops': { type: 'string', default: '3,50' },
    'settle-s': { type: 'string', default: '10' },
    readings: { type: 'string', default: '7' },
    'node-options': { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    'skip-memory': { type: 'boolean', default: false },
    'skip-latency': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const counts = (text: string) => text.split(',').filter(Boolean).map(Number);
const say = (text: string) => {
  if (!values.json) process.stderr.write(`${text}\n`);
};

async function main(): Promise<void> {
  const nodeOptions = values['node-options'] ?? unitNodeOptions();
  const memory: MemoryResult[] = [];
  if (!values['skip-memory']) {
    if (!values['no-build']) {
      say('building dist (npm run build)…');
      execFileSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    }
    for (const loops of counts(values['memory-loops'])) {
      say(`memory: ${loops} loops, with and without http…`);
      memory.push(
        await measureMemory({
          loops,
          nodeOptions,
          settleS: Number(values['settle-s']),
          readings: Number(values.readings),
          sseStreams: 3,
          scrapes: 5,
        }),
      );
    }
  }
  const latency: LatencyResult[] = [];
  if (!values['skip-latency']) {
    const speeds = counts(values.speeds);
    for (const [i, loops] of counts(values.loops).entries()) {
      const speed = speeds[i] ?? speeds.at(-1) ?? 1;
      say(`latency: ${loops} loops at ×${speed}…`);
      latency.push(
        await measureLatency({
          loops,
          speed,
          reads: Number(values.reads),
          heavyReads: Number(values['heavy-reads']),
          writes: Number(values.writes),
        }),
      );
    }
  }
  const weight = new DashboardAssets().weight();
  const list = verdicts(latency, memory);
  const report = {
    targets: { p99Ms: P99_TARGET_MS, rssAddedMb: RSS_TARGET_MB },
    nodeOptions,
    latency,
    memory,
    pageWeight: { assets: weight, served: latency[0]?.page },
    allMet: list.every((v) => v.met),
    verdicts: list,
  };
  if (!values.json) {
    const lines: string[] = [];
    for (const run of latency) lines.push(...latencyTable(run));
    if (memory.length > 0) lines.push(...memoryTable(memory, nodeOptions));
    const kb = (bytes: number) => (bytes / 1024).toFixed(1);
    lines.push(
      `Page weight: every dashboard asset (DashboardAssets.weight()) ${kb(weight.plainBytes)} kB plain, ${kb(weight.gzippedBytes)} kB gzipped.`,
    );
    const served = latency[0]?.page;
    if (served) {
      lines.push(
        `As a browser loads it (${served.files.join(', ')}): ${kb(served.plainBytes)} kB plain, ${kb(served.gzippedBytes)} kB gzipped on the wire.`,
      );
    }
    lines.push('', ...summaryTable(list), 'JSON:', '');
    process.stdout.write(lines.join('\n'));
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => {
  process.stderr.write(
    `bench:http: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
