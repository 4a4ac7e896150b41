/**
 * RSS the HTTP server and the dashboard add to the daemon: two child processes side by side,
 * both the built daemon (`node dist/cli.js run`) on the same generated config of N loops and
 * the V8 flags of the systemd unit (its NODE_OPTIONS), one with `http: { port: <free> }`, one
 * with `http: { enabled: false }`, each with its own SQLite file; and a third like the second
 * (the control): how far two identical processes differ is the noise of the difference.
 *
 * Timeline (both at once): start, wait for "homeostat regulating" and the API answering, settle,
 * read VmRSS (/proc/<pid>/status) several times → "idle"; then the http one gets a dashboard
 * visit (page, assets, node, loops, each loop's history and events), 3 SSE streams that stay
 * open, and a few /metrics scrapes; settle again, read both several times → "used". Each
 * figure is the median of its readings.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../support/net.js';
import { makeTempDir } from '../../support/tmp.js';
import { footprintConfigText } from '../footprint/config.js';
import { REPO_ROOT } from '../footprint/measure.js';
import { dashboardVisit } from './dashboard.js';
import { SseClient } from './sse.js';
import { median, sleep } from './stats.js';

export interface MemorySpec {
  loops: number;
  /** NODE_OPTIONS of both processes (the systemd unit's). */
  nodeOptions: string;
  settleS: number;
  readings: number;
  sseStreams: number;
  scrapes: number;
}

export interface MemoryResult {
  loops: number;
  /** Median VmRSS before any request. */
  idle: Rss;
  /** Median VmRSS after the visit, with the streams still open. */
  used: Rss;
  visitRequests: number;
  sseFrames: number;
}

/** Median VmRSS, MB: with http, without, their difference; a second one without, and its difference. */
export interface Rss {
  withMb: number;
  withoutMb: number;
  addedMb: number;
  controlMb: number;
  noiseMb: number;
}

interface Daemon {
  child: ChildProcess;
  logPath: string;
  label: string;
}

/** The systemd unit's NODE_OPTIONS (what the daemon runs with on a Pi). */
export function unitNodeOptions(): string {
  const unit = readFileSync(join(REPO_ROOT, 'systemd/homeostat.service'), 'utf8');
  return /^Environment="NODE_OPTIONS=([^"]*)"$/m.exec(unit)?.[1] ?? '';
}

export async function measureMemory(spec: MemorySpec): Promise<MemoryResult> {
  const { dir, remove } = makeTempDir('homeostat-bench-http-rss-');
  const port = await freePort();
  const daemons: Daemon[] = [];
  const streams: SseClient[] = [];
  try {
    const withHttp = start(spec, dir, 'with', `http:\n  port: ${port}\n`);
    daemons.push(withHttp);
    const without = start(spec, dir, 'without', 'http:\n  enabled: false\n');
    daemons.push(without);
    // A second one without http: how far two identical daemons differ (the noise floor).
    const control = start(spec, dir, 'control', 'http:\n  enabled: false\n');
    daemons.push(control);
    const baseUrl = `http://127.0.0.1:${port}`;
    await Promise.all(daemons.map(regulating));
    await answering(`${baseUrl}/api/health`, withHttp);
    await sleep(spec.settleS * 1000);
    const idle = await readAll(withHttp, without, control, spec.readings);
    const visitRequests = await dashboardVisit(baseUrl);
    for (let i = 0; i < spec.sseStreams; i++) {
      const stream = new SseClient(`${baseUrl}/api/stream`);
      await stream.open();
      streams.push(stream);
    }
    for (let i = 0; i < spec.scrapes; i++) {
      await (await fetch(`${baseUrl}/metrics`)).text();
      await sleep(1_000);
    }
    await sleep(spec.settleS * 1000);
    const used = await readAll(withHttp, without, control, spec.readings);
    if (!readLog(without).every((line) => !line.includes('dashboard and API at'))) {
      throw new Error('the process with http.enabled false serves HTTP');
    }
    const sseFrames = streams.reduce((sum, stream) => sum + stream.frames, 0);
    return { loops: spec.loops, idle, used, visitRequests, sseFrames };
  } finally {
    for (const stream of streams) stream.close();
    await Promise.all(daemons.map(stop));
    remove();
  }
}

function start(spec: MemorySpec, dir: string, label: string, httpBlock: string): Daemon {
  const configPath = join(dir, `${label}.yaml`);
  writeFileSync(configPath, `${footprintConfigText(spec.loops)}${httpBlock}`);
  const logPath = join(dir, `${label}.log`);
  const logFd = openSync(logPath, 'w');
  const args = [join(REPO_ROOT, 'dist/cli.js'), 'run', '--config', configPath];
  args.push('--db', join(dir, `${label}.db`), '--log-format', 'json');
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { ...process.env, NODE_OPTIONS: spec.nodeOptions },
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  return { child, logPath, label };
}

function readLog(daemon: Daemon): string[] {
  return existsSync(daemon.logPath) ? readFileSync(daemon.logPath, 'utf8').split('\n') : [];
}

async function regulating(daemon: Daemon): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (daemon.child.exitCode !== null) {
      throw new Error(`${daemon.label} exited early:\n${readLog(daemon).join('\n').slice(-2000)}`);
    }
    if (readLog(daemon).some((line) => line.includes('homeostat regulating'))) return;
    await sleep(100);
  }
  throw new Error(`${daemon.label}: not regulating within 30 s`);
}

async function answering(url: string, daemon: Daemon): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`${daemon.label}: ${url} not answering within 10 s`);
}

/** VmRSS of the three, `count` readings 1 s apart: medians and differences in MB (one decimal). */
async function readAll(withHttp: Daemon, without: Daemon, control: Daemon, count: number): Promise<Rss> {
  const readings: [number[], number[], number[]] = [[], [], []];
  for (let i = 0; i < count; i++) {
    if (i > 0) await sleep(1_000);
    for (const [j, daemon] of [withHttp, without, control].entries()) readings[j]!.push(vmRssKb(daemon));
  }
  const [withMb, withoutMb, controlMb] = readings.map((kb) => Math.round(median(kb) / 102.4) / 10) as [
    number,
    number,
    number,
  ];
  const diff = (a: number, b: number) => Math.round((a - b) * 10) / 10;
  return {
    withMb,
    withoutMb,
    addedMb: diff(withMb, withoutMb),
    controlMb,
    noiseMb: diff(controlMb, withoutMb),
  };
}

function vmRssKb(daemon: Daemon): number {
  const status = readFileSync(`/proc/${daemon.child.pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`${daemon.label}: no VmRSS in /proc/${daemon.child.pid}/status`);
  return Number(kb);
}

async function stop(daemon: Daemon): Promise<void> {
  const { child } = daemon;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(kill);
}
