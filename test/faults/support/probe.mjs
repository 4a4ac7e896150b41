/**
 * Preloaded into a daemon child process by the fault suite (NODE_OPTIONS=--import=<this file>),
 * never by homeostat itself. Plain JavaScript so it loads before tsx.
 *
 * - HOMEOSTAT_FAULT_PROBE=<file>: every PROBE_EVERY_MS appends one JSON line
 *   `{"atMs","maxDelayMs","p99DelayMs","windowP99DelayMs","windowMaxDelayMs","rssBytes","elapsedMs","cpuMs","gcMaxMs"}`: the
 *   event-loop delay since the previous line (perf_hooks.monitorEventLoopDelay, plus the
 *   lateness of this timer itself, which also catches one long synchronous block), the delay
 *   since the test last created `<file>.window`, the resident set size and the V8 heap in use. The test reads the
 *   lines of the window it cares about (a lock, a flood).
 * - HOMEOSTAT_FAULT_CLOCK=<file>: on SIGUSR2 the process's wall clock (Date.now, new Date())
 *   jumps by the number of milliseconds written in that file (cumulative offset), as NTP or a
 *   person setting the time would. Monotonic time (performance.now, process.hrtime, timers)
 *   does not move: that is the point of the clock-step scenario.
 */
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A full garbage collection on request (`<probe file>.gc`): the heap in use right after it is
// the live heap, what a leak would grow (without it, heapUsed counts garbage V8 has not yet
// collected in an idle process).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');

const PROBE_EVERY_MS = 100;
const NS_PER_MS = 1e6;

/** Real wall time, whatever Date.now has been made to say. */
const realNowMs = () => performance.timeOrigin + performance.now();

const probeFile = process.env.HOMEOSTAT_FAULT_PROBE;
if (probeFile) {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  // A second histogram over a window the test opens by creating `<probe file>.window`: its
  // p99 is the true 99th percentile over the whole window (percentiles of samples do not merge).
  const windowHistogram = monitorEventLoopDelay({ resolution: 5 });
  windowHistogram.enable();
  const windowFile = `${probeFile}.window`;
  const gcFile = `${probeFile}.gc`;
  let lastTickMs = realNowMs();
  // What a long window was: the process's CPU time in it (on-CPU: its own work; far below the
  // window's length: it was not scheduled) and its longest garbage-collection pause.
  let lastCpu = process.cpuUsage();
  let gcMaxMs = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMaxMs = Math.max(gcMaxMs, entry.duration);
  }).observe({ entryTypes: ['gc'] });
  const round = (ns) => Math.round((ns / NS_PER_MS) * 10) / 10;
  const timer = setInterval(() => {
    const nowMs = realNowMs();
    const elapsedMs = nowMs - lastTickMs;
    const lateMs = Math.max(0, elapsedMs - PROBE_EVERY_MS);
    lastTickMs = nowMs;
    const cpu = process.cpuUsage(lastCpu);
    lastCpu = process.cpuUsage();
    if (existsSync(windowFile)) {
      windowHistogram.reset();
      rmSync(windowFile, { force: true });
    }
    let collected = false;
    if (existsSync(gcFile)) {
      rmSync(gcFile, { force: true });
      collectGarbage();
      collected = true;
    }
    const line = {
      atMs: Math.round(nowMs),
      maxDelayMs: Math.round(Math.max(histogram.max / NS_PER_MS, lateMs) * 10) / 10,
      p99DelayMs: round(histogram.percentile(99)),
      windowP99DelayMs: round(windowHistogram.percentile(99)),
      windowMaxDelayMs: round(windowHistogram.max),
      rssBytes: process.memoryUsage.rss(),
      heapUsedBytes: process.memoryUsage().heapUsed,
      elapsedMs: Math.round(elapsedMs),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      gcMaxMs: Math.round(gcMaxMs * 10) / 10,
      ...(collected ? { afterGc: true } : {}),
    };
    histogram.reset();
    gcMaxMs = 0;
    try {
      appendFileSync(probeFile, `${JSON.stringify(line)}\n`);
    } catch {
      // The probe's file is the test's business; never disturb the daemon.
    }
  }, PROBE_EVERY_MS);
  timer.unref();
}

const clockFile = process.env.HOMEOSTAT_FAULT_CLOCK;
if (clockFile) {
  const RealDate = Date;
  let offsetMs = 0;
  class SteppedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offsetMs);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offsetMs;
    }
  }
  globalThis.Date = SteppedDate;
  process.on('SIGUSR2', () => {
    try {
      offsetMs = Number(readFileSync(clockFile, 'utf8').trim()) || 0;
    } catch {
      offsetMs = 0;
    }
  });
}
