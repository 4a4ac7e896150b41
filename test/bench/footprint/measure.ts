import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { footprintConfigText, SENSOR_PERIOD_S } from './config.js';
import { readingGaps } from './gaps.js';

const PROBE_PATH = fileURLToPath(new URL('./probe.mjs', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** A reading is late when its gap exceeds the period by more than this, s (a tenth of it). */
export const LATE_SLACK_S = SENSOR_PERIOD_S / 10;

export interface RunSpec {
  label: string;
  /** Undefined: the bare `node -e 'setInterval(()=>{},1000)'` baseline. */
  loops?: number;
  mqttUrl?: string;
  speed: number;
  warmupS: number;
  durationS: number;
  /** 'dist': `node dist/cli.js` (as installed); 'tsx': `node --import tsx src/cli.ts`. */
  runner: 'dist' | 'tsx';
  /** Extra node flags for the measured process (e.g. --max-semi-space-size=1). */
  nodeFlags?: string[];
  /** Write a heap snapshot at the end of the window to this file. */
  heapSnapshotPath?: string;
}

export interface RunResult {
  label: string;
  loops?: number;
  mqtt: boolean;
  speed: number;
  /** From process start to the daemon's "regulating" line, s. */
  startS?: number;
  rssMb: number;
  rssPeakMb: number;
  /** V8 heap in use after a full GC at the end of the window, MB. */
  heapUsedMb: number;
  /** V8 heap reserved (used + free, young generation included) as the process ran, MB. */
  heapTotalMb: number;
  cpuS: number;
  /** CPU seconds per simulated hour (per real hour for the baseline). */
  cpuPerSimHourS: number;
  delayP99Ms: number;
  delayMaxMs: number;
  /** Largest gap between two readings of one sensor, simulated s; late: gaps > period + slack. */
  maxGapS?: number;
  lateGaps?: number;
  gaps?: number;
  logLines?: number;
}

interface ProbeLine {
  final: boolean;
  windowS: number;
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  cpuS: number;
  delayP99Ms: number;
  delayMaxMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => Math.round(bytes / 1024 / 102.4) / 10;

function commandFor(spec: RunSpec, dir: string): string[] {
  // The baseline runs with the same V8 flags: the ratio compares like with like.
  const flags = spec.nodeFlags ?? [];
  const node = ['--expose-gc', ...flags, '--import', PROBE_PATH];
  if (spec.heapSnapshotPath) node.push('--heapsnapshot-signal=SIGUSR2');
  if (spec.loops === undefined) return [...node, '-e', 'setInterval(() => {}, 1000)'];
  const configPath = join(dir, 'config.yaml');
  writeFileSync(configPath, footprintConfigText(spec.loops, spec.mqttUrl));
  const cli =
    spec.runner === 'dist'
      ? [join(REPO_ROOT, 'dist/cli.js')]
      : ['--import', 'tsx', join(REPO_ROOT, 'src/cli.ts')];
  // Any free port for the API (on, as deployed): footprint runs daemons side by side.
  const args = [
    'run',
    '--config',
    configPath,
    '--db',
    join(dir, 'state.db'),
    '--log-format',
    'json',
    '--http-port',
    '0',
  ];
  if (spec.speed !== 1) args.push('--speed', String(spec.speed));
  return [...node, ...cli, ...args];
}

/** Runs one process for warm-up + duration, stops it with SIGTERM and collects its figures. */
export async function measure(spec: RunSpec): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'homeostat-footprint-'));
  try {
    return await measureIn(spec, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureIn(spec: RunSpec, dir: string): Promise<RunResult> {
  const probePath = join(dir, 'probe.jsonl');
  const logPath = join(dir, 'daemon.log');
  const { openSync, closeSync } = await import('node:fs');
  const logFd = openSync(logPath, 'w');
  const startedAtMs = Date.now();
  const child = spawn(process.execPath, commandFor(spec, dir), {
    cwd: dir,
    env: { ...process.env, FOOTPRINT_PROBE_OUT: probePath, FOOTPRINT_WARMUP_MS: String(spec.warmupS * 1000) },
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let startS: number | undefined;
  const deadline = startedAtMs + (spec.warmupS + spec.durationS) * 1000;
  while (Date.now() < deadline) {
    await sleep(200);
    if (
      startS === undefined &&
      spec.loops !== undefined &&
      readText(logPath).includes('homeostat regulating')
    ) {
      startS = (Date.now() - startedAtMs) / 1000;
    }
    if (child.exitCode !== null)
      throw new Error(`${spec.label} exited early:\n${readText(logPath).slice(-2000)}`);
  }
  if (spec.heapSnapshotPath) await takeHeapSnapshot(child.pid!, dir, probePath, spec.heapSnapshotPath);
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(kill);
  const lines = readText(probePath)
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ProbeLine);
  const final = lines.findLast((line) => line.final);
  const asRan = lines.findLast((line) => !line.final);
  if (!final || !asRan) throw new Error(`${spec.label}: the probe wrote no figures (${probePath})`);
  const simHours = (asRan.windowS * spec.speed) / 3600;
  const result: RunResult = {
    label: spec.label,
    ...(spec.loops === undefined ? {} : { loops: spec.loops }),
    mqtt: spec.mqttUrl !== undefined,
    speed: spec.speed,
    ...(startS === undefined ? {} : { startS }),
    rssMb: mb(asRan.rssBytes),
    rssPeakMb: mb(Math.max(...lines.map((line) => line.rssBytes))),
    heapUsedMb: mb(final.heapUsedBytes),
    heapTotalMb: mb(asRan.heapTotalBytes),
    cpuS: Math.round(asRan.cpuS * 100) / 100,
    cpuPerSimHourS: Math.round((asRan.cpuS / simHours) * 10) / 10,
    delayP99Ms: asRan.delayP99Ms,
    delayMaxMs: asRan.delayMaxMs,
  };
  if (spec.loops === undefined) return result;
  // Simulated time starts at the wall time the daemon built its clock (~ process start), so
  // the window's start in simulated ms is start + warm-up × speed; ends are approximations.
  const fromSimMs = startedAtMs + spec.warmupS * 1000 * spec.speed;
  const gaps = readingGaps(join(dir, 'state.db'), fromSimMs, SENSOR_PERIOD_S + LATE_SLACK_S);
  const logLines = readText(logPath).split('\n').length - 1;
  return { ...result, ...gaps, logLines };
}

/**
 * SIGUSR2 (--heapsnapshot-signal): the snapshot is written on the main thread, so once the file
 * exists and the probe wrote a line after it, the file is complete.
 */
async function takeHeapSnapshot(pid: number, dir: string, probePath: string, target: string): Promise<void> {
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const file = readdirSync(dir).find((name) => name.endsWith('.heapsnapshot'));
    if (!file) continue;
    const probeLength = readText(probePath).length;
    await sleep(1_500);
    if (readText(probePath).length > probeLength) {
      copyFileSync(join(dir, file), target);
      return;
    }
  }
  throw new Error(`no heap snapshot from ${pid} in ${dir}`);
}

function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}
