/**
 * Event-loop stall while another process holds the database's write lock:
 * `npm run bench:storage-lock` (`-- --seconds N` to hold it N s instead of 30, `-- --json`).
 *
 * Runs the demo daemon twice on the real clock (no manual clock, nothing sped up), each time
 * with its store in a temp dir, a flush of the batched state every second and a command
 * (setDesired, as MQTT would) every second, while a second process holds `BEGIN IMMEDIATE` on
 * the same file for the whole measurement:
 * - "busy_timeout 5000": the connection's busy_timeout set back to the old 5,000 ms — every
 *   write waits for the lock with the event loop blocked;
 * - "now": the store as shipped (STORE_BUSY_TIMEOUT_MS; a write that meets the lock fails fast
 *   and is retried at the next flush; a command is refused).
 * and, as a control, "no lock": the same run without the second process (what the machine's own
 * load and GC cost; on a busy machine that is most of what "now" shows).
 * Prints, side by side, the longest event-loop stall (perf_hooks.monitorEventLoopDelay, max),
 * its p99, the number of loop cycles completed and of writes refused. Exits 0 unless it crashes.
 */
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { loadConfigFile } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon/daemon.js';
import { RealClock } from '../../src/runtime/real-clock.js';
import { StoreSupervisor } from '../../src/store/supervisor.js';
import { silentLogger } from '../support/logger.js';
import { makeTempDir } from '../support/tmp.js';

const args = process.argv.slice(2);
const seconds = Number(args[args.indexOf('--seconds') + 1]) || 30;
const json = args.includes('--json');

/** The lock holder, run as a child process: `storage-lock.ts --hold <db> <ms>`. */
if (args[0] === '--hold') {
  const db = new Database(args[1]!);
  db.pragma('busy_timeout = 10000');
  db.exec('BEGIN IMMEDIATE');
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('benchLock', 'held')").run();
  process.send?.('locked');
  setTimeout(() => {
    db.exec('ROLLBACK');
    db.close();
    process.exit(0);
  }, Number(args[2]));
} else {
  await main();
}

interface Result {
  mode: string;
  maxStallMs: number;
  p99StallMs: number;
  cycles: number;
  commandsRefused: number;
  commandsTried: number;
}

async function main(): Promise<void> {
  const results: Result[] = [];
  for (const mode of ['no lock', 'busy_timeout 5000', 'now'] as const) results.push(await measure(mode));
  if (json) {
    console.log(JSON.stringify({ lockHeldS: seconds, results }, null, 2));
    return;
  }
  console.log(`write lock held by another process for ${seconds} s, demo daemon on the real clock`);
  console.log('(flush every 1 s, one command every 1 s; event-loop delay by perf_hooks)');
  console.log(
    `(load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${os.cpus().length} CPUs)\n`,
  );
  const rows: Array<[string, (r: Result) => string]> = [
    ['longest event-loop stall', (r) => `${r.maxStallMs.toFixed(1)} ms`],
    ['event-loop delay p99', (r) => `${r.p99StallMs.toFixed(1)} ms`],
    ['loop cycles completed', (r) => String(r.cycles)],
    ['commands refused / tried', (r) => `${r.commandsRefused} / ${r.commandsTried}`],
  ];
  const width = 28;
  console.log(`${''.padEnd(width)}${results.map((r) => r.mode.padStart(20)).join('')}`);
  for (const [name, value] of rows) {
    console.log(`${name.padEnd(width)}${results.map((r) => value(r).padStart(20)).join('')}`);
  }
}

async function measure(mode: 'no lock' | 'busy_timeout 5000' | 'now'): Promise<Result> {
  const { dir, remove } = makeTempDir('homeostat-bench-lock-');
  const dbPath = path.join(dir, 'state.db');
  const loaded = loadConfigFile('config/demo.yaml');
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  const clock = new RealClock();
  const logger = silentLogger;
  const store = new StoreSupervisor({ path: dbPath, clock, logger });
  let cycles = 0;
  const daemon = new Daemon({
    config: loaded.config,
    configText: loaded.text,
    clock,
    logger,
    store,
    statusEveryMs: 0,
    flushEveryMs: 1_000,
  });
  daemon.subscribe({
    status: () => {
      cycles++;
    },
  });
  await daemon.start();
  // What the daemon did in an earlier version: wait up to 5 s for every lock, blocking everything.
  if (mode === 'busy_timeout 5000') store.database.pragma('busy_timeout = 5000');

  const holdMs = seconds * 1000;
  const holder =
    mode === 'no lock'
      ? undefined
      : fork(fileURLToPath(import.meta.url), ['--hold', dbPath, String(holdMs)], {
          execArgv: ['--import', 'tsx'],
        });
  if (holder) await new Promise<void>((resolve) => holder.once('message', () => resolve()));

  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  cycles = 0;
  let tried = 0;
  let refused = 0;
  const commands = setInterval(() => {
    tried++;
    try {
      store.desired.setDesired('room', { setpoint: 19 + (tried % 3) }, 'mqtt');
    } catch {
      refused++;
    }
  }, 1_000);
  await new Promise<void>((resolve) => {
    if (holder) holder.once('exit', () => resolve());
    else setTimeout(resolve, holdMs);
  });
  clearInterval(commands);
  histogram.disable();
  const result: Result = {
    mode,
    maxStallMs: histogram.max / 1e6,
    p99StallMs: histogram.percentile(99) / 1e6,
    cycles,
    commandsRefused: refused,
    commandsTried: tried,
  };
  await daemon.stop();
  store.close();
  remove();
  return result;
}
