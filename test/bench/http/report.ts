/**
 * The HTTP benchmark's tables: latency per series (ms), RSS with and without the server (MB),
 * page weight, and the summary against the targets (p99 ≤ 20 ms on loopback, ≤ 10 MB added).
 */
import type { LatencyResult, ReadName } from './latency.js';
import type { MemoryResult } from './memory.js';
import type { Stats } from './stats.js';

export const P99_TARGET_MS = 20;
export const RSS_TARGET_MB = 10;

const f = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '—');

const READS: Array<[name: ReadName, label: string]> = [
  ['loop', 'GET /api/loops/{loop}'],
  ['loops', 'GET /api/loops'],
  ['metrics', 'GET /metrics'],
  ['history', 'GET history 6 h, 500 pts'],
];

/** The timed series of one latency run, labelled, reads then writes. */
export function series(run: LatencyResult): Array<[label: string, stats: Stats]> {
  return [
    ...READS.map(([name, label]): [string, Stats] => [label, run.reads[name].api]),
    ['POST setpoint → answer', run.writes.answer],
    ['POST → SSE event frame', run.writes.eventFrame],
    ['POST → SSE status shown', run.writes.statusShown],
    ['POST → SSE status applied', run.writes.statusApplied],
  ];
}

export function latencyTable(run: LatencyResult): string[] {
  const lines = [
    `Latency, ${run.loops} loops, clock ×${run.speed} (ms; loopback, keep-alive, one request at a time;`,
    `load average ${run.loadAverage1m} at the start; event-loop delay p99 ${run.eventLoopDelay.p99Ms} ms, max ${run.eventLoopDelay.maxMs} ms):`,
    '',
    '| series                     |     n |     p50 |     p95 |     p99 |     max |    mean | bare p50 | bare p99 |',
    '| -------------------------- | ----: | ------: | ------: | ------: | ------: | ------: | -------: | -------: |',
  ];
  const bare = new Map(READS.map(([name, label]) => [label, run.reads[name].bare]));
  for (const [label, s] of series(run)) {
    const values = [s.p50, s.p95, s.p99, s.max, s.mean].map((v) => f(v).padStart(7));
    const b = bare.get(label);
    const floor = b ? [b.p50, b.p99].map((v) => f(v).padStart(8)) : ['       —', '       —'];
    lines.push(
      `| ${label.padEnd(26)} | ${String(s.n).padStart(5)} | ${values.join(' | ')} | ${floor.join(' | ')} |`,
    );
  }
  const { reads, writes } = run;
  lines.push(
    '',
    `"bare": the same bytes from a bare node:http server in this process, each request alternating with the API's.`,
    `Answer sizes: loop ${reads.loop.bytes} B, loops ${reads.loops.bytes} B, metrics ${reads.metrics.bytes} B, history ${reads.history.bytes} B (${run.historyPoints} points).`,
    `Writes: ${writes.writes} in ${writes.wallS} s, ${writes.pacingWaitS} s of it waiting for the change limit (not in the figures).`,
    '',
  );
  return lines;
}

export function memoryTable(runs: readonly MemoryResult[], nodeOptions: string): string[] {
  const lines = [
    `RSS of the built daemon (median VmRSS, MB), http on vs http.enabled false, NODE_OPTIONS="${nodeOptions}"`,
    '(control: a second process without http; noise: control − without):',
    '',
    '| loops | moment                                 | with http | without | added | control | noise |',
    '| ----: | -------------------------------------- | --------: | ------: | ----: | ------: | ----: |',
  ];
  for (const run of runs) {
    const row = (moment: string, m: MemoryResult['idle']) =>
      `| ${String(run.loops).padStart(5)} | ${moment.padEnd(38)} | ${[
        f(m.withMb, 1).padStart(9),
        f(m.withoutMb, 1).padStart(7),
        f(m.addedMb, 1).padStart(5),
        f(m.controlMb, 1).padStart(7),
        f(m.noiseMb, 1).padStart(5),
      ].join(' | ')} |`;
    lines.push(row('idle (no request yet)', run.idle));
    lines.push(row(`after visit (${run.visitRequests} req), 3 SSE, scrapes`, run.used));
  }
  lines.push('');
  return lines;
}

export interface Verdict {
  what: string;
  value: string;
  target: string;
  met: boolean;
}

export function verdicts(latency: readonly LatencyResult[], memory: readonly MemoryResult[]): Verdict[] {
  const out: Verdict[] = [];
  for (const run of latency) {
    for (const [label, s] of series(run)) {
      out.push({
        what: `${label}, ${run.loops} loops: p99`,
        value: `${f(s.p99)} ms`,
        target: `≤ ${P99_TARGET_MS} ms`,
        met: s.p99 <= P99_TARGET_MS,
      });
    }
  }
  for (const run of memory) {
    out.push({
      what: `RSS added by server + dashboard, ${run.loops} loops`,
      value: `${f(run.used.addedMb, 1)} MB`,
      target: `≤ ${RSS_TARGET_MB} MB`,
      met: run.used.addedMb <= RSS_TARGET_MB,
    });
  }
  return out;
}

export function summaryTable(list: readonly Verdict[]): string[] {
  const width = Math.max(...list.map((v) => v.what.length), 10);
  const lines = [
    'Summary:',
    '',
    `| ${'measure'.padEnd(width)} |      value | target   | met |`,
    `| ${'-'.repeat(width)} | ---------: | -------- | --- |`,
  ];
  for (const v of list) {
    lines.push(
      `| ${v.what.padEnd(width)} | ${v.value.padStart(10)} | ${v.target.padEnd(8)} | ${v.met ? 'yes' : 'NO '} |`,
    );
  }
  lines.push('');
  return lines;
}
