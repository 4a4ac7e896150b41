/**
 * MQTT command latency benchmark (`node --import tsx test/bench/mqtt-latency.ts`;
 * `-- --n 500` for another number of commands, `--json` for JSON only, `--nagle` to leave
 * Nagle's algorithm on in the test client).
 *
 * Starts a private Mosquitto (test/integration/mosquitto.ts) and the daemon in-process on the
 * demo config, as `homeostat run` builds it (src/node.ts: simulated plants, real clock, the
 * store supervisor on a real SQLite file in a temp dir, the MqttBridge), then sends N setpoint commands
 * round-robin to the demo's three loops, each alternating between two values off its starting
 * setpoint so each one is a change, one at a time (QoS 1), and measures with process.hrtime,
 * from just before the publish:
 * - command → result: the `<loop>/result` with accepted:true and the new setpoint arrives
 *   (validated, committed to SQLite, published);
 * - command → state: a `<loop>/state` with the new setpoint and observedGeneration equal to
 *   its generation arrives (the loop ran a cycle on it and published).
 * Both travel client → broker → daemon → broker → client over loopback.
 *
 * Pacing: the daemon accepts at most `burst` changes at once per loop, then `perMinute`
 * (src/control/change-limiter.ts, 10 then 30 a minute); beyond that a command is refused, as it
 * would be for a person or Home Assistant. The bench keeps to the limit as a user must: the
 * client keeps the same token bucket per loop (a little slower, so clock jitter never makes it
 * ahead of the daemon's) and waits for a token before each command. The first `burst` commands
 * of each loop go at once, the rest one every ~2 s per loop (~0.7 s over three loops), so the
 * default 200 commands take about two minutes; the wait is not in the figures.
 *
 * Nagle's algorithm: MQTT.js leaves it on, and so does Mosquitto unless `set_tcp_nodelay true`.
 * With a request/response pattern each one that is on holds a small write until the previous
 * segment is acknowledged, which Linux's delayed ACK postpones by ~40 ms. The test client is
 * not what is measured, so it turns Nagle off (`--nagle` keeps it: ~40 ms more). The broker
 * runs with Mosquitto's defaults, so its ~40 ms is in the figures; with `set_tcp_nodelay true`
 * they drop to a few ms (the daemon's own share). Prints p50/p95/p99/max
 * of both (ms) as a table and as JSON; stops by itself and removes everything it made. Exits 1
 * if a command gets no answer within COMMAND_TIMEOUT_MS or is not accepted.
 */
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { type ChangeLimit, DEFAULT_CHANGE_LIMIT } from '../../src/control/change-limiter.js';
import { RealClock } from '../../src/runtime/real-clock.js';
import { benchBroker } from '../support/broker.js';
import { startTestNode } from '../support/node.js';

const BASE = 'homeostat/demo';
/**
 * The demo's loops and the two setpoints each alternates between: both off the demo's own
 * (20, 18, 65) and within its limits, so every command is a change.
 */
const LOOP_VALUES: ReadonlyArray<readonly [loop: string, values: readonly [number, number]]> = [
  ['room', [21, 22]],
  ['fermenter', [17, 19]],
  ['greenhouse_humidity', [60, 70]],
];
const commandTopic = (loop: string) => `${BASE}/${loop}/setpoint/set`;
const resultTopic = (loop: string) => `${BASE}/${loop}/result`;
const stateTopic = (loop: string) => `${BASE}/${loop}/state`;
const DISCOVERY_TOPIC = 'homeassistant/device/demo/config';
/**
 * The client refills its buckets this much slower than the daemon: its clock and the daemon's
 * differ by the publish's travel time, and a command that arrived a few ms early would be refused.
 */
const PACING_MARGIN = 0.95;
/** A command not answered (result and state) within this is a failure, ms. */
const COMMAND_TIMEOUT_MS = 5_000;
/** The daemon connecting and publishing its first state may take this long, ms. */
const START_TIMEOUT_MS = 15_000;

