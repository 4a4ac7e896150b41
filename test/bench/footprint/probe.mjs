/**
 * Preloaded into each measured process (`node --import <this file> …`), the daemon and the bare
 * baseline alike, so both carry the same small cost (one histogram, one 1 s timer, no imports
 * beyond node:*). Plain JS: it runs under `node dist/cli.js`, where there is no tsx.
 *
 * Every second it writes one JSON line to $FOOTPRINT_PROBE_OUT: RSS, heap used, CPU seconds and
 * the event-loop delay (p50/p99/max, ms) since the window opened, $FOOTPRINT_WARMUP_MS after
 * start. On SIGTERM, before the daemon's own handler runs, it writes a last line after a full GC
 * (when --expose-gc), so "heap used" is the live heap, not garbage waiting for a collection; a
 * process with no other SIGTERM handler (the bare baseline) then exits.
 */
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const out = process.env.FOOTPRINT_PROBE_OUT;
if (out) {
  const warmupMs = Number(process.env.FOOTPRINT_WARMUP_MS ?? 0);
  // 10 ms resolution would hide the stalls we look for; 5 ms is the finest that costs nothing.
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const startedAt = performance.now();
  let windowOpenedAt;
  let cpuAtOpen;
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  const write = (final) => {
    if (windowOpenedAt === undefined) return;
    const cpu = process.cpuUsage(cpuAtOpen);
    const memory = process.memoryUsage();
    const line = {
      final,
      windowS: (performance.now() - windowOpenedAt) / 1000,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      heapTotalBytes: memory.heapTotal,
      externalBytes: memory.external,
      cpuS: (cpu.user + cpu.system) / 1e6,
      delayP50Ms: ms(histogram.percentile(50)),
      delayP99Ms: ms(histogram.percentile(99)),
      delayMaxMs: ms(histogram.max),
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  };
  const open = setTimeout(
    () => {
      windowOpenedAt = performance.now();
      cpuAtOpen = process.cpuUsage();
      histogram.reset();
    },
    Math.max(0, warmupMs - (performance.now() - startedAt)),
  );
  open.unref();
  setInterval(() => write(false), 1_000).unref();
  process.on('SIGTERM', () => {
    write(false); // RSS as the process ran…
    globalThis.gc?.();
    write(true); // …and the live heap after a full collection.
    if (process.listenerCount('SIGTERM') === 1) process.exit(0);
  });
}
