/**
 * Journal bytes per loop per day (`npm run bench:journal`). The journal lives on the SD card:
 * the issue found the periodic status line writing about 1.8 MB per loop per day at real time.
 *
 * Runs the node as `homeostat run` builds it (test/support/node.ts) on the demo's simulated
 * plants (config/demo.yaml, without MQTT), on a manual clock, through the journal format
 * (src/logger.ts: journalStream, the lines systemd stores), for a warm-up of WARM_UP_H hours
 * and then one measured simulated day:
 * - steady: nothing changes but the plants' noise;
 * - setpoint changes: a person's day (room 20 → 21.5 at 07:00, → 18 at 22:30; fermenter
 *   18 → 19 at 12:00; greenhouse 65 → 70 at 09:00 and back at 18:00) sent over HTTP's path.
 * The daemon's own status lines are off; three status-line policies watch the same loops:
 * every 5 min and every minute (the old policy; node.ts used one minute at real time) and the
 * new one (on change, hourly otherwise, looked at every minute). "before" also counts the
 * continuous actuator's moves the old code logged at info (now debug).
 *
 * Prints figures; exits 0. Figures are bytes of journal text (`<6>room: …\n`); journald adds
 * its own per-entry fields on disk, so lines per day are printed too.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { DaemonTimers } from '../../src/daemon/timers.js';
import { journalLine } from '../../src/logger.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { startTestNode } from '../support/node.js';
import { memoryStore } from '../support/store.js';
import { makeTempDir } from '../support/tmp.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const WARM_UP_H = 6;
/** The journal-size target of the issue, bytes per loop per day in steady state. */
const TARGET_BYTES = 100_000;

/** Bytes and lines per loop, of one kind of line. */
class Tally {
  readonly bytes = new Map<string, number>();
  readonly lines = new Map<string, number>();
  add(loop: string, text: string): void {
    this.bytes.set(loop, (this.bytes.get(loop) ?? 0) + Buffer.byteLength(text));
    this.lines.set(loop, (this.lines.get(loop) ?? 0) + 1);
  }
  reset(): void {
    this.bytes.clear();
    this.lines.clear();
  }
}

/** A pino logger whose records are counted as journal lines (and as JSON, what log shippers get). */
function countingLogger(
  level: pino.LevelWithSilent,
  count: (record: Record<string, unknown>, json: string) => void,
) {
  return pino(
    { level },
    {
      write: (json: string) => count(JSON.parse(json) as Record<string, unknown>, json),
    },
  );
}

function loopOf(record: Record<string, unknown>): string {
  const status = record.status as { loop?: string } | undefined;
  return typeof record.loop === 'string' ? record.loop : (status?.loop ?? '(node)');
}

interface Policy {
  name: string;
  everyMs: number;
  heartbeatMs?: number;
  journal: Tally;
  json: Tally;
}

interface Scenario {
  name: string;
  /** Setpoint changes: [hours into the measured day, loop, setpoint]. */
  changes: Array<[atH: number, loop: string, setpoint: number]>;
}

async function runDay(scenario: Scenario) {
  const configText = readFileSync(new URL('../../config/demo.yaml', import.meta.url), 'utf8');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  /** The daemon's own lines (moves, commands, faults…): at info and above, and the moves at debug. */
  const info = new Tally();
  const continuousMoves = new Tally();
  const daemonLogger = countingLogger('debug', (record, _json) => {
    const text = journalLine(record);
    const level = record.level as number;
    if (level >= 30) info.add(loopOf(record), text);
    // Before: a continuous actuator's regulation moves were info lines.
    else if (
      record.reason === 'regulate' &&
      typeof record.actuator === 'string' &&
      / %/.test(String(record.msg))
    ) {
      continuousMoves.add(loopOf(record), text);
    }
  });
  const temp = makeTempDir('homeostat-bench-journal-');
  const node = await startTestNode(configText, join(temp.dir, 'bench.db'), {
    clock,
    logger: daemonLogger,
    statusEveryMs: 0,
  });
  const units = Object.fromEntries(
    Object.entries(node.node.config.loops).map(([id, loop]) => [id, loop.unit]),
  );
  const policies: Policy[] = [
    { name: 'every 5 min', everyMs: 300_000, heartbeatMs: 300_000, journal: new Tally(), json: new Tally() },
    { name: 'every 1 min', everyMs: 60_000, heartbeatMs: 60_000, journal: new Tally(), json: new Tally() },
    { name: 'on change', everyMs: 60_000, journal: new Tally(), json: new Tally() },
  ];
  const timers = policies.map((policy) => {
    const logger = countingLogger('info', (record, json) => {
      policy.journal.add(loopOf(record), journalLine(record));
      if (policy.heartbeatMs === undefined && SHOW.has(loopOf(record)) && clock.nowMs() >= measuredFromMs) {
        console.log(
          `${new Date(clock.nowMs()).toISOString().slice(11, 16)} ${record.why}: ${journalLine(record).trim()}`,
        );
      }
      policy.json.add(loopOf(record), json);
    });
    const t = new DaemonTimers({
      clock,
      logger,
      store: memoryStore(clock),
      flushEveryMs: () => DAY_MS * 10,
      statusEveryMs: policy.everyMs,
      ...(policy.heartbeatMs === undefined ? {} : { statusHeartbeatMs: policy.heartbeatMs }),
      statusLines: () => node.daemon.statuses().map((status) => ({ status, unit: units[status.loop] ?? '' })),
    });
    t.start();
    return t;
  });
  const startedAt = performance.now();
  measuredFromMs = clock.nowMs() + WARM_UP_H * HOUR_MS;
  // In steps: one advance fires at most 10,000 timers.
  for (let h = 0; h < WARM_UP_H * 6; h++) await clock.advance(600_000);
  for (const tally of [info, continuousMoves, ...policies.flatMap((p) => [p.journal, p.json])]) tally.reset();
  const dayStartMs = clock.nowMs();
  const pending = [...scenario.changes].sort((a, b) => a[0] - b[0]);
  for (let stepMs = 0; stepMs < DAY_MS; stepMs += 600_000) {
    while (pending.length > 0 && pending[0]![0] * HOUR_MS <= stepMs) {
      const [, loop, setpoint] = pending.shift()!;
      node.node.commands.submit({
        loop,
        kind: 'setpoint',
        payload: Buffer.from(String(setpoint)),
        source: 'http',
        receivedAtMs: clock.nowMs(),
      });
    }
    await clock.advance(dayStartMs + stepMs + 600_000 - clock.nowMs());
  }
  const wallS = (performance.now() - startedAt) / 1000;
  for (const t of timers) t.stop();
  await node.stop();
  temp.remove();
  return { loops: Object.keys(units), info, continuousMoves, policies, wallS };
}