interface Pending {
  loop: string;
  value: number;
  startNs: bigint;
  resultNs?: bigint;
  stateNs?: bigint;
  resultGeneration?: number;
  stateGeneration?: number;
  rejected?: string;
  done: () => void;
}

interface Stats {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

async function main(): Promise<number> {
  const { values: args } = parseArgs({
    options: {
      n: { type: 'string', default: '200' },
      json: { type: 'boolean', default: false },
      nagle: { type: 'boolean', default: false },
    },
  });
  const n = Number(args.n);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--n must be a positive integer, got ${args.n}`);

  const bench = await benchBroker('homeostat-bench-mqtt-');
  const { broker, logger, onRelease } = bench;
  try {
    const clock = new RealClock();
    // The node as `homeostat run` builds it, on the test's broker.
    const { node } = await startTestNode(bench.demoText, join(bench.dir, 'state.db'), {
      clock,
      logger,
      mqtt: {},
    });
    onRelease(() => node.stop('bench'));
    if (!node.bridge) throw new Error('the demo config names no broker');

    const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    onRelease(() => client.endAsync(true));
    const socket = client.stream as Partial<Socket>;
    if (!args.nagle) socket.setNoDelay?.(true);
    let pending: Pending | undefined;
    let ready: (() => void) | undefined;
    let sawDiscovery = false;
    let sawState = false;
    client.on('message', (topic, payload) => {
      const nowNs = process.hrtime.bigint();
      if (topic === DISCOVERY_TOPIC) sawDiscovery = true;
      if (topic.endsWith('/state') && payload.length > 0) sawState = true;
      if (sawDiscovery && sawState) ready?.();
      const current = pending;
      if (!current || payload.length === 0) return;
      if (topic === resultTopic(current.loop) && current.resultNs === undefined) {
        const result = JSON.parse(payload.toString()) as {
          accepted: boolean;
          reason?: string;
          change?: { setpoint?: number };
          generation?: number;
        };
        current.resultNs = nowNs;
        if (!result.accepted || result.change?.setpoint !== current.value) {
          current.rejected = result.reason ?? JSON.stringify(result);
          current.done();
          return;
        }
        current.resultGeneration = result.generation;
      } else if (topic === stateTopic(current.loop) && current.stateNs === undefined) {
        const state = JSON.parse(payload.toString()) as {
          setpoint: number;
          generation: number;
          observedGeneration: number;
        };
        if (state.setpoint !== current.value || state.observedGeneration !== state.generation) return;
        current.stateNs = nowNs;
        current.stateGeneration = state.generation;
      }
      if (current.resultNs !== undefined && current.stateNs !== undefined) current.done();
    });
    // Discovery is published after the bridge subscribed to commands (same connection, in
    // order): once it is here, a command will be received.
    await withTimeout(
      new Promise<void>((resolve) => {
        ready = resolve;
        const loops = LOOP_VALUES.map(([loop]) => loop);
        void client.subscribeAsync([...loops.map(resultTopic), ...loops.map(stateTopic), DISCOVERY_TOPIC], {
          qos: 1,
        });
      }),
      START_TIMEOUT_MS,
      'the daemon connecting and publishing discovery and a state',
    );
    ready = undefined;

    const resultMs: number[] = [];
    const stateMs: number[] = [];
    const pacer = new ChangePacer(DEFAULT_CHANGE_LIMIT);
    const startedMs = performance.now();
    let waitedMs = 0;
    for (let i = 0; i < n; i++) {
      const [loop, values] = LOOP_VALUES[i % LOOP_VALUES.length]!;
      const value = values[Math.floor(i / LOOP_VALUES.length) % values.length]!;
      waitedMs += await pacer.take(loop);
      let done = () => {};
      const answered = new Promise<void>((resolve) => {
        done = resolve;
      });
      const command: Pending = { loop, value, startNs: process.hrtime.bigint(), done };
      pending = command;
      client.publish(commandTopic(loop), String(value), { qos: 1 });
      const what = `command ${i + 1} (${loop} setpoint ${value})`;
      await withTimeout(answered, COMMAND_TIMEOUT_MS, what);
      pending = undefined;
      if (command.rejected) throw new Error(`${what}: ${command.rejected}`);
      if (command.stateGeneration !== command.resultGeneration) {
        throw new Error(
          `command ${i + 1}: state generation ${command.stateGeneration} ≠ result generation ${command.resultGeneration}`,
        );
      }
      resultMs.push(Number(command.resultNs! - command.startNs) / 1e6);
      stateMs.push(Number(command.stateNs! - command.startNs) / 1e6);
    }

    const { burst, perMinute } = DEFAULT_CHANGE_LIMIT;
    const report = {
      commands: n,
      loops: LOOP_VALUES.map(([loop]) => loop),
      pacing: `round-robin over the loops; per loop ${burst} at once, then ${perMinute}/min (the daemon's change limit)`,
      wallS: Math.round((performance.now() - startedMs) / 100) / 10,
      pacingWaitS: Math.round(waitedMs / 100) / 10,
      broker: 'mosquitto (loopback)',
      clock: 'real (speed 1)',
      clientNagle: args.nagle,
      unit: 'ms',
      commandToResult: stats(resultMs),
      commandToState: stats(stateMs),
    };
    if (!args.json) {
      const row = (name: string, s: Stats) =>
        `| ${name.padEnd(18)} | ${[s.p50, s.p95, s.p99, s.max, s.mean].map((v) => v.toFixed(2).padStart(7)).join(' | ')} |`;
      process.stdout.write(
        [
          `MQTT command latency: ${n} setpoint commands round-robin to ${report.loops.join(', ')} (each alternating two values), one at a time, QoS 1,`,
          `Mosquitto defaults (Nagle on), test client Nagle ${args.nagle ? 'on' : 'off'}`,
          `Paced under the daemon's change limit (per loop ${burst} at once, then ${perMinute}/min): ${report.wallS} s in all, ${report.pacingWaitS} s of it waiting for the limit (not in the figures)`,
          '',
          '| ms                 |     p50 |     p95 |     p99 |     max |    mean |',
          '| ------------------ | ------: | ------: | ------: | ------: | ------: |',
          row('command → result', report.commandToResult),
          row('command → state', report.commandToState),
          '',
          'JSON:',
          '',
        ].join('\n'),
      );
    }
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return 0;
  } finally {
    await bench.release();
  }
}

