/**
 * Setpoint writes over HTTP, one at a time, timed from just before the POST (process.hrtime):
 * - write → answer: the 200 CommandResult has arrived (validated, committed to SQLite);
 * - write → event frame: the SSE `event` frame `setpoint-changed` to the new value arrived;
 * - write → status shown: the first SSE `status` frame of that loop with the new setpoint;
 * - write → status applied: the first such frame whose observedGeneration has reached the
 *   generation of the answer (the loop ran a cycle on it).
 * The stream is the dashboard's: GET /api/stream of every loop, opened before the first write.
 *
 * Round-robin over the config's loops, each alternating between two setpoints off its own, so
 * every write is a change. The daemon accepts at most `burst` changes at once per loop, then
 * `perMinute` (on the daemon's clock, so a ScaledClock refills faster), and the node takes no
 * other limit: the bench keeps the same token bucket per loop, a little slower, on the node's
 * clock, and waits for a token before each write (the wait is not in the figures).
 */
import { ChangeLimiter, DEFAULT_CHANGE_LIMIT } from '../../../src/control/change-limiter.js';
import type { Clock } from '../../../src/time/clock.js';
import { SseClient, type SseFrame } from './sse.js';
import { elapsedMs, type Stats, sleep, stats, withTimeout } from './stats.js';

/** The bench's bucket refills this much slower than the daemon's (it reads the clock earlier). */
const PACING_MARGIN = 0.95;
/** A write whose frames have not all arrived within this is a failure, ms. */
const WRITE_TIMEOUT_MS = 5_000;

export interface WriteFigures {
  writes: number;
  /** Real seconds spent waiting for the change limit (not in the figures). */
  pacingWaitS: number;
  wallS: number;
  answer: Stats;
  eventFrame: Stats;
  statusShown: Stats;
  statusApplied: Stats;
}

interface Pending {
  loop: string;
  value: number;
  /** Status frames of the loop with the new setpoint: arrival and observedGeneration. */
  statuses: Array<{ atNs: bigint; observedGeneration: number }>;
  eventNs?: bigint;
  wake: () => void;
}

/**
 * `n` writes to `loops` (ids) at `baseUrl`; `values(loopIndex)` gives the two setpoints a
 * loop alternates between. Throws when a write is refused or its frames do not come.
 */
export async function timeWrites(opts: {
  baseUrl: string;
  loops: readonly string[];
  values: (loopIndex: number) => readonly [number, number];
  n: number;
  clock: Clock;
}): Promise<WriteFigures> {
  const { baseUrl, loops, n, clock } = opts;
  let pending: Pending | undefined;
  const stream = new SseClient(`${baseUrl}/api/stream`, (frame) => {
    if (pending && matches(pending, frame)) pending.wake();
  });
  await stream.open();
  const { burst, perMinute } = DEFAULT_CHANGE_LIMIT;
  const pacer = new ChangeLimiter({ burst, perMinute: perMinute * PACING_MARGIN });
  const samples = {
    answer: [] as number[],
    event: [] as number[],
    shown: [] as number[],
    applied: [] as number[],
  };
  let waitedMs = 0;
  const startedMs = performance.now();
  try {
    for (let i = 0; i < n; i++) {
      const loopIndex = i % loops.length;
      const loop = loops[loopIndex]!;
      const value = opts.values(loopIndex)[Math.floor(i / loops.length) % 2]!;
      const waitStartMs = performance.now();
      while (!pacer.take(loop, clock.nowMs())) await sleep(2);
      waitedMs += performance.now() - waitStartMs;
      const write: Pending = { loop, value, statuses: [], wake: () => {} };
      pending = write;
      const what = `write ${i + 1} (${loop} setpoint ${value})`;
      const startNs = process.hrtime.bigint();
      const res = await fetch(`${baseUrl}/api/loops/${loop}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ setpoint: value }),
      });
      const result = (await res.json()) as { accepted: boolean; reason?: string; generation?: number };
      const answerNs = process.hrtime.bigint();
      if (res.status !== 200 || !result.accepted) {
        throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(result)}`);
      }
      const generation = result.generation ?? 0;
      const applied = () => write.statuses.find((s) => s.observedGeneration >= generation);
      await withTimeout(
        (async () => {
          while (write.eventNs === undefined || !applied()) {
            await new Promise<void>((resolve) => {
              write.wake = resolve;
            });
          }
        })(),
        WRITE_TIMEOUT_MS,
        `${what}: its event and applied status frames`,
      );
      pending = undefined;
      samples.answer.push(elapsedMs(startNs, answerNs));
      samples.event.push(elapsedMs(startNs, write.eventNs!));
      samples.shown.push(elapsedMs(startNs, write.statuses[0]!.atNs));
      samples.applied.push(elapsedMs(startNs, applied()!.atNs));
    }
  } finally {
    stream.close();
  }
  return {
    writes: n,
    pacingWaitS: Math.round(waitedMs / 100) / 10,
    wallS: Math.round((performance.now() - startedMs) / 100) / 10,
    answer: stats(samples.answer),
    eventFrame: stats(samples.event),
    statusShown: stats(samples.shown),
    statusApplied: stats(samples.applied),
  };
}

/** Notes a frame that belongs to the pending write; true when it did. */
function matches(write: Pending, frame: SseFrame): boolean {
  if (frame.event === 'status') {
    const view = frame.data as { loop: string; setpoint: number; observedGeneration: number };
    if (view.loop !== write.loop || view.setpoint !== write.value) return false;
    write.statuses.push({ atNs: frame.atNs, observedGeneration: view.observedGeneration });
    return true;
  }
  if (frame.event === 'event') {
    const event = frame.data as { loop: string | null; kind: string; data?: { to?: unknown } };
    if (event.loop !== write.loop || event.kind !== 'setpoint-changed' || event.data?.to !== write.value)
      return false;
    write.eventNs ??= frame.atNs;
    return true;
  }
  return false;
}
