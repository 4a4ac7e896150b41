/**
 * History benchmark (`node --import tsx test/bench/http/history.ts [--loops 4] [--runs 3] [--json]`):
 * what a dashboard's 7-day and 365-day charts cost the daemon. Figures printed, never asserted.
 *
 * A real node (test/support/node.ts: store supervisor on a SQLite file in a temp dir, simulated
 * loops, the HTTP server on 127.0.0.1 port 0, the real clock) whose loops get, before the start,
 * what a year of running leaves (retention's defaults): 7 days of readings every 10 s, flushed
 * every 600 s (storage.memoryFlushS), and 300-s bucket averages from 365 to 7 days back.
 *
 * For each range, `runs` times (figures: the median run, and the worst stall of all runs):
 * - sync: StateStore.recentHistory + downsampleHistory of one loop, called directly: the old
 *   request path, all of it one stall of the event loop;
 * - GET 1: one history request (maxPoints 500) over HTTP;
 * - GET all: one request per loop at once (what the dashboard fires).
 * The stall is the longest gap between ticks of a 1-ms interval while the requests run (the
 * client shares the process, as on a Pi its CPU would be shared).
 */

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type Database from 'better-sqlite3';
import { downsampleHistory } from '../../../src/http/downsample.js';
import { RealClock } from '../../../src/runtime/real-clock.js';
import { insertSamples, type Sample } from '../../../src/store/state-store.js';
import { fakeSample } from '../../support/history.js';
import { buildTestNode } from '../../support/node.js';
import { makeTempDir } from '../../support/tmp.js';
import { footprintConfigText, SENSOR_PERIOD_S } from '../footprint/config.js';

const DAY_MS = 86_400_000;
const RAW_DAYS = 7;
const KEPT_DAYS = 365;
const FLUSH_MS = 600_000;
const BUCKET_S = 300;
const BUCKETS_PER_ROW = 36;
const MAX_POINTS = 500;

export interface HistoryCase {
  range: string;
  /** Samples (readings and bucket averages) in range, per loop. */
  samples: number;
  syncMs: number;
  one: { answerMs: number; stallMs: number };
  all: { answerMs: number; stallMs: number };
}

export async function measureHistory(loops: number, runs: number): Promise<HistoryCase[]> {
  const { dir, remove } = makeTempDir('homeostat-bench-history-');
  const clock = new RealClock();
  const node = buildTestNode(footprintConfigText(loops), join(dir, 'state.db'), {
    clock,
    http: { host: '127.0.0.1', port: 0 },
  });
  try {
    const ids = Array.from({ length: loops }, (_, i) => `room_${i}`);
    const nowMs = clock.nowMs();
    seed(node.store, ids, nowMs);
    await node.start();
    const base = await listening(() => node.http?.url);
    const cases: HistoryCase[] = [];
    for (const [range, days] of [
      ['7d', RAW_DAYS],
      ['365d', KEPT_DAYS],
    ] as const) {
      const path = (loop: string) => `/api/loops/${loop}/history?since=${range}&maxPoints=${MAX_POINTS}`;
      const fromMs = clock.nowMs() - days * DAY_MS;
      const samples = node.store.state.recentHistory(ids[0]!, fromMs, clock.nowMs()).length;
      const sync: number[] = [];
      const one: Array<{ answerMs: number; stallMs: number }> = [];
      const all: Array<{ answerMs: number; stallMs: number }> = [];
      await fetchJson(base + path(ids[0]!)); // warm-up
      for (let run = 0; run < runs; run++) {
        const t0 = performance.now();
        const to = clock.nowMs();
        downsampleHistory(
          node.store.state.recentHistory(ids[0]!, to - days * DAY_MS, to),
          { fromMs: to - days * DAY_MS, toMs: to },
          MAX_POINTS,
        );
        sync.push(performance.now() - t0);
        one.push(await probed(() => fetchJson(base + path(ids[0]!))));
        all.push(await probed(() => Promise.all(ids.map((loop) => fetchJson(base + path(loop))))));
      }
      cases.push({ range, samples, syncMs: median(sync), one: summary(one), all: summary(all) });
    }
    return cases;
  } finally {
    await node.stop('bench');
    remove();
  }
}

/** Readings of the last RAW_DAYS and bucket averages before, for every loop, as a year leaves them. */
function seed(
  store: {
    state: { addSample(loop: string, sample: Sample): void; flush(): number };
    database: Database.Database;
  },
  loops: readonly string[],
  nowMs: number,
): void {
  const insert = store.database.prepare<[string, number, number, number, Buffer]>(
    'INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?)',
  );
  const rawFromMs = nowMs - RAW_DAYS * DAY_MS;
  store.database.transaction(() => {
    for (const loop of loops) {
      let row: Sample[] = [];
      for (let atMs = nowMs - KEPT_DAYS * DAY_MS; atMs < rawFromMs; atMs += BUCKET_S * 1000) {
        row.push(fakeSample(atMs));
        if (row.length === BUCKETS_PER_ROW) {
          insertSamples(insert, loop, row, BUCKET_S);
          row = [];
        }
      }
      insertSamples(insert, loop, row, BUCKET_S);
    }
  })();
  const periodMs = SENSOR_PERIOD_S * 1000;
  let nextFlushMs = rawFromMs + FLUSH_MS;
  for (let atMs = rawFromMs; atMs < nowMs; atMs += periodMs) {
    for (const loop of loops) store.state.addSample(loop, fakeSample(atMs));
    if (atMs >= nextFlushMs) {
      store.state.flush();
      nextFlushMs += FLUSH_MS;
    }
  }
  store.state.flush();
}

/** Runs `work` with a 1-ms interval ticking: its time, and the longest gap between ticks. */
async function probed(work: () => Promise<unknown>): Promise<{ answerMs: number; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  await work();
  const answerMs = performance.now() - t0;
  clearInterval(timer);
  stallMs = Math.max(stallMs, performance.now() - last);
  return { answerMs, stallMs };
}

async function fetchJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

function summary(runs: Array<{ answerMs: number; stallMs: number }>) {
  return {
    answerMs: median(runs.map((r) => r.answerMs)),
    stallMs: Math.max(...runs.map((r) => r.stallMs)),
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10;
}

async function listening(url: () => string | undefined): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const found = url();
    if (found) return found.replace(/\/$/, '');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the HTTP server did not listen within 5 s');
}

function table(loops: number, cases: readonly HistoryCase[]): string {
  const lines = [
    `history, ${loops} loops, maxPoints ${MAX_POINTS} (ms; stall = longest event-loop gap, worst run)`,
    'range  samples/loop  sync(old path)  GET 1: answer  stall   GET all: answer  stall',
  ];
  for (const c of cases) {
    lines.push(
      [
        c.range.padEnd(6),
        String(c.samples).padStart(12),
        c.syncMs.toFixed(1).padStart(15),
        c.one.answerMs.toFixed(1).padStart(14),
        c.one.stallMs.toFixed(1).padStart(6),
        c.all.answerMs.toFixed(1).padStart(16),
        c.all.stallMs.toFixed(1).padStart(6),
      ].join(' '),
    );
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      loops: { type: 'string', default: '4' },
      runs: { type: 'string', default: '3' },
      json: { type: 'boolean', default: false },
    },
  });
  const loops = Number(values.loops);
  const cases = await measureHistory(loops, Number(values.runs));
  process.stdout.write(values.json ? `${JSON.stringify(cases, null, 2)}\n` : `${table(loops, cases)}\n`);
}