/**
 * The daemon's change limit as the client keeps it: a token bucket per loop (ChangeLimiter's
 * arithmetic, refilled PACING_MARGIN slower). `take` waits until the loop has a token, takes
 * it, and returns how long it waited, ms.
 */
class ChangePacer {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();
  private readonly perMs: number;

  constructor(private readonly limit: ChangeLimit) {
    this.perMs = (limit.perMinute * PACING_MARGIN) / 60_000;
  }

  async take(loop: string): Promise<number> {
    const bucket = this.refilled(loop);
    const waitMs = bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) / this.perMs);
    if (waitMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      this.refilled(loop);
    }
    bucket.tokens -= 1;
    return waitMs;
  }

  private refilled(loop: string): { tokens: number; atMs: number } {
    const nowMs = performance.now();
    const bucket = this.buckets.get(loop) ?? { tokens: this.limit.burst, atMs: nowMs };
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + (nowMs - bucket.atMs) * this.perMs);
    bucket.atMs = nowMs;
    this.buckets.set(loop, bucket);
    return bucket;
  }
}

/** Nearest-rank percentiles, rounded to µs. */
function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  const round = (v: number) => Math.round(v * 1000) / 1000;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / sorted.length;
  return {
    p50: round(at(50)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(sorted.at(-1)!),
    mean: round(mean),
  };
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms: ${what}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`mqtt-latency: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
