import fs from 'node:fs';
import type Database from 'better-sqlite3';
import { loadConfigFile, parseConfigText } from '../config/load.js';
import { formatPlan, planChanges, planTunings, summarizePlan } from '../config/plan.js';
import { planSchedules } from '../config/plan-schedule.js';
import type { LoopStatus } from '../core/status.js';
import { redactConfigText } from '../redact.js';
import { formatStatusLine } from '../status-line.js';
import { AlertOutboxTable } from '../store/alert-outbox.js';
import { openStoreReadOnly } from '../store/database.js';
import { DesiredStore, type LoopDesiredRow } from '../store/desired-store.js';
import { StateStore } from '../store/state-store.js';
import { type CsvRecordedSeries, formatOutput, type HistoryRow, historyCsvLines } from './history-csv.js';
import { recordedFromDatabase } from './history-recorded.js';

/**
 * Read-only commands: they open the database read-only (WAL lets them read while the daemon
 * writes) and print. `write` receives stdout lines; the return value is the exit code.
 */
type Write = (line: string) => void;

export { parseDurationMs } from '../operations/duration.js';
export type { HistoryRow } from './history-csv.js';

function withDb<T>(dbPath: string, use: (db: Database.Database) => T): T {
  const db = openStoreReadOnly(dbPath);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

export interface LoopReport {
  loop: string;
  desired: Omit<LoopDesiredRow, 'loop'>;
  observedGeneration: number | null;
  status: LoopStatus | null;
  /** When the daemon last wrote this loop's state (it batches: see storage.memoryFlushS). */
  savedAtMs: number | null;
}

export function loopReports(dbPath: string): LoopReport[] {
  return withDb(dbPath, (db) => {
    const desired = new DesiredStore(db, Date.now);
    const state = new StateStore(db);
    return desired.allDesired().map(({ loop, ...row }) => {
      const stored = state.load(loop);
      return {
        loop,
        desired: row,
        observedGeneration: stored?.status?.observedGeneration ?? null,
        status: stored?.status ?? null,
        savedAtMs: stored?.savedAtMs ?? null,
      };
    });
  });
}

export function statusCommand(
  opts: { dbPath: string; json: boolean; configPath?: string },
  write: Write,
): number {
  writeStatusReports(loopReports(opts.dbPath), opts.json, write, loopUnitsOf(opts.configPath));
  if (!opts.json) {
    const backlog = withDb(opts.dbPath, alertBacklogLine);
    if (backlog) write(backlog);
  }
  return 0;
}

/**
 * `alerts: 3 undelivered (phone 2, mqtt 1), the oldest from <time>`, or undefined when none wait
 * (or the file predates the outbox): what the daemon will deliver when it runs again.
 */
function alertBacklogLine(db: Database.Database): string | undefined {
  let rows: ReturnType<AlertOutboxTable['undelivered']>;
  try {
    rows = new AlertOutboxTable(() => db).undelivered();
  } catch {
    return undefined;
  }
  if (rows.length === 0) return undefined;
  const perChannel = new Map<string, number>();
  for (const row of rows) perChannel.set(row.channel, (perChannel.get(row.channel) ?? 0) + 1);
  const channels = [...perChannel].map(([channel, count]) => `${channel} ${count}`).join(', ');
  const oldest = new Date(Math.min(...rows.map((row) => row.createdAtMs))).toISOString();
  return `alerts: ${rows.length} undelivered (${channels}), the oldest from ${oldest}`;
}

/**
 * Each loop's unit from the config file at `configPath` (the database holds none), or '' when
 * the file is missing or invalid: the values are shown all the same.
 */
export function loopUnitsOf(configPath: string | undefined): (loop: string) => string {
  const loaded =
    configPath !== undefined && fs.existsSync(configPath) ? loadConfigFile(configPath) : undefined;
  const loops = loaded?.ok ? loaded.config.loops : {};
  return (loop) => loops[loop]?.unit ?? '';
}

/** `homeostat status` from the database: the JSON reports, or two lines per loop. */
export function writeStatusReports(
  reports: LoopReport[],
  json: boolean,
  write: Write,
  unitOf: (loop: string) => string = () => '',
): void {
  if (json) {
    write(JSON.stringify(reports, null, 2));
    return;
  }
  if (reports.length === 0) write('no loops in the database yet');
  for (const report of reports) {
    const { desired } = report;
    const head = report.status
      ? formatStatusLine(
          { ...report.status, setpoint: desired.setpoint, mode: desired.mode },
          unitOf(report.loop),
        )
      : `${report.loop}  not reconciled yet  → ${desired.setpoint}  ${desired.mode}`;
    // Absolute time: under --speed the daemon's clock runs ahead of the wall clock.
    const saved = report.savedAtMs === null ? '' : `, saved ${new Date(report.savedAtMs).toISOString()}`;
    write(head.replace(/ {2,}/g, '  '));
    write(
      `  generation ${desired.generation}, observed ${report.observedGeneration ?? '—'}; setpoint from ${desired.setpointSource}, mode from ${desired.modeSource}${saved}`,
    );
  }
}

export function eventsCommand(
  opts: { dbPath: string; sinceMs?: number; loop?: string; json: boolean },
  write: Write,
): number {
  const events = withDb(opts.dbPath, (db) =>
    new DesiredStore(db, Date.now).events({
      ...(opts.sinceMs === undefined ? {} : { sinceMs: opts.sinceMs }),
      ...(opts.loop === undefined ? {} : { loop: opts.loop }),
    }),
  );
  if (opts.json) {
    write(JSON.stringify(events, null, 2));
    return 0;
  }
  for (const event of events) writeEventLine({ ...event, at: new Date(event.atMs).toISOString() }, write);
  return 0;
}

/** One event as a line: `time  loop  kind (source)  message` (the API's and the database's). */
export function writeEventLine(
  event: { at: string; loop?: string | null; kind: string; source?: string | null; message: string },
  write: Write,
): void {
  const who = event.source ? ` (${event.source})` : '';
  write(`${event.at}  ${event.loop ?? '-'}  ${event.kind}${who}  ${event.message}`);
}

export function historyCommand(
  opts: { dbPath: string; loop: string; sinceMs: number; csv: boolean },
  write: Write,
): number {
  const { rows, recorded } = withDb(opts.dbPath, (db) => ({
    rows: new StateStore(db).history(opts.loop, opts.sinceMs),
    // Only the CSV shows recorded series (the lines are the loop's).
    recorded: opts.csv ? recordedFromDatabase(db, opts.loop, { fromMs: opts.sinceMs, toMs: Date.now() }) : [],
  }));
  writeHistory(
    rows.map((row) => ({ ...row, at: new Date(row.atMs).toISOString() })),
    opts.csv,
    write,
    recorded,
  );
  return 0;
}

/**
 * History lines, or CSV with its header (the same columns whichever source), with a column per
 * recorded series (history-csv.ts).
 */
export function writeHistory(
  rows: HistoryRow[],
  csv: boolean,
  write: Write,
  recorded: readonly CsvRecordedSeries[] = [],
): void {
  if (csv) {
    for (const line of historyCsvLines(rows, recorded)) write(line);
    return;
  }
  for (const row of rows) {
    const measured = row.measured === undefined || row.measured === null ? '' : String(row.measured);
    write(
      `${row.at}  ${measured || '—'} → ${row.setpoint}  output ${formatOutput(row.output)}  ${row.action}`,
    );
  }
}

/**
 * What applying FILE would change versus the config the daemon applied last:
 * exit 0 no change, 2 changes, 1 invalid file.
 */
export function planCommand(opts: { configPath: string; dbPath: string }, write: Write): number {
  const next = loadConfigFile(opts.configPath);
  if (!next.ok) {
    for (const line of next.errors) write(line);
    return 1;
  }
  // A key under its old name: said once, before the plan (the plan itself is unaffected).
  for (const line of next.warnings) write(line);
  let currentText: string | undefined;
  let stored: LoopDesiredRow[] = [];
  try {
    ({ currentText, stored } = withDb(opts.dbPath, (db) => {
      const store = new DesiredStore(db, Date.now);
      return { currentText: store.latestConfig()?.text, stored: store.allDesired() };
    }));
  } catch (error) {
    if (!(error instanceof Error && error.message.startsWith('no database at'))) throw error;
  }
  const current = currentText === undefined ? undefined : parseConfigText(currentText);
  // The stored text has URL passwords redacted: compare with the file redacted the same way,
  // so a password in mqtt.url is not reported as a change (nor printed).
  const nextRedacted = parseConfigText(redactConfigText(next.text));
  const nextConfig = nextRedacted.ok ? nextRedacted.config : next.config;
  const changes = planChanges(current?.ok ? current.config : undefined, nextConfig);
  for (const line of formatPlan(changes)) write(line);
  write(summarizePlan(changes));
  // Which gains the loops with stored tunings would run with: the file's, or a tuning (these are
  // not changes of the file; loops that never had a tuning simply run the file's gains).
  const tuned = stored.filter((row) => row.tuning !== undefined || row.lastTuningVersion !== undefined);
  const tunedConfig = {
    ...nextConfig,
    loops: pick(
      nextConfig.loops,
      tuned.map((row) => row.loop),
    ),
  };
  for (const line of planTunings(current?.ok ? current.config : undefined, tunedConfig, tuned)) write(line);
  // Presets, schedules, profiles: the setpoint in force now and the next changes (local time).
  for (const line of planSchedules(nextConfig, stored, Date.now())) write(line);
  return changes.length === 0 ? 0 : 2;
}

/** The entries of `record` under `keys` (own keys only). */
function pick<T>(record: Record<string, T>, keys: readonly string[]): Record<string, T> {
  return Object.fromEntries(
    keys.filter((key) => Object.hasOwn(record, key)).map((key) => [key, record[key]!]),
  );
}
