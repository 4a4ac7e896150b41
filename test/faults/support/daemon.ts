import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CliProcess, type DaemonStart, startDaemon } from '../../integration/helpers.js';

/**
 * Daemons as child processes (`homeostat run`, the way systemd runs it) with the probe
 * (support/probe.mjs) preloaded: event-loop delay and RSS sampled from inside, the wall clock
 * steppable from outside. Child processes because the faults here are the process's own: a
 * SIGKILL, its memory, its event loop blocked by SQLite.
 */

const PROBE_PATH = fileURLToPath(new URL('./probe.mjs', import.meta.url));

export interface ProbedDaemon {
  run: CliProcess;
  /** JSON lines of the probe (see probe.mjs). */
  probePath: string;
  /** With `steppableClock`: write an offset (ms) here, then `stepClock` sends SIGUSR2. */
  clockPath?: string;
}

export interface ProbedStart extends DaemonStart {
  /** Directory for the probe's files (the test's temp dir). */
  dir: string;
  /** The wall clock can be stepped (HOMEOSTAT_FAULT_CLOCK). */
  steppableClock?: boolean;
  /** Distinguishes the probe files of several runs in one directory. */
  name?: string;
}

export function startProbedDaemon(opts: ProbedStart): ProbedDaemon {
  const name = opts.name ?? 'daemon';
  const probePath = join(opts.dir, `${name}.probe.jsonl`);
  const clockPath = opts.steppableClock ? join(opts.dir, `${name}.clock`) : undefined;
  const nodeOptions = [process.env.NODE_OPTIONS ?? '', `--import=${PROBE_PATH}`].join(' ').trim();
  const run = startDaemon({
    ...opts,
    env: {
      ...opts.env,
      NODE_OPTIONS: nodeOptions,
      HOMEOSTAT_FAULT_PROBE: probePath,
      ...(clockPath ? { HOMEOSTAT_FAULT_CLOCK: clockPath } : {}),
    },
  });
  return { run, probePath, ...(clockPath ? { clockPath } : {}) };
}

/** One probe line: the event-loop delay over the last 100 ms and the RSS at its end. */
export interface ProbeSample {
  atMs: number;
  maxDelayMs: number;
  p99DelayMs: number;
  /** Over the window opened by `openProbeWindow` (or since start). */
  windowP99DelayMs: number;
  windowMaxDelayMs: number;
  rssBytes: number;
  /** V8 heap in use (garbage included, unless `afterGc`). */
  heapUsedBytes: number;
  /** Taken right after a full garbage collection asked for by `liveHeapBytes`. */
  afterGc?: true;
  /** Real time since the previous line, ms (100 plus the lateness). */
  elapsedMs?: number;
  /** CPU time of the whole process in that time, ms: near elapsedMs when busy, far below when not scheduled. */
  cpuMs?: number;
  /** The longest garbage-collection pause in that time, ms. */
  gcMaxMs?: number;
}

/**
 * The daemon's live heap: asks its probe for a full garbage collection and returns the heap in
 * use right after it (undefined if the probe did not answer within 2 s).
 */
export async function liveHeapBytes(daemon: ProbedDaemon): Promise<number | undefined> {
  const askedAtMs = Date.now();
  writeFileSync(`${daemon.probePath}.gc`, '');
  for (let i = 0; i < 100; i++) {
    const sample = probeSamples(daemon.probePath, askedAtMs).find((s) => s.afterGc);
    if (sample) return sample.heapUsedBytes;
    await new Promise((r) => setTimeout(r, 20));
  }
  return undefined;
}

/**
 * Opens a measuring window: the probe resets its window histogram at its next tick (within
 * 100 ms; this waits for it). `windowFigures` then reads the true p99 over the window.
 */
export async function openProbeWindow(daemon: ProbedDaemon): Promise<void> {
  const windowFile = `${daemon.probePath}.window`;
  writeFileSync(windowFile, '');
  for (let i = 0; i < 50 && existsSync(windowFile); i++) await new Promise((r) => setTimeout(r, 20));
}

/** Longest stall and true p99 of the event-loop delay since `openProbeWindow`, up to `toMs`. */
export function windowFigures(path: string, toMs: number): { longestStallMs: number; p99DelayMs: number } {
  const samples = probeSamples(path, 0, toMs);
  const last = samples.at(-1);
  if (!last) return { longestStallMs: Number.NaN, p99DelayMs: Number.NaN };
  return { longestStallMs: last.windowMaxDelayMs, p99DelayMs: last.windowP99DelayMs };
}

/** The probe's samples taken in [fromMs, toMs] (wall clock, ms since epoch). */
export function probeSamples(path: string, fromMs = 0, toMs = Number.POSITIVE_INFINITY): ProbeSample[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as ProbeSample];
      } catch {
        return []; // a line cut by a SIGKILL
      }
    })
    .filter((s) => s.atMs >= fromMs && s.atMs <= toMs);
}

/**
 * Longest stall and p99 of the event-loop delay in a window. A stall longer than the sampling
 * period shows up in the sample taken right after it, so the window should reach a little past
 * the fault's end. p99 here: the 99th percentile of the per-100-ms p99s (a good proxy over
 * windows of seconds; exact per-sample values are in the probe file).
 */
export function stallFigures(samples: ProbeSample[]): { longestStallMs: number; p99DelayMs: number } {
  if (samples.length === 0) return { longestStallMs: Number.NaN, p99DelayMs: Number.NaN };
  const p99s = samples.map((s) => s.p99DelayMs).sort((a, b) => a - b);
  return {
    longestStallMs: Math.max(...samples.map((s) => s.maxDelayMs)),
    p99DelayMs: p99s[Math.min(p99s.length - 1, Math.floor(p99s.length * 0.99))]!,
  };
}

/** VmRSS of a live process from /proc (bytes); undefined once it is gone. */
export function rssOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Sends SIGUSR2 after writing `offsetMs`: the child's wall clock is then real time + offsetMs. */
export async function stepClock(daemon: ProbedDaemon, offsetMs: number): Promise<void> {
  if (!daemon.clockPath) throw new Error('started without steppableClock');
  writeFileSync(daemon.clockPath, String(offsetMs));
  daemon.run.child.kill('SIGUSR2');
}

/**
 * Starts measuring the daemon's event loop for a fault: call the returned function when the
 * fault is over. Longest stall: the worst of the probe's per-100-ms maxima (which include a
 * timer's lateness, so one long synchronous block counts in full); p99: the true 99th
 * percentile over the whole window (not a percentile of percentiles).
 */
export async function measureFrom(
  daemon: ProbedDaemon,
): Promise<() => { longestStallMs: number; p99DelayMs: number }> {
  await openProbeWindow(daemon);
  const fromMs = Date.now();
  return () => {
    const toMs = Date.now();
    const samples = probeSamples(daemon.probePath, fromMs, toMs + 150);
    const window = windowFigures(daemon.probePath, toMs + 150);
    return {
      longestStallMs: Math.max(window.longestStallMs, ...samples.map((s) => s.maxDelayMs)),
      p99DelayMs: window.p99DelayMs,
    };
  };
}
