/**
 * Loopback latency of the HTTP API on a real node (src/node.ts through test/support/node.ts:
 * store supervisor on a SQLite file in a temp dir, simulated drivers, the HTTP server on
 * 127.0.0.1, port 0), on N generated loops (the footprint bench's: the demo's room loop N times,
 * a sensor every 10 s), on the real clock or a ScaledClock (`speed`) so the loops keep cycling
 * as the requests come.
 *
 * Before the start, loop room_0 gets 6 h of readings every 10 s (2,160, flushed to SQLite), so
 * the history request reads and downsamples what a dashboard's default chart does.
 *
 * The client (undici fetch, one kept-alive connection; node:http for the stream) runs in the
 * same process as the node: its own work is in the figures, and it shares the event loop with
 * the regulation, as a Pi's CPU would be shared.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { RealClock } from '../../../src/runtime/real-clock.js';
import { ScaledClock } from '../../../src/runtime/scaled-clock.js';
import type { Sample } from '../../../src/store/state-store.js';
import { buildTestNode } from '../../support/node.js';
import { makeTempDir } from '../../support/tmp.js';
import { footprintConfigText, SENSOR_PERIOD_S } from '../footprint/config.js';
import { startBareServer } from './bare.js';
import { type PageWeight, servedPageWeight } from './dashboard.js';
import { type Stats, sleep, timeGets } from './stats.js';
import { timeWrites, type WriteFigures } from './writes.js';

export interface LatencySpec {
  loops: number;
  speed: number;
  /** Requests per cheap read series (one loop, all loops). */
  reads: number;
  /** Requests per heavy read series (metrics, history). */
  heavyReads: number;
  writes: number;
}

/** One read series: the API, the bare server answering the same bytes, the answer's size. */
export interface ReadFigures {
  api: Stats;
  bare: Stats;
  bytes: number;
}

export type ReadName = 'loop' | 'loops' | 'metrics' | 'history';

export interface LatencyResult {
  loops: number;
  speed: number;
  reads: Record<ReadName, ReadFigures>;
  writes: WriteFigures;
  historyPoints: number;
  /** The page and assets as this server serves them. */
  page: PageWeight;
  /** Machine load (1 min average, all cores) when the run started: other processes' share. */
  loadAverage1m: number;
  /** Event-loop delay of this process (node and client) over the timed series, ms. */
  eventLoopDelay: { p99Ms: number; maxMs: number };
}

const HISTORY_LOOP = 'room_0';
const HISTORY_HOURS = 6;
/** Starting setpoints of the generated loops are 18..22 (footprint/config.ts): these differ. */
const WRITE_VALUES: readonly [number, number] = [23, 24];

export async function measureLatency(spec: LatencySpec): Promise<LatencyResult> {
  const { dir, remove } = makeTempDir('homeostat-bench-http-');
  const clock = spec.speed === 1 ? new RealClock() : new ScaledClock(spec.speed);
  const node = buildTestNode(footprintConfigText(spec.loops), join(dir, 'state.db'), {
    clock,
    http: { host: '127.0.0.1', port: 0 },
  });
  const bare = await startBareServer();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  try {
    seedHistory(node.store.state, clock.nowMs());
    const loadAverage1m = Math.round(loadavg()[0]! * 100) / 100;
    await node.start();
    const baseUrl = await listening(() => node.http?.url);
    await everyLoopCycled(() => node.daemon.statuses().length, spec.loops);
    const paths: Record<ReadName, string> = {
      loop: `/api/loops/${HISTORY_LOOP}`,
      loops: '/api/loops',
      metrics: '/metrics',
      history: `/api/loops/${HISTORY_LOOP}/history?since=${HISTORY_HOURS}h&maxPoints=500`,
    };
    const history = (await (await fetch(`${baseUrl}${paths.history}`)).json()) as { points: unknown[] };
    delay.enable();
    const reads = {} as Record<ReadName, ReadFigures>;
    for (const name of Object.keys(paths) as ReadName[]) {
      const path = paths[name];
      const res = await fetch(`${baseUrl}${path}`);
      const body = Buffer.from(await res.arrayBuffer());
      bare.set(path, res.headers.get('content-type') ?? 'application/json', body);
      const n = name === 'loop' || name === 'loops' ? spec.reads : spec.heavyReads;
      const timed = await timeGets(`${baseUrl}${path}`, n, `${bare.url}${path}`);
      reads[name] = { api: timed.api, bare: timed.bare!, bytes: body.byteLength };
    }
    const loops = Array.from({ length: spec.loops }, (_, i) => `room_${i}`);
    const writes = await timeWrites({ baseUrl, loops, values: () => WRITE_VALUES, n: spec.writes, clock });
    delay.disable();
    const page = await servedPageWeight(baseUrl);
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    return {
      loops: spec.loops,
      speed: spec.speed,
      reads,
      writes,
      historyPoints: history.points.length,
      page,
      loadAverage1m,
      eventLoopDelay: { p99Ms: ms(delay.percentile(99)), maxMs: ms(delay.max) },
    };
  } finally {
    delay.disable();
    await bare.close();
    await node.stop('bench');
    remove();
  }
}

/**
 * 6 h of readings of HISTORY_LOOP, one every sensor period up to `nowMs`, written to SQLite
 * (the node's store is open from its construction; its own readings follow these).
 */
function seedHistory(
  state: { addSample(loop: string, sample: Sample): void; flush(): number },
  nowMs: number,
) {
  const periodMs = SENSOR_PERIOD_S * 1000;
  const count = (HISTORY_HOURS * 3600 * 1000) / periodMs;
  for (let i = count; i > 0; i--) {
    const atMs = nowMs - i * periodMs;
    const wave = Math.sin(i / 90);
    state.addSample(HISTORY_LOOP, {
      atMs,
      setpoint: 18,
      measured: Math.round((18 + wave) * 16) / 16,
      output: Math.round((0.4 - wave * 0.3) * 1000) / 1000,
      action: wave < 0 ? 'heating' : 'idle',
    });
  }
  state.flush();
}

async function listening(url: () => string | undefined): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const found = url();
    if (found) return found;
    await sleep(10);
  }
  throw new Error('the HTTP server did not listen within 5 s');
}

async function everyLoopCycled(cycled: () => number, loops: number): Promise<void> {
  for (let i = 0; i < 1500; i++) {
    if (cycled() >= loops) return;
    await sleep(10);
  }
  throw new Error(`only ${cycled()} of ${loops} loops cycled within 15 s`);
}
