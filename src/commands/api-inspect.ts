import type { LoopStatus } from '../core/status.js';
import type { Action, ConditionType, Mode } from '../core/types.js';
import type { EventView, LoopView } from '../operations/schemas.js';
import { formatStatusLine } from '../status-line.js';
import type { ApiAnswer, DaemonApi, NoApi, Unreached } from './api-client.js';
import { noDaemonNotice, reachDaemon } from './cli-config.js';
import {
  eventsCommand,
  historyCommand,
  loopReports,
  loopUnitsOf,
  writeEventLine,
  writeHistory,
  writeStatusReports,
} from './inspect.js';

/**
 * `status`, `history` and `events` as the CLI runs them: the running daemon's HTTP API first
 * (fresh values, samples not yet flushed included); when nothing answers, the database read-only,
 * saying so on `note` (stderr: stdout stays valid JSON/CSV). An error answer (401, unknown loop,
 * something else listening) is reported, not papered over with older data: exit 1.
 */
type Write = (line: string) => void;

export interface TalkOptions {
  configPath: string;
  dbPath: string;
  apiUrl?: string;
  /**
   * `--db FILE` without `--api-url`: read that file, not the running daemon (which may use
   * another one). Keeps scripts and tests that name a database away from a daemon running here.
   */
  direct?: boolean;
}

/** Most points `history` asks for: the API's maximum (a terminal or a CSV file copes). */
export const CLI_HISTORY_MAX_POINTS = 5_000;
/** Most events `events` asks for: the API's maximum. */
export const CLI_EVENTS_LIMIT = 1_000;

export async function liveStatusCommand(
  opts: TalkOptions & { json: boolean },
  write: Write,
  note: Write,
): Promise<number> {
  const answer = await ask(opts, note, (api) => api.loops());
  if (answer.kind === 'ok') {
    writeLoops(answer.value, opts.json, write);
    return 0;
  }
  if (answer.kind === 'error') return failed('status', answer.message, note);
  return fromDatabase(answer, { write, note }, (buffered) => {
    const reports = loopReports(opts.dbPath);
    const lastMs = Math.max(
      -Infinity,
      ...reports.flatMap((r) => (r.savedAtMs === null ? [] : [r.savedAtMs])),
    );
    const last = Number.isFinite(lastMs) ? new Date(lastMs).toISOString() : 'never';
    writeStatusReports(reports, opts.json, buffered, loopUnitsOf(opts.configPath));
    return { code: 0, tail: `last status written at ${last} (database ${opts.dbPath})` };
  });
}

export async function liveHistoryCommand(
  opts: TalkOptions & { loop: string; since: string; sinceMs: number; csv: boolean },
  write: Write,
  note: Write,
): Promise<number> {
  const answer = await ask(opts, note, (api) =>
    api.history(opts.loop, { since: opts.since, maxPoints: CLI_HISTORY_MAX_POINTS }),
  );
  if (answer.kind === 'ok') {
    if (answer.value.downsampled) {
      note(
        `${opts.loop}: ${answer.value.points.length} bucket averages (more samples than that since ${answer.value.from})`,
      );
    }
    writeHistory(answer.value.points, opts.csv, write, answer.value.recorded);
    return 0;
  }
  if (answer.kind === 'error') return failed('history', answer.message, note);
  return fromDatabase(answer, { write, note }, (buffered) => ({
    code: historyCommand(
      { dbPath: opts.dbPath, loop: opts.loop, sinceMs: opts.sinceMs, csv: opts.csv },
      buffered,
    ),
    tail: `history from the database ${opts.dbPath} (as last flushed)`,
  }));
}

export async function liveEventsCommand(
  opts: TalkOptions & { loop?: string; since?: string; sinceMs?: number; json: boolean },
  write: Write,
  note: Write,
): Promise<number> {
  const answer = await ask(opts, note, (api) =>
    api.events({
      limit: CLI_EVENTS_LIMIT,
      ...(opts.loop === undefined ? {} : { loop: opts.loop }),
      ...(opts.since === undefined ? {} : { since: opts.since }),
    }),
  );
  if (answer.kind === 'ok') {
    if (answer.value.length >= CLI_EVENTS_LIMIT) {
      note(`the newest ${CLI_EVENTS_LIMIT} events; narrow with --since or --loop for older ones`);
    }
    writeEvents(answer.value, opts.json, write);
    return 0;
  }
  if (answer.kind === 'error') return failed('events', answer.message, note);
  return fromDatabase(answer, { write, note }, (buffered) => ({
    code: eventsCommand(
      {
        dbPath: opts.dbPath,
        json: opts.json,
        ...(opts.sinceMs === undefined ? {} : { sinceMs: opts.sinceMs }),
        ...(opts.loop === undefined ? {} : { loop: opts.loop }),
      },
      buffered,
    ),
    tail: `events from the database ${opts.dbPath} (as last flushed)`,
  }));
}

/**
 * The same path for a command beyond these three (`plot`): the API's answer from `request`, or,
 * when nothing answers, `read` from the database with the same notice on `note`. `failed`: the
 * exit code, with the reason already said.
 */
