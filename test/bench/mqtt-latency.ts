/**
 * MQTT command latency benchmark (`node --import tsx test/bench/mqtt-latency.ts`;
 * `-- --n 500` for another number of commands, `--json` for JSON only, `--nagle` to leave
 * Nagle's algorithm on in the test client).
 *
 * Starts a private Mosquitto (test/integration/mosquitto.ts) and the daemon in-process on the
 * demo config, as `homeostat run` builds it (src/node.ts: simulated plants, real clock, the
 * store supervisor on a real SQLite file in a temp dir, the MqttBridge), then sends N setpoint commands to
 * the room loop, alternating 21 and 22 so each one is a change, one at a time (QoS 1), and
 * measures with process.hrtime, from just before the publish:
 * - command → result: the `<loop>/result` with accepted:true and the new setpoint arrives
 *   (validated, committed to SQLite, published);
 * - command → state: a `<loop>/state` with the new setpoint and observedGeneration equal to
 *   its generation arrives (the loop ran a cycle on it and published).
 * Both travel client → broker → daemon → broker → client over loopback.
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
import pino from 'pino';
import { RealClock } from '../../src/runtime/real-clock.js';
import { demoConfigText, makeTempDir } from '../integration/helpers.js';
import { startMosquitto } from '../integration/mosquitto.js';
import { startTestNode } from '../support/node.js';

const LOOP = 'room';
const BASE = 'homeostat/demo';
const COMMAND_TOPIC = `${BASE}/${LOOP}/setpoint/set`;
const RESULT_TOPIC = `${BASE}/${LOOP}/result`;
const STATE_TOPIC = `${BASE}/${LOOP}/state`;
const DISCOVERY_TOPIC = 'homeassistant/device/demo/config';
/** Alternated so that every command changes the setpoint (the demo starts at 20). */
const VALUES = [21, 22] as const;
/** A command not answered (result and state) within this is a failure, ms. */
const COMMAND_TIMEOUT_MS = 5_000;
/** The daemon connecting and publishing its first state may take this long, ms. */
const START_TIMEOUT_MS = 15_000;

interface Pending {
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

  const broker = await startMosquitto();
  const { dir, remove } = makeTempDir('homeostat-bench-mqtt-');
  const cleanups: Array<() => unknown> = [() => remove(), () => broker.dispose()];
  try {
    const text = demoConfigText((doc) => doc.setIn(['mqtt', 'url'], broker.url));
    const clock = new RealClock();
    // Warnings and errors only, to stderr: the figures are the output.
    const logger = pino({ level: 'warn' }, pino.destination(2));
    // The node as `homeostat run` builds it, on the test's broker.
    const { node } = await startTestNode(text, join(dir, 'state.db'), { clock, logger, mqtt: {} });
    cleanups.push(() => node.stop('bench'));
    if (!node.bridge) throw new Error('the demo config names no broker');

    const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    cleanups.push(() => client.endAsync(true));
    const socket = client.stream as Partial<Socket>;
    if (!args.nagle) socket.setNoDelay?.(true);
    let pending: Pending | undefined;
    let ready: (() => void) | undefined;
    let sawDiscovery = false;
    let sawState = false;
    client.on('message', (topic, payload) => {
      const nowNs = process.hrtime.bigint();
      if (topic === DISCOVERY_TOPIC) sawDiscovery = true;
      if (topic === STATE_TOPIC && payload.length > 0) sawState = true;
      if (sawDiscovery && sawState) ready?.();
      const current = pending;
      if (!current || payload.length === 0) return;
      if (topic === RESULT_TOPIC && current.resultNs === undefined) {
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
      } else if (topic === STATE_TOPIC && current.stateNs === undefined) {
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
        void client.subscribeAsync([RESULT_TOPIC, STATE_TOPIC, DISCOVERY_TOPIC], { qos: 1 });
      }),
      START_TIMEOUT_MS,
      'the daemon connecting and publishing discovery and a state',
    );
    ready = undefined;

    const resultMs: number[] = [];
    const stateMs: number[] = [];
    for (let i = 0; i < n; i++) {
      const value = VALUES[i % VALUES.length]!;
      let done = () => {};
      const answered = new Promise<void>((resolve) => {
        done = resolve;
      });
      const command: Pending = { value, startNs: process.hrtime.bigint(), done };
      pending = command;
      client.publish(COMMAND_TOPIC, String(value), { qos: 1 });
      await withTimeout(answered, COMMAND_TIMEOUT_MS, `command ${i + 1} (setpoint ${value})`);
      pending = undefined;
      if (command.rejected) throw new Error(`command ${i + 1} (setpoint ${value}): ${command.rejected}`);
      if (command.stateGeneration !== command.resultGeneration) {
        throw new Error(
          `command ${i + 1}: state generation ${command.stateGeneration} ≠ result generation ${command.resultGeneration}`,
        );
      }
      resultMs.push(Number(command.resultNs! - command.startNs) / 1e6);
      stateMs.push(Number(command.stateNs! - command.startNs) / 1e6);
    }

    const report = {
      commands: n,
      loop: LOOP,
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
          `MQTT command latency: ${n} setpoint commands to "${LOOP}" (alternating ${VALUES.join('/')}), one at a time, QoS 1,`,
          `Mosquitto defaults (Nagle on), test client Nagle ${args.nagle ? 'on' : 'off'}`,
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
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        process.stderr.write(`cleanup: ${(error as Error).message}\n`);
      }
    }
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
