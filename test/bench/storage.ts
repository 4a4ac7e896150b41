/**
 * Storage benchmark (`npm run bench:storage`; `-- --json` for JSON only, `-- --sweep` adds
 * other page sizes and flush intervals, `-- --detail` shows where every run's bytes go,
 * `-- --hours N` measures N simulated hours instead of 24). Target of the Persistence issue:
 * ≤ 1 MB written per loop per day at 10 s sampling with the default settings.
 *
 * Each run opens a store in a temp dir as the daemon does (openStore, DesiredStore, applyConfig,
 * StateStore), fills it with the history it would hold in steady state (7 days of readings,
 * a year of 5-minute averages, 90 days of events — synthetic), then simulates the demo loops on
 * their simulated plants with the real `reconcile`: a reading every 10 s, a cycle per reading
 * and per wake-up, saveState / addSample each cycle, an event per actuator switch, flush() every
 * flush interval and pruneHistory() every hour, all on simulated time. After one hour of
 * warm-up it measures `measureHours`:
 * - bytes written: the `wchar` of /proc/self/io around the measured part (nothing else writes
 *   then: no logging), ending with a checkpoint so the pages the WAL holds are counted too;
 * - cross-check: WAL frames × (page size + 24) + pages checkpointed + WAL headers, from reading
 *   the -wal file after every commit (reads do not count in wchar);
 * - commits per hour (commit frames in the WAL), and the database's growth and size.
 * Not counted, because the process does not write them: the -shm index (memory-mapped) and the
 * filesystem's own metadata and journal. Prints figures; always exits 0 unless it crashes.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { loadConfigFile } from '../../src/config/load.js';
import { loopSensorIds } from '../../src/config/schema/sensor-set.js';
import type { Config } from '../../src/config/schema.js';
import { toLoopSpec } from '../../src/config/to-loop-spec.js';
import { type LoopSpec, loopActuators } from '../../src/core/loop-spec.js';
import { initialLoopMemory, type LoopMemory, resumeLoopMemory } from '../../src/core/loop-state.js';
import { reconcile } from '../../src/core/reconcile.js';
import type { ActuatorLevel, Reading } from '../../src/core/types.js';
import { applyConfig } from '../../src/daemon/store.js';
import type { ActuatorDriver, SensorDriver } from '../../src/drivers/types.js';
import { buildDrivers } from '../../src/kinds/build.js';
import { openStore } from '../../src/store/database.js';
import { DesiredStore } from '../../src/store/desired-store.js';
import { PAGE_SIZE_BYTES } from '../../src/store/migrations.js';
import { pruneHistory, RETENTION_DEFAULTS } from '../../src/store/retention.js';
import { encodeSamples, type Sample, StateStore } from '../../src/store/state-store.js';
import { silentLogger } from '../support/logger.js';
import { makeTempDir, withTempDir } from '../support/tmp.js';
import { commitCostLines, fsyncsPerDay, measureCommitLatency } from './storage-commit.js';

const TARGET_BYTES_PER_LOOP_DAY = 1_000_000;
const SAMPLE_PERIOD_S = 10;
const RESYNC_MS = 30_000;
const HOUR_MS = 3_600_000;
const START_MS = Date.UTC(2026, 0, 1);
const LOOP_SETS = { 1: ['room'], 3: ['room', 'fermenter', 'greenhouse_humidity'] } as const;

interface RunSpec {
  loops: 1 | 3;
  flushS: number;
  pageSize: number;
  /**
   * Routine events: 'switches' one per actuator switched on or off (the issue's ≈ 12/h/loop);
   * 'commands' one per command but keep-alives (what CycleRecorder records today: a continuous
   * actuator's every level change); 'none' none.
   */
  events: 'switches' | 'commands' | 'none';
}

interface RunResult extends RunSpec {
  measuredHours: number;
  bytesPerLoopDay: number;
  walModelBytesPerLoopDay: number;
  commitsPerHour: number;
  /** WAL generations started per day (one per checkpoint that let the WAL start over). */
  checkpointsPerDay: number;
  eventsPerLoopHour: number;
  samplesPerLoopHour: number;
  /** Growth of the pages in use while no retention limit is reached yet (what pruning freed added back). */
  dbGrowthPerLoopDay: number;
  /** Growth once every limit is reached: what the day added less what pruning removed (≈ 0). */
  steadyDbGrowthPerLoopDay: number;
  /** The file in steady state: 7 days of readings, a year of averages, 90 days of events. */
  dbSizeBytes: number;
  /** WAL bytes per day and loop by b-tree (page 1 = header: file size, free-page list). */
  walBytesPerLoopDayByTree: Record<string, number>;
  meetsTarget: boolean;
}