/** `--show room,fermenter`: print the new policy's status lines of these loops (why, time). */
const showAt = process.argv.indexOf('--show');
const SHOW = new Set(showAt > 0 ? (process.argv[showAt + 1] ?? '').split(',') : []);
let measuredFromMs = Number.POSITIVE_INFINITY;

const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
const pad = (text: string, width: number) => text.padStart(width);

function report(scenario: Scenario, result: Awaited<ReturnType<typeof runDay>>): void {
  const { loops, info, continuousMoves, policies, wallS } = result;
  const [every5, every1, onChange] = policies as [Policy, Policy, Policy];
  console.log(
    `\n${scenario.name}: one simulated day after ${WARM_UP_H} h of warm-up (ran in ${wallS.toFixed(1)} s)`,
  );
  console.log(
    `${'loop'.padEnd(20)} ${pad('status lines per day', 22)}   ${pad('journal bytes per loop per day', 38)}   ${pad('after/target', 12)}`,
  );
  console.log(
    `${''.padEnd(20)} ${pad('5 min', 6)} ${pad('1 min', 7)} ${pad('new', 7)}   ${pad('before, 5 min', 13)} ${pad('before, 1 min', 13)} ${pad('after', 10)}   ${pad('(100 kB)', 12)}`,
  );
  const lines = (tally: Tally, loop: string) => tally.lines.get(loop) ?? 0;
  const bytes = (tally: Tally, loop: string) => tally.bytes.get(loop) ?? 0;
  for (const loop of loops) {
    const others = bytes(info, loop);
    const moves = bytes(continuousMoves, loop);
    const before5 = bytes(every5.journal, loop) + others + moves;
    const before1 = bytes(every1.journal, loop) + others + moves;
    const after = bytes(onChange.journal, loop) + others;
    console.log(
      `${loop.padEnd(20)} ${pad(String(lines(every5.journal, loop)), 6)} ${pad(String(lines(every1.journal, loop)), 7)} ${pad(String(lines(onChange.journal, loop)), 7)}   ${pad(kB(before5), 13)} ${pad(kB(before1), 13)} ${pad(kB(after), 10)}   ${pad(`${Math.round((after / TARGET_BYTES) * 100)} %`, 12)}`,
    );
    console.log(
      `${''.padEnd(20)} after = ${lines(onChange.journal, loop)} status lines (${kB(bytes(onChange.journal, loop))}) + ${lines(info, loop)} other lines at info or above, relay switches and commands (${kB(others)});` +
        ` before also had ${lines(continuousMoves, loop)} continuous moves at info (${kB(moves)});` +
        ` the 1-min status lines as JSON: ${kB(bytes(every1.json, loop))}`,
    );
  }
  console.log(`node-wide lines (no loop) over the day: ${kB(info.bytes.get('(node)') ?? 0)}`);
}

const scenarios: Scenario[] = [
  { name: 'steady state', changes: [] },
  {
    name: 'a day with setpoint changes',
    changes: [
      [7, 'room', 21.5],
      [9, 'greenhouse_humidity', 70],
      [12, 'fermenter', 19],
      [18, 'greenhouse_humidity', 65],
      [22.5, 'room', 18],
    ],
  },
];

for (const scenario of scenarios) report(scenario, await runDay(scenario));
