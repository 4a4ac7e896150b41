/**
 * What durable desired-state commits cost (src/store/durability.ts), for `npm run bench:storage`:
 * before (every commit under synchronous NORMAL, as in the earlier version) and after (a desired-state
 * commit under FULL: one fsync of the WAL before it returns), side by side in one run.
 *
 * - Answer latency: the store's part of a command's answer, `DesiredStore.setDesired` on a file
 *   opened as the daemon opens it, `COMMANDS` setpoint changes with a batched flush between
 *   every few (as the daemon interleaves them), p50/p99, on this machine's disk (the temp dir,
 *   when it is not a tmpfs) and on a tmpfs (/dev/shm), where fsync costs nothing. "Before" is
 *   the same code on a connection that ignores the switch to FULL.
 * - fsyncs per day of a typical node: SQLite's rule under WAL (NORMAL: the WAL before each
 *   checkpoint, the database after it, the WAL header when the WAL starts over: 3 per
 *   checkpoint; FULL adds one per commit) applied to the checkpoints the day simulation above
 *   measured and COMMANDS_PER_DAY desired-state commits. Bytes written do not change: the
 *   frames are the same, only when they are synced differs (measured here too).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { openStore } from '../../src/store/database.js';
import { DesiredStore, sha256 } from '../../src/store/desired-store.js';
import { DURABLE_SYNCHRONOUS } from '../../src/store/durability.js';
import { StateStore } from '../../src/store/state-store.js';
import { silentLogger } from '../support/logger.js';

/** Commands timed per run. */
const COMMANDS = 300;
/** A flush of the batched history after every this many commands. */
const COMMANDS_PER_FLUSH = 5;
/** Desired-state changes a typical node stores in a day (setpoints, modes, presets, resets). */
export const COMMANDS_PER_DAY = 50;
/** fsyncs per checkpoint under WAL with synchronous NORMAL (see the file comment). */
const FSYNCS_PER_CHECKPOINT = 3;
const TMPFS_MAGIC = 0x01021994;

export interface LatencyResult {
  where: string;
  dir: string;
  mode: 'before' | 'after';
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  bytesPerCommand: number;
}

/** The places to measure: the temp dir's disk (unless it is a tmpfs) and a tmpfs. */
function places(): Array<{ where: string; dir: string }> {
  const found: Array<{ where: string; dir: string }> = [];
  const isTmpfs = (dir: string) => {
    try {
      return fs.statfsSync(dir).type === TMPFS_MAGIC;
    } catch {
      return undefined;
    }
  };
  const tmp = os.tmpdir();
  if (isTmpfs(tmp) === false) found.push({ where: 'disk', dir: tmp });
  else if (isTmpfs(process.cwd()) === false) found.push({ where: 'disk', dir: process.cwd() });
  if (isTmpfs('/dev/shm')) found.push({ where: 'tmpfs', dir: '/dev/shm' });
  return found;
}