export async function liveOrDatabase<T>(
  command: string,
  opts: TalkOptions,
  note: Write,
  request: (api: DaemonApi) => Promise<ApiAnswer<T>>,
  read: () => { value: T; tail: string },
): Promise<{ kind: 'ok'; value: T } | { kind: 'failed'; code: number }> {
  const answer = await ask(opts, note, request);
  if (answer.kind === 'ok') return answer;
  if (answer.kind === 'error') return { kind: 'failed', code: failed(command, answer.message, note) };
  let result: { value: T; tail: string };
  try {
    result = read();
  } catch (error) {
    note(`${noDaemonNotice(answer)}; ${error instanceof Error ? error.message : String(error)}`);
    return { kind: 'failed', code: 1 };
  }
  note(`${noDaemonNotice(answer)}; ${result.tail}`);
  return { kind: 'ok', value: result.value };
}

type Unanswered = Unreached | NoApi;

/**
 * The API's answer, or why there was none (`kind: 'none'`: no API configured). Asked only once
 * the daemon there is the config's node: another node's answer is an error (no fallback).
 */
async function ask<T>(
  opts: TalkOptions,
  note: Write,
  request: (api: DaemonApi) => Promise<ApiAnswer<T>>,
): Promise<ApiAnswer<T> | NoApi> {
  if (opts.direct) {
    return {
      kind: 'none',
      why: 'reading the database given by --db (leave --db out to ask the running daemon)',
    };
  }
  const reached = await reachDaemon(
    { configPath: opts.configPath, apiUrl: opts.apiUrl, access: 'read' },
    note,
  );
  if (reached.kind === 'api') return request(reached.api);
  if (reached.kind === 'error') return { kind: 'error', message: reached.message };
  return reached;
}

function failed(command: string, message: string, note: Write): number {
  note(`homeostat ${command}: ${message}`);
  return 1;
}

/**
 * The database path: `read` writes to a buffer, so the notice (why the database, and how old)
 * comes first; a database that cannot be read is said together with the daemon.
 */
function fromDatabase(
  answer: Unanswered,
  out: { write: Write; note: Write },
  read: (buffered: Write) => { code: number; tail: string },
): number {
  const lines: string[] = [];
  let result: { code: number; tail: string };
  try {
    result = read((line) => lines.push(line));
  } catch (error) {
    out.note(`${noDaemonNotice(answer)}; ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  out.note(`${noDaemonNotice(answer)}; ${result.tail}`);
  for (const line of lines) out.write(line);
  return result.code;
}

/** `status` from the API: `--json` the API's loops; else the database form, with units. */
export function writeLoops(loops: LoopView[], json: boolean, write: Write): void {
  if (json) {
    write(JSON.stringify(loops, null, 2));
    return;
  }
  if (loops.length === 0) write('no loops configured');
  for (const view of loops) {
    write(formatStatusLine(statusOfView(view), view.unit).replace(/ {2,}/g, '  '));
    const updated = view.updatedAt === null ? '' : `, updated ${view.updatedAt}`;
    write(
      `  generation ${view.generation}, observed ${view.observedGeneration}; setpoint from ${setpointFrom(view)}, mode from ${view.desired.modeSource}${updated}`,
    );
  }
}

/**
 * Where the setpoint in force comes from: the stored source (file, mqtt, http…) unless a preset,
 * the schedule or a profile is in force, then that, with its progress or hold.
 */
export function setpointFrom(view: Pick<LoopView, 'desired' | 'schedule'>): string {
  const schedule = view.schedule;
  if (schedule === undefined) return view.desired.setpointSource;
  const held = schedule.heldUntil === undefined ? '' : `, held until ${schedule.heldUntil}`;
  const profile = schedule.profile;
  switch (schedule.source) {
    case 'manual':
      return `${view.desired.setpointSource}${held}`;
    case 'preset':
      return `preset ${schedule.preset}${held}`;
    case 'schedule':
      return schedule.preset === null ? 'the schedule' : `the schedule (preset ${schedule.preset})`;
    case 'profile':
      return profile === undefined
        ? 'a profile'
        : `profile ${profile.name} (${profile.state}, step ${profile.stepIndex + 1}/${profile.stepCount} ${profile.stepKind}, ` +
            `${durationText(profile.stepRemainingS)} left in the step)`;
  }
}

function durationText(seconds: number): string {
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

function writeEvents(events: EventView[], json: boolean, write: Write): void {
  if (json) {
    write(JSON.stringify(events, null, 2));
    return;
  }
  for (const event of events) writeEventLine(event, write);
}

/** The API's Loop as the LoopStatus the status line formats (the strings are the same words). */
function statusOfView(view: LoopView): LoopStatus {
  return {
    loop: view.loop,
    quantity: view.quantity,
    mode: view.mode as Mode,
    setpoint: view.setpoint,
    measured: view.measured ?? undefined,
    measuredAtMs: view.measuredAt === null ? undefined : Date.parse(view.measuredAt),
    output: view.output,
    action: view.action as Action,
    generation: view.generation,
    observedGeneration: view.observedGeneration,
    actuators: view.actuators,
    conditions: view.conditions.map((c) => ({
      type: c.type as ConditionType,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionMs: Date.parse(c.lastTransitionAt),
      observedGeneration: c.observedGeneration,
    })),
    updatedAtMs: view.updatedAt === null ? 0 : Date.parse(view.updatedAt),
    ...(view.sensors === undefined ? {} : { sensors: view.sensors }),
    // The line shows a running one's phase and cycles (the view's result shape is the API's).
    ...(view.autotune === undefined ? {} : { autotune: view.autotune as unknown as LoopStatus['autotune'] }),
  };
}
