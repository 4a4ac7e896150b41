/**
 * MQTT command flood benchmark (`npm run bench:mqtt-flood`; `-- --n 50000` for another number
 * of commands, `--rounds 3` for several floods in a row, `--after-s 60` for a longer quiet
 * phase after each, `--qos 0` to flood at QoS 0, `--json` for JSON only).
 *
 * Starts a private Mosquitto (test/integration/mosquitto.ts) and the daemon in-process on the
 * demo config, as `homeostat run` builds it (src/node.ts: simulated plants, real clock, the
 * store supervisor on a real SQLite file in a temp dir, the MqttBridge), waits until it publishes, then sends
 * N commands (default 20,000) as fast as four `mosquitto_pub -l -q 1` processes can (the load
 * is generated outside this process, so the figures are the daemon's), a quarter each of: a
 * setpoint outside the limits, a setpoint that is not a number, a valid setpoint alternating
 * 20/21 (each a change: the rate limit applies), and a command for an unknown loop. Results are
 * counted by a `mosquitto_sub` process.
 *
 * Mosquitto queues at most `max_queued_messages` (default 1000) QoS 1 messages per client
 * beyond the in-flight ones and drops the rest: of a 20,000-command burst the daemon receives
 * what the broker did not drop. "delivered" counts what reached the bridge's handler; each is
 * either answered one by one or, when more than 1000 wait in the bridge's queue, dropped unread
 * and counted in one coalesced "busy" result per loop per second (for unknown loops: in an
 * event only; the rest of "delivered"). (The
 * counting subscriber may get fewer: the broker drops QoS 1 messages to it beyond its queue.)
 *
 * Measures, before (5 s idle), during (until every command has its result) and after (30 s
 * idle, `--after-s`) the flood: event-loop delay (perf_hooks.monitorEventLoopDelay, p50/p99/max ms), RSS
 * (MB; peak during), the longest gap between two cycles of the room loop (regulation must go
 * on), the rows added to the events table and the growth of the database files. Prints a table
 * and JSON; exits 1 if a delivered command gets no result within FLOOD_TIMEOUT_MS. Targets: p99 < 50 ms
 * during the flood, RSS back near its level after it, a handful of event rows.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { RealClock } from '../../src/runtime/real-clock.js';
import { sleep } from '../integration/helpers.js';
import { benchBroker } from '../support/broker.js';
import { buildTestNode } from '../support/node.js';

const BASE = 'homeostat/demo';
const IDLE_BEFORE_MS = 5_000;
/** Every command must have its result within this, ms. */
const FLOOD_TIMEOUT_MS = 120_000;
const START_TIMEOUT_MS = 15_000;

interface Phase {
  name: string;
  durationS: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  rssMb: number;
  rssPeakMb: number;
  /** V8 heap in use at the end of the phase, MB (RSS keeps pages the heap has freed). */
  heapUsedMb: number;
  /** Longest time between two cycles of the room loop in this phase, s. */
  longestCycleGapS: number;
  /** CPU time this process used in the phase (user + system), s: on a busy machine a stall may be another process's. */
  cpuS: number;
}

const round2 = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const mb = (bytes: number) => round2(bytes / 1024 / 1024);

/** The four publishers: a topic each, and the payload of their i-th message. */
const STREAMS: { topic: string; payload: (i: number) => string }[] = [
  { topic: `${BASE}/room/setpoint/set`, payload: (i) => String(31 + (i % 500)) },
  { topic: `${BASE}/room/setpoint/set`, payload: (i) => `warm-${i}` },
  { topic: `${BASE}/room/setpoint/set`, payload: (i) => (i % 2 === 0 ? '20' : '21') },
  { topic: `${BASE}/ghost/setpoint/set`, payload: () => '20' },
];

/**
 * Starts `mosquitto_pub -l` (one message per stdin line) on `topic`. Spawned before the
 * measurement (spawning blocks this process for tens of ms); `send` writes the lines and
 * resolves when the publisher has sent them all and exited.
 */
function publisher(url: string, topic: string, qos: string): { send: (lines: string[]) => Promise<void> } {
  const { hostname, port } = new URL(url);
  const child = spawn(
    'mosquitto_pub',
    ['-h', hostname, '-p', port, '-q', qos, '-V', 'mqttv5', '-t', topic, '-l'],
    { stdio: ['pipe', 'ignore', 'inherit'] },
  );
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`mosquitto_pub exited ${code}`))));
  });
  return {
    send: (lines) => {
      child.stdin.end(`${lines.join('\n')}\n`);
      return exited;
    },
  };
}

/**
 * Heap in use, MB, after a full garbage collection when node runs with --expose-gc (then it
 * says what is still referenced, not what has not been collected yet).
 */
function heapAfterGcMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return mb(process.memoryUsage().heapUsed);
}

function dbBytes(dbPath: string): number {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      total += statSync(`${dbPath}${suffix}`).size;
    } catch {
      // not there
    }
  }
  return total;
}

async function main(): Promise<number> {
  const { values: args } = parseArgs({
    options: {
      n: { type: 'string', default: '20000' },
      'after-s': { type: 'string', default: '30' },
      rounds: { type: 'string', default: '1' },
      qos: { type: 'string', default: '1' },
      json: { type: 'boolean', default: false },
    },
  });
  const n = Number(args.n);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--n must be a positive integer, got ${args.n}`);

  const bench = await benchBroker('homeostat-bench-flood-');
  const { broker, logger, onRelease } = bench;
  try {
    const clock = new RealClock();
    const dbPath = join(bench.dir, 'state.db');
    // The node as `homeostat run` builds it, on the test's broker; started below.
    const node = buildTestNode(bench.demoText, dbPath, { clock, logger, mqtt: {} });
    const { connection, daemon } = node;
    if (!connection) throw new Error('the demo config names no broker');
    // Counts what reaches the bridge's command handlers (what the broker did not drop).
    let delivered = 0;
    const subscribe = connection.subscribe.bind(connection);
    connection.subscribe = (filter, qos, handler) =>
      subscribe(filter, qos, (topic, payload, packet) => {
        if (topic.endsWith('/set')) delivered += 1;
        handler(topic, payload, packet);
      });
    // Counts the results the daemon publishes (a subscriber may see fewer: the broker drops
    // QoS 1 messages beyond max_queued_messages to a slow client).
    let published = 0;
    /** Commands dropped by the full queue, from the coalesced "busy: N commands dropped" results. */
    let droppedBusy = 0;
    let busyResults = 0;
    const publish = connection.publish.bind(connection);
    connection.publish = (topic, payload, opts) => {
      if (topic.endsWith('/result')) {
        published += 1;
        const busy = /"reason":"busy: (\d+) command/.exec(payload.toString());
        if (busy) {
          busyResults += 1;
          droppedBusy += Number(busy[1]);
        }
      }
      return publish(topic, payload, opts);
    };
    onRelease(() => node.stop('bench'));
    await node.start();
    const started = node.bridge;
    if (!started) throw new Error('the MQTT bridge did not start');

    // Results are counted by mosquitto_sub, one line each.
    const { hostname, port } = new URL(broker.url);
    const counter = spawn(
      'mosquitto_sub',
      [
        '-h',
        hostname,
        '-p',
        port,
        '-q',
        '1',
        '-V',
        'mqttv5',
        '-t',
        `${BASE}/+/result`,
        '-t',
        `${BASE}/room/state`,
        '-v',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    onRelease(() => counter.kill());
    let results = 0;
    let sawState = false;
    let partial = '';
    counter.stdout.setEncoding('utf8');
    counter.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith(`${BASE}/room/state `)) sawState = true;
        else if (/\/result /.test(line)) results += 1;
      }
    });
    const probe = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    onRelease(() => probe.endAsync(true));
    const startDeadline = Date.now() + START_TIMEOUT_MS;
    // The daemon is up once it published a state and answered a probe command.
    while (!sawState || results === 0) {
      if (Date.now() > startDeadline) throw new Error('the daemon published no state or no result');
      await probe.publishAsync(`${BASE}/room/setpoint/set`, '20', { qos: 1 });
      await sleep(100);
    }
    await sleep(500);
    results = 0;
    delivered = 0;
    published = 0;
    droppedBusy = 0;
    busyResults = 0;

    // Sampling: RSS and the room loop's cycles, every 50 ms.
    let rssPeak = 0;
    let lastCycleAtMs = Date.now();
    let lastUpdatedAtMs = daemon.statuses().find((s) => s.loop === 'room')?.updatedAtMs;
    let longestGapMs = 0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
      const updatedAtMs = daemon.statuses().find((s) => s.loop === 'room')?.updatedAtMs;
      const now = Date.now();
      if (updatedAtMs !== lastUpdatedAtMs) {
        lastUpdatedAtMs = updatedAtMs;
        lastCycleAtMs = now;
      }
      longestGapMs = Math.max(longestGapMs, now - lastCycleAtMs);
    }, 50);
    onRelease(() => clearInterval(sampler));
    const histogram = monitorEventLoopDelay({ resolution: 5 });
    histogram.enable();
    onRelease(() => histogram.disable());

    const phases: Phase[] = [];
    let cpuAtStart = process.cpuUsage();
    const endPhase = (name: string, startedAtMs: number) => {
      const cpu = process.cpuUsage(cpuAtStart);
      cpuAtStart = process.cpuUsage();
      phases.push({
        cpuS: round2((cpu.user + cpu.system) / 1e6, 2),
        name,
        durationS: round2((Date.now() - startedAtMs) / 1000),
        loopDelayP50Ms: round2(histogram.percentile(50) / 1e6),
        loopDelayP99Ms: round2(histogram.percentile(99) / 1e6),
        loopDelayMaxMs: round2(histogram.max / 1e6),
        rssMb: mb(process.memoryUsage.rss()),
        rssPeakMb: mb(rssPeak),
        heapUsedMb: heapAfterGcMb(),
        longestCycleGapS: round2(longestGapMs / 1000),
      });
      histogram.reset();
      rssPeak = process.memoryUsage.rss();
      longestGapMs = 0;
    };
    const eventRows = () =>
      (node.store.database.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;

    const rounds = Number(args.rounds);
    if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer`);
    // Every publisher is started (and idle) before measuring: spawning blocks this process.
    const publishersByRound = Array.from({ length: rounds }, () =>
      STREAMS.map(({ topic }) => publisher(broker.url, topic, args.qos)),
    );
    const perStream = Math.ceil(n / STREAMS.length);
    const lines = STREAMS.map(({ payload }, s) =>
      Array.from({ length: Math.min(perStream, n - s * perStream) }, (_, i) => payload(i)),
    );

    // Before.
    let phaseStart = Date.now();
    cpuAtStart = process.cpuUsage();
    histogram.reset();
    rssPeak = process.memoryUsage.rss();
    await sleep(IDLE_BEFORE_MS);
    endPhase('before', phaseStart);
    const rowsBefore = eventRows();
    const bytesBefore = dbBytes(dbPath);

    let publishedS = 0;
    for (let round = 1; round <= rounds; round++) {
      const suffix = rounds === 1 ? '' : ` ${round}`;
      // During: every command published, then wait until every delivered one is answered.
      phaseStart = Date.now();
      await Promise.all(publishersByRound[round - 1]!.map((p, s) => p.send(lines[s]!)));
      publishedS = round === 1 ? round2((Date.now() - phaseStart) / 1000) : publishedS;
      const deadline = Date.now() + FLOOD_TIMEOUT_MS;
      // Settled: the bridge's queue is empty and no result came for a second and a half (the
      // coalesced "busy" results are written once a second).
      let quietSince = Date.now();
      let seen = -1;
      while (Date.now() < deadline) {
        await started.commandsHandled();
        if (published !== seen) {
          seen = published;
          quietSince = Date.now();
        } else if (Date.now() - quietSince > 1_500) break;
        await sleep(20);
      }
      endPhase(`during${suffix}`, phaseStart);

      // After.
      phaseStart = Date.now();
      await sleep(Number(args['after-s']) * 1000);
      endPhase(`after${suffix}`, phaseStart);
    }
    const answered = published - busyResults;
    const received = results;
    const rowsAdded = eventRows() - rowsBefore;
    const bytesAdded = dbBytes(dbPath) - bytesBefore;

    const figures = {
      commands: n,
      publishedS,
      delivered,
      answered,
      droppedBusy,
      busyResults,
      droppedUnknownLoops: delivered - answered - droppedBusy,
      resultsReceivedBySubscriber: received,
      eventRowsAdded: rowsAdded,
      dbGrowthKb: round2(bytesAdded / 1024),
      phases,
    };
    if (!args.json) {
      console.log(`MQTT flood: ${n} commands (¼ out of limits, ¼ not a number, ¼ changes, ¼ unknown loops)`);
      console.log(
        `sent in ${publishedS} s; delivered to the daemon: ${delivered}; answered one by one: ${answered}; dropped by the full queue: ${droppedBusy} (answered by ${busyResults} coalesced results) + ${figures.droppedUnknownLoops} for unknown loops (an event only); a subscriber got ${received} results; event rows added: ${rowsAdded}; database growth: ${figures.dbGrowthKb} KB`,
      );
      console.log(
        'phase      duration s  CPU s  loop delay p50/p99/max ms  RSS MB (peak)  heap MB  longest room cycle gap s',
      );
      for (const p of phases) {
        console.log(
          `${p.name.padEnd(10)} ${String(p.durationS).padStart(10)}  ${String(p.cpuS).padStart(5)}  ${`${p.loopDelayP50Ms}/${p.loopDelayP99Ms}/${p.loopDelayMaxMs}`.padStart(25)}  ${`${p.rssMb} (${p.rssPeakMb})`.padStart(13)}  ${String(p.heapUsedMb).padStart(7)}  ${String(p.longestCycleGapS).padStart(24)}`,
        );
      }
    }
    console.log(JSON.stringify(figures));
    return answered > 0 && answered + droppedBusy <= delivered ? 0 : 1;
  } finally {
    await bench.release();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