const args = process.argv.slice(2);
const jsonOnly = args.includes('--json');
const sweep = args.includes('--sweep');
const hoursArg = args.indexOf('--hours');
const measureHours = hoursArg >= 0 ? Number(args[hoursArg + 1]) : 24;
if (!(measureHours > 0)) throw new Error('--hours needs a positive number');

const demo = loadConfigFile('config/demo.yaml');
if (!demo.ok) throw new Error(`config/demo.yaml: ${demo.errors.join('; ')}`);
const defaultFlushS = demo.config.storage.memoryFlushS;

const atDefaults = { flushS: defaultFlushS, pageSize: PAGE_SIZE_BYTES };
const runs: RunSpec[] = [
  { loops: 1, ...atDefaults, events: 'switches' },
  { loops: 3, ...atDefaults, events: 'switches' },
  { loops: 1, ...atDefaults, events: 'none' },
  { loops: 3, ...atDefaults, events: 'none' },
  { loops: 3, ...atDefaults, events: 'commands' },
];
if (sweep) {
  for (const loops of [1, 3] as const) {
    for (const flushS of [30, 60, 120, 300, 600]) {
      for (const pageSize of [512, 1024, 4096]) {
        if (flushS === defaultFlushS && pageSize === PAGE_SIZE_BYTES) continue;
        runs.push({ loops, flushS, pageSize, events: 'switches' });
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// One run

function run(spec: RunSpec): Promise<RunResult> {
  return withTempDir((dir) => runIn(dir, spec), 'homeostat-bench-');
}

async function runIn(dir: string, spec: RunSpec): Promise<RunResult> {
  const config = benchConfig(spec.loops);
  const dbPath = path.join(dir, 'homeostat.db');
  createWithPageSize(dbPath, spec.pageSize);

  let nowMs = START_MS - 1;
  const { db } = openStore({ path: dbPath, logger: silentLogger, nowMs: () => nowMs });
  const store = { desired: new DesiredStore(db, () => nowMs), state: new StateStore(db) };
  applyConfig(store, config, demo.ok ? demo.text : '');
  prefill(db, store.state, Object.keys(config.loops), START_MS, spec.flushS);
  db.pragma('wal_checkpoint(TRUNCATE)');

  const sim = new Simulation(config, () => nowMs, store.state, spec.events);
  const wal = new WalCounter(`${dbPath}-wal`, spec.pageSize);
  let nextFlushMs = START_MS + spec.flushS * 1000;
  let nextPruneMs = START_MS + HOUR_MS;
  let prunedPages = 0;
  const commit = (write: () => void) => {
    write();
    wal.poll();
  };
  const advanceTo = async (endMs: number) => {
    for (;;) {
      const dueMs = Math.min(sim.nextMs(), nextFlushMs, nextPruneMs);
      if (dueMs > endMs) break;
      nowMs = dueMs;
      await sim.runDue(nowMs);
      if (nowMs >= nextFlushMs) {
        commit(() => store.state.flush());
        nextFlushMs += spec.flushS * 1000;
      }
      if (nowMs >= nextPruneMs) {
        const before = livePages(db);
        commit(() => pruneHistory(db, nowMs));
        prunedPages += before - livePages(db);
        nextPruneMs += HOUR_MS;
      }
    }
    nowMs = endMs;
  };

  nowMs = START_MS;
  await advanceTo(START_MS + HOUR_MS); // warm-up: the loops settle
  const endMs = START_MS + HOUR_MS + measureHours * HOUR_MS;
  const pagesBefore = livePages(db);

  const eventsBefore = sim.events;
  const samplesBefore = sim.samples;
  wal.reset();
  prunedPages = 0;
  const wcharBefore = wchar();
  await advanceTo(endMs);
  commit(() => db.pragma('wal_checkpoint(PASSIVE)'));
  const written = wchar() - wcharBefore;
  wal.poll(true);

  const perLoopDay = (value: number) => (value / spec.loops) * (24 / measureHours);
  const treeOf = pageOwners(db);
  const byTree: Record<string, number> = {};
  for (const [page, frames] of wal.framesByPage) {
    const tree = page === 1 ? 'page 1' : (treeOf.get(page) ?? 'free');
    byTree[tree] = (byTree[tree] ?? 0) + perLoopDay(frames * (spec.pageSize + 24));
  }
  const dbGrowth = (livePages(db) - pagesBefore) * spec.pageSize;
  const dbGrowthUnpruned = dbGrowth + prunedPages * spec.pageSize;
  db.close();
  const bytesPerLoopDay = perLoopDay(written);
  return {
    ...spec,
    measuredHours: measureHours,
    bytesPerLoopDay,
    walModelBytesPerLoopDay: perLoopDay(wal.modelBytes()),
    commitsPerHour: wal.commits / measureHours,
    checkpointsPerDay: (wal.headers * 24) / measureHours,
    eventsPerLoopHour: (sim.events - eventsBefore) / spec.loops / measureHours,
    samplesPerLoopHour: (sim.samples - samplesBefore) / spec.loops / measureHours,
    dbGrowthPerLoopDay: perLoopDay(dbGrowthUnpruned),
    steadyDbGrowthPerLoopDay: perLoopDay(dbGrowth),
    dbSizeBytes: fs.statSync(dbPath).size,
    walBytesPerLoopDayByTree: byTree,
    meetsTarget: bytesPerLoopDay <= TARGET_BYTES_PER_LOOP_DAY,
  };
}

/** The demo config with `loops` of its loops, every sensor read every SAMPLE_PERIOD_S. */
function benchConfig(loops: 1 | 3): Config {
  if (!demo.ok) throw new Error('unreachable');
  const config = structuredClone(demo.config);
  const keep = new Set<string>(LOOP_SETS[loops]);
  for (const id of Object.keys(config.loops)) if (!keep.has(id)) delete config.loops[id];
  for (const sensor of Object.values(config.sensors)) sensor.periodS = SAMPLE_PERIOD_S;
  return config;
}

/**
 * Makes the file with `pageSize` before openStore sees it (a page size holds only if set before
 * the first table and before WAL mode).
 */
function createWithPageSize(dbPath: string, pageSize: number): void {
  const db = new Database(dbPath);
  db.pragma(`page_size = ${pageSize}`);
  db.pragma('journal_mode = WAL');
  db.close();
}

/** The page size a file openStore creates gets (PAGE_SIZE_BYTES once database.ts sets it). */
function pageSizeOpenStoreGives(): number {
  const { dir, remove } = makeTempDir('homeostat-bench-');
  try {
    const { db } = openStore({ path: path.join(dir, 'probe.db'), logger: silentLogger, nowMs: Date.now });
    const size = db.pragma('page_size', { simple: true }) as number;
    db.close();
    return size;
  } finally {
    remove();
  }
}

/**
 * What the store holds in steady state before `untilMs`: bucket averages for the downsampled
 * retention, events (12/h/loop) for the event retention, and readings for the raw retention —
 * synthetic values, readings written by `state` with the run's flush interval, so that rows are
 * laid out as the daemon and pruneHistory lay them out.
 */
function prefill(
  db: Database.Database,
  state: StateStore,
  loops: string[],
  untilMs: number,
  flushS: number,
): void {
  const r = RETENTION_DEFAULTS;
  const insertRow = db.prepare<[string, number, number, number, Buffer]>(
    'INSERT INTO samples (loop, at_ms, until_ms, resolution_s, data) VALUES (?, ?, ?, ?, ?)',
  );
  const insertEvent = db.prepare<[number, string, string, string, string, string]>(
    'INSERT INTO events (at_ms, loop, kind, source, message, data_json) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const bucketMs = r.downsampleS * 1000;
  const rawFromMs = untilMs - r.rawRetentionS * 1000;
  const bucketsPerRow = 36; // as pruneHistory packs them
  db.transaction(() => {
    for (let t = untilMs - r.downsampledRetentionS * 1000; t < rawFromMs; t += bucketsPerRow * bucketMs) {
      const count = Math.min(bucketsPerRow, (rawFromMs - t) / bucketMs);
      const buckets = Array.from({ length: count }, (_, i) => syntheticSample(t + i * bucketMs));
      for (const loop of loops) {
        insertRow.run(loop, t, t + (count - 1) * bucketMs, r.downsampleS, encodeSamples(buckets));
      }
    }
    for (let t = untilMs - r.eventRetentionS * 1000; t < untilMs; t += 300_000) {
      for (const loop of loops) {
        const message = `${loop}_heater → 1 (regulate: output 42.5 %)`;
        insertEvent.run(t, loop, 'actuator', 'regulate', message, `{"actuator":"${loop}_heater","level":1}`);
      }
    }
    for (let t = rawFromMs; t < untilMs; t += SAMPLE_PERIOD_S * 1000) {
      for (const loop of loops) state.addSample(loop, syntheticSample(t));
      if ((t - rawFromMs) % (flushS * 1000) === 0) state.flush();
    }
    state.flush();
  })();
}

function syntheticSample(atMs: number): Sample {
  const hours = atMs / HOUR_MS;
  return {
    atMs,
    setpoint: 20,
    measured: Math.round((20 + 0.3 * Math.sin(hours) + 0.05 * Math.sin(hours * 97)) * 16) / 16,
    output: Math.round(400 + 300 * Math.sin(hours * 3) + 30 * Math.sin(hours * 131)) / 1000,
    action: Math.sin(hours * 75) > 0 ? 'heating' : 'idle',
  };
}

// ---------------------------------------------------------------------------------------
// The loops: drivers on simulated plants, reconcile, and what the daemon records

interface SimLoop {
  spec: LoopSpec;
  sensor: SensorDriver;
  memory: LoopMemory | undefined;
  reading: Reading | undefined;
  nextReadMs: number;
  nextCycleMs: number;
  lastSampledAtMs: number | undefined;
}

class Simulation {
  events = 0;
  samples = 0;
  private readonly loops: SimLoop[];
  private readonly actuators: Map<string, ActuatorDriver>;

  constructor(
    config: Config,
    nowMs: () => number,
    private readonly state: StateStore,
    private readonly eventPolicy: RunSpec['events'],
  ) {
    const drivers = buildDrivers(config, nowMs);
    this.actuators = drivers.actuators;
    this.loops = Object.entries(config.loops).map(([id, loop]) => ({
      spec: toLoopSpec(config, id),
      // The bench's configs give each loop one sensor (a set would be read through its first).
      sensor: drivers.sensors.get(loopSensorIds(loop)[0]!)!,
      memory: undefined,
      reading: undefined,
      nextReadMs: START_MS,
      nextCycleMs: START_MS,
      lastSampledAtMs: undefined,
    }));
  }

  nextMs(): number {
    return Math.min(...this.loops.map((l) => Math.min(l.nextReadMs, l.nextCycleMs)));
  }

  /** Reads the sensors due at `nowMs`, then runs the cycles due (a reading triggers one). */
  async runDue(nowMs: number): Promise<void> {
    for (const loop of this.loops) {
      if (loop.nextReadMs <= nowMs) {
        loop.reading = { value: await loop.sensor.read(), atMs: nowMs };
        loop.nextReadMs += SAMPLE_PERIOD_S * 1000;
        loop.nextCycleMs = nowMs;
      }
      if (loop.nextCycleMs <= nowMs) await this.cycle(loop, nowMs);
    }
  }

  private async cycle(loop: SimLoop, nowMs: number): Promise<void> {
    const { spec } = loop;
    const observed: Record<string, ActuatorLevel> = {};
    for (const { actuator } of loopActuators(spec)) {
      observed[actuator.id] = await this.actuators.get(actuator.id)!.observe();
    }
    if (loop.memory === undefined) {
      const relays = loopActuators(spec).filter(({ actuator }) => actuator.kind === 'relay');
      loop.memory = resumeLoopMemory(
        initialLoopMemory(),
        relays.map(({ actuator }) => actuator.id),
        observed,
        nowMs,
      );
    }
    const wasOn = Object.fromEntries(Object.entries(observed).map(([id, level]) => [id, (level ?? 0) > 0]));
    const desired = { generation: 1, setpoint: demoLoop(spec.id).setpoint, mode: demoLoop(spec.id).mode };
    const result = reconcile(
      spec,
      desired,
      { reading: loop.reading, actuators: observed },
      loop.memory,
      nowMs,
    );
    for (const command of result.commands) await this.actuators.get(command.actuatorId)!.write(command.level);
    loop.memory = result.memory;
    loop.nextCycleMs = Math.max(nowMs + 1, Math.min(result.nextWakeMs, nowMs + RESYNC_MS));

    // What CycleRecorder (src/daemon/cycle-recorder.ts) records.
    const { status } = result;
    this.state.saveState(spec.id, result.memory, status, nowMs);
    if (loop.reading && loop.lastSampledAtMs !== loop.reading.atMs) {
      loop.lastSampledAtMs = loop.reading.atMs;
      this.state.addSample(spec.id, {
        atMs: loop.reading.atMs,
        setpoint: status.setpoint,
        measured: status.measured,
        output: status.output,
        action: status.action,
      });
      this.samples++;
    }
    for (const command of result.commands) {
      if (command.reason === 'keep-alive') continue;
      const switched = wasOn[command.actuatorId] !== command.level > 0;
      if (this.eventPolicy === 'none' || (this.eventPolicy === 'switches' && !switched)) continue;
      this.state.addEvent({
        atMs: nowMs,
        loop: spec.id,
        kind: 'actuator',
        source: command.reason,
        message: `${command.actuatorId} → ${command.level} (${command.reason}: ${command.detail})`,
        data: { actuator: command.actuatorId, level: command.level },
      });
      this.events++;
    }
  }
}

function demoLoop(id: string) {
  if (!demo.ok) throw new Error('unreachable');
  return demo.config.loops[id]!;
}

// ---------------------------------------------------------------------------------------
// Measuring

function wchar(): number {
  const match = /wchar:\s*(\d+)/.exec(fs.readFileSync('/proc/self/io', 'utf8'));
  if (!match) throw new Error('/proc/self/io has no wchar line (Linux only)');
  return Number(match[1]);
}

/** Pages in use: the file's pages less the free ones (pruning frees pages later writes reuse). */
function livePages(db: Database.Database): number {
  const pages = db.pragma('page_count', { simple: true }) as number;
  return pages - (db.pragma('freelist_count', { simple: true }) as number);
}

/** Page number → the table or index it belongs to now (dbstat). */
function pageOwners(db: Database.Database): Map<number, string> {
  const rows = db.prepare<[], { name: string; pageno: number }>('SELECT name, pageno FROM dbstat').all();
  return new Map(rows.map((row) => [row.pageno, row.name]));
}

/**
 * Counts what SQLite appends to the WAL, by reading the -wal file after each commit: frames
 * whose salt matches the header's belong to the current WAL generation. A new salt means the
 * WAL restarted after a checkpoint, which copied the previous generation's distinct pages into
 * the database file. See https://www.sqlite.org/fileformat.html#the_write_ahead_log
 */
class WalCounter {
  frames = 0;
  commits = 0;
  checkpointedPages = 0;
  headers = 0;
  readonly framesByPage = new Map<number, number>();
  private salt: string | undefined;
  private offset = 32;
  private generation = new Set<number>();

  constructor(
    private readonly walPath: string,
    private readonly pageSize: number,
  ) {}

  reset(): void {
    this.poll();
    this.frames = 0;
    this.commits = 0;
    this.checkpointedPages = 0;
    this.headers = 0;
    this.framesByPage.clear();
    this.generation = new Set();
  }

  /** Bytes SQLite wrote for what was counted: frames, checkpoint copies, WAL headers. */
  modelBytes(): number {
    return this.frames * (this.pageSize + 24) + this.checkpointedPages * this.pageSize + this.headers * 32;
  }

  /** `final`: the last checkpoint copied the current generation too. */
  poll(final = false): void {
    let fd: number;
    try {
      fd = fs.openSync(this.walPath, 'r');
    } catch {
      return;
    }
    try {
      const header = Buffer.alloc(32);
      if (fs.readSync(fd, header, 0, 32, 0) < 32) return;
      const salt = header.toString('hex', 16, 24);
      if (salt !== this.salt) {
        if (this.salt !== undefined) this.checkpointedPages += this.generation.size;
        this.headers++;
        this.generation = new Set();
        this.salt = salt;
        this.offset = 32;
      }
      const frame = Buffer.alloc(24);
      while (fs.readSync(fd, frame, 0, 24, this.offset) === 24 && frame.toString('hex', 8, 16) === salt) {
        const page = frame.readUInt32BE(0);
        this.frames++;
        if (frame.readUInt32BE(4) !== 0) this.commits++;
        this.generation.add(page);
        this.framesByPage.set(page, (this.framesByPage.get(page) ?? 0) + 1);
        this.offset += 24 + this.pageSize;
      }
      if (final) {
        this.checkpointedPages += this.generation.size;
        this.generation = new Set();
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Report

function kb(bytes: number): string {
  return `${Math.round(bytes / 1000)}`;
}

function formatTable(rows: RunResult[]): string {
  const header = [
    'loops',
    'flush s',
    'page B',
    'events',
    'kB/loop/day',
    'WAL model',
    'commits/h',
    'events/h/loop',
    'DB growth kB/loop/day',
    'steady',
    'DB size kB',
    '≤ 1 MB',
  ];
  const lines = rows.map((r) => [
    String(r.loops),
    String(r.flushS),
    String(r.pageSize),
    r.events,
    kb(r.bytesPerLoopDay),
    kb(r.walModelBytesPerLoopDay),
    r.commitsPerHour.toFixed(1),
    r.eventsPerLoopHour.toFixed(1),
    kb(r.dbGrowthPerLoopDay),
    kb(r.steadyDbGrowthPerLoopDay),
    kb(r.dbSizeBytes),
    r.meetsTarget ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i < 4 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}

async function main(): Promise<void> {
  const startedMs = performance.now();
  const results: RunResult[] = [];
  for (const spec of runs) results.push(await run(spec));
  const commitLatency = measureCommitLatency();
  const elapsedS = (performance.now() - startedMs) / 1000;
  const openStorePageSize = pageSizeOpenStoreGives();
  // A typical node: the demo's three loops at the default settings.
  const typical = results.find((r) => isDefault(r) && r.loops === 3 && r.events === 'switches')!;
  const commitCost = { latency: commitLatency, fsyncsPerDay: fsyncsPerDay(typical.checkpointsPerDay) };

  const defaults = {
    memoryFlushS: defaultFlushS,
    pageSizeBytes: PAGE_SIZE_BYTES,
    openStorePageSizeBytes: openStorePageSize,
    samplePeriodS: SAMPLE_PERIOD_S,
    retention: RETENTION_DEFAULTS,
  };
  if (jsonOnly) {
    process.stdout.write(`${JSON.stringify({ defaults, measureHours, results, commitCost }, null, 2)}\n`);
  } else {
    const print = (line = '') => process.stdout.write(`${line}\n`);
    print(`homeostat storage bench: ${measureHours} simulated h measured per run, ${elapsedS.toFixed(1)} s`);
    print(
      `defaults: flush every ${defaultFlushS} s, page ${PAGE_SIZE_BYTES} B, reading every ${SAMPLE_PERIOD_S} s, ` +
        `retention ${RETENTION_DEFAULTS.rawRetentionS / 86_400} d raw / ${RETENTION_DEFAULTS.downsampleS} s buckets ` +
        `for ${RETENTION_DEFAULTS.downsampledRetentionS / 86_400} d / events ${RETENTION_DEFAULTS.eventRetentionS / 86_400} d`,
    );
    if (openStorePageSize !== PAGE_SIZE_BYTES) {
      print(
        `NOTE: openStore creates files with ${openStorePageSize}-byte pages; these runs pre-create them with ` +
          `${PAGE_SIZE_BYTES} (PAGE_SIZE_BYTES) until database.ts sets it.`,
      );
    }
    print();
    print(formatTable(results));
    print();
    print('WAL kB per loop per day by b-tree (page 1: file header, free: free-page list), default settings:');
    const detailed = args.includes('--detail') ? results : results.filter((r) => isDefault(r));
    for (const r of detailed) {
      const parts = Object.entries(r.walBytesPerLoopDayByTree)
        .sort((a, b) => b[1] - a[1])
        .map(([tree, bytes]) => `${tree} ${kb(bytes)}`);
      print(`  ${r.loops} loop(s), ${r.flushS} s, ${r.pageSize} B, events ${r.events}: ${parts.join(', ')}`);
    }
    print();
    for (const r of results.filter((r) => isDefault(r) && r.events === 'switches')) {
      print(
        `default settings, ${r.loops} loop(s) (${r.eventsPerLoopHour.toFixed(1)} switch events/h/loop): ` +
          `${(r.bytesPerLoopDay / 1e6).toFixed(2)} MB/loop/day, ${r.commitsPerHour.toFixed(0)} commits/h → ` +
          `${r.meetsTarget ? 'meets' : 'MISSES'} ≤ 1 MB/loop/day`,
      );
    }
    print();
    for (const line of commitCostLines(commitLatency, typical)) print(line);
    print();
    const summary = results.filter((r) => isDefault(r)).map(({ walBytesPerLoopDayByTree, ...r }) => r);
    print(
      `JSON (default settings; --json for every figure): ${JSON.stringify({ defaults, results: summary })}`,
    );
  }
}

function isDefault(r: RunSpec): boolean {
  return r.flushS === defaultFlushS && r.pageSize === PAGE_SIZE_BYTES;
}

await main();