/** `db` as it was before durable commits: the switch to FULL is ignored (everything NORMAL). */
function withoutDurableCommits(db: Database.Database): Database.Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'pragma')
        return (source: string, options?: Database.PragmaOptions) =>
          source.replace(/\s/g, '') === `synchronous=${DURABLE_SYNCHRONOUS}`
            ? []
            : target.pragma(source, options);
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function wchar(): number {
  const match = /^wchar:\s+(\d+)$/m.exec(fs.readFileSync('/proc/self/io', 'utf8'));
  return match ? Number(match[1]) : Number.NaN;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

function measure(where: string, dir: string, mode: 'before' | 'after'): LatencyResult {
  const tempDir = fs.mkdtempSync(path.join(dir, 'homeostat-bench-commit-'));
  try {
    let nowMs = Date.UTC(2026, 0, 1);
    const opened = openStore({
      path: path.join(tempDir, 'homeostat.db'),
      logger: silentLogger,
      nowMs: () => nowMs,
    });
    const db = mode === 'before' ? withoutDurableCommits(opened.db) : opened.db;
    const desired = new DesiredStore(db, () => nowMs);
    const state = new StateStore(db);
    desired.applyConfig({
      text: 'room: 20',
      loops: { room: { setpoint: 20, mode: 'heat', sectionHash: sha256('room: 20') } },
    });
    const timesMs: number[] = [];
    let bytes = 0;
    for (let i = 0; i < COMMANDS; i++) {
      nowMs += 1000;
      state.addSample('room', { atMs: nowMs, setpoint: 20, measured: 19.9, output: 0.4, action: 'heating' });
      if (i % COMMANDS_PER_FLUSH === 0) state.flush();
      const before = wchar();
      const startedNs = process.hrtime.bigint();
      desired.setDesired('room', { setpoint: 18 + (i % 10) / 2 }, 'mqtt');
      timesMs.push(Number(process.hrtime.bigint() - startedNs) / 1e6);
      bytes += wchar() - before;
    }
    opened.db.close();
    timesMs.sort((a, b) => a - b);
    return {
      where,
      dir,
      mode,
      p50Ms: percentile(timesMs, 0.5),
      p99Ms: percentile(timesMs, 0.99),
      maxMs: timesMs.at(-1)!,
      bytesPerCommand: bytes / COMMANDS,
    };
  } finally {
    fs.rmSync(tempDir, { recursive: true, force: true });
  }
}

/** Every place, before and after, each measured twice interleaved (the second kept: warm caches). */
export function measureCommitLatency(): LatencyResult[] {
  const results: LatencyResult[] = [];
  for (const { where, dir } of places()) {
    for (const mode of ['before', 'after'] as const) measure(where, dir, mode);
    for (const mode of ['before', 'after'] as const) results.push(measure(where, dir, mode));
  }
  return results;
}

/** fsyncs per day before and after, from the checkpoints a simulated day measured. */
export function fsyncsPerDay(checkpointsPerDay: number): { before: number; after: number } {
  const before = checkpointsPerDay * FSYNCS_PER_CHECKPOINT;
  return { before, after: before + COMMANDS_PER_DAY };
}

/** The report's lines: latency side by side, then fsyncs per day for `node` (a default run). */
export function commitCostLines(
  latency: LatencyResult[],
  node: { loops: number; flushS: number; commitsPerHour: number; checkpointsPerDay: number },
): string[] {
  const ms = (value: number) => value.toFixed(3);
  const lines = [
    `desired-state commit (DesiredStore.setDesired, the store's part of a command's answer), ${COMMANDS} commands, ms:`,
    '  where   before p50  before p99  after p50  after p99  after max  bytes/command before → after',
  ];
  for (const where of new Set(latency.map((r) => r.where))) {
    const before = latency.find((r) => r.where === where && r.mode === 'before')!;
    const after = latency.find((r) => r.where === where && r.mode === 'after')!;
    lines.push(
      `  ${where.padEnd(6)}  ${ms(before.p50Ms).padStart(10)}  ${ms(before.p99Ms).padStart(10)}  ` +
        `${ms(after.p50Ms).padStart(9)}  ${ms(after.p99Ms).padStart(9)}  ${ms(after.maxMs).padStart(9)}  ` +
        `${Math.round(before.bytesPerCommand)} → ${Math.round(after.bytesPerCommand)}  (${before.dir})`,
    );
  }
  const fsyncs = fsyncsPerDay(node.checkpointsPerDay);
  lines.push(
    `fsyncs per day, ${node.loops} loops, flush every ${node.flushS} s (${Math.round(node.commitsPerHour * 24)} batched commits/day, ` +
      `${node.checkpointsPerDay.toFixed(1)} checkpoints/day measured${node.checkpointsPerDay === 0 ? ': too short a run to see one, --hours 24' : ''}) ` +
      `+ ${COMMANDS_PER_DAY} commands/day: ` +
      `before ${Math.round(fsyncs.before)}, after ${Math.round(fsyncs.after)} ` +
      `(${FSYNCS_PER_CHECKPOINT} per checkpoint + 1 per desired-state commit; FULL on every commit would be ` +
      `${Math.round(fsyncs.before + node.commitsPerHour * 24 + COMMANDS_PER_DAY)})`,
  );
  return lines;
}
