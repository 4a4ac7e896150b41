import fs from 'node:fs';
import { loadConfigFile } from '../config/load.js';
import type { EventView, HistoryResponse, LoopView } from '../operations/schemas.js';
import { type PlotEvent, type PlotInput, type PlotPoint, renderPlot } from '../plot/render.js';
import { formatLocal, localOffsetMs } from '../plot/ticks.js';
import { openStoreReadOnly } from '../store/database.js';
import { DesiredStore } from '../store/desired-store.js';
import { StateStore } from '../store/state-store.js';
import type { ApiAnswer, DaemonApi } from './api-client.js';
import { CLI_EVENTS_LIMIT, CLI_HISTORY_MAX_POINTS, liveOrDatabase, type TalkOptions } from './api-inspect.js';

/**
 * `homeostat plot LOOP [--since 6h] --out FILE.svg`: a loop's history as an SVG file (measured,
 * setpoint, output, events), for reports and forum posts. Reads like `history`: the daemon's API
 * first (unflushed samples included), else the database read-only, said on `note`.
 * `--out -` writes the SVG to stdout (`write`) and the summary to `note`.
 */
type Write = (line: string) => void;

export interface PlotOptions extends TalkOptions {
  direct: boolean;
  loop: string;
  since: string;
  sinceMs: number;
  outPath: string;
}

/** What both sources give the renderer. */
interface PlotData {
  points: PlotPoint[];
  events: PlotEvent[];
  unit: string;
  splitRange: boolean;
  fromMs: number;
  toMs: number;
}

export async function plotCommand(opts: PlotOptions, write: Write, note: Write): Promise<number> {
  if (opts.outPath !== '-' && isDirectory(opts.outPath)) {
    note(`homeostat plot: ${opts.outPath} is a directory: name a file, e.g. --out ${opts.loop}.svg`);
    return 1;
  }
  const data = await liveOrDatabase<PlotData>(
    'plot',
    opts,
    note,
    (api) => fromApi(api, opts),
    () => ({ value: fromDatabase(opts), tail: `history from the database ${opts.dbPath} (as last flushed)` }),
  );
  if (data.kind === 'failed') return data.code;
  const { points, events, unit, splitRange } = data.value;
  // The picture spans the data (a 6-h window with 40 minutes of history is 40 minutes wide).
  const fromMs = points.length > 0 ? Math.max(data.value.fromMs, points[0]!.tMs) : data.value.fromMs;
  const toMs = points.length > 0 ? points[points.length - 1]!.tMs : data.value.toMs;
  const input: PlotInput = { loop: opts.loop, unit, fromMs, toMs, points, events, splitRange };
  const svg = renderPlot(input);
  const range = `from ${formatLocal(fromMs, localOffsetMs)} to ${formatLocal(toMs, localOffsetMs)}`;
  if (opts.outPath === '-') {
    write(svg);
    note(`${points.length} points, ${range}`);
    return 0;
  }
  try {
    fs.writeFileSync(opts.outPath, `${svg}\n`);
  } catch (error) {
    note(
      `homeostat plot: cannot write ${opts.outPath}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return 1;
  }
  write(`wrote ${opts.outPath} (${points.length} points, ${range})`);
  return 0;
}

function isDirectory(path: string): boolean {
  try {
    return fs.statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function fromApi(api: DaemonApi, opts: PlotOptions): Promise<ApiAnswer<PlotData>> {
  const history = await api.history(opts.loop, { since: opts.since, maxPoints: CLI_HISTORY_MAX_POINTS });
  if (history.kind !== 'ok') return history;
  const events = await api.events({ loop: opts.loop, since: opts.since, limit: CLI_EVENTS_LIMIT });
  if (events.kind !== 'ok') return events;
  const loops = await api.loops();
  if (loops.kind !== 'ok') return loops;
  return {
    kind: 'ok',
    value: plotDataOfApi(
      history.value,
      events.value,
      loops.value.find((l) => l.loop === opts.loop),
    ),
  };
}

/** The API's answers as plot data (the range is the daemon's: its clock may run ahead under --speed). */
export function plotDataOfApi(
  history: HistoryResponse,
  events: EventView[],
  view: LoopView | undefined,
): PlotData {
  return {
    points: history.points.map((p) => ({
      tMs: Date.parse(p.at),
      measured: p.measured,
      setpoint: p.setpoint,
      output: p.output,
      action: p.action,
    })),
    events: events.map((e) => ({ tMs: Date.parse(e.at), kind: e.kind, message: e.message })),
    unit: view?.unit ?? '',
    // Modes that lower mean a lower actuator: the output axis goes down to −100 %.
    splitRange: view?.modes.some((m) => ['cool', 'heat_cool', 'dehumidify', 'auto'].includes(m)) ?? false,
    fromMs: Date.parse(history.from),
    toMs: Date.parse(history.to),
  };
}

function fromDatabase(opts: PlotOptions): PlotData {
  const db = openStoreReadOnly(opts.dbPath);
  try {
    const samples = new StateStore(db).history(opts.loop, opts.sinceMs);
    const events = new DesiredStore(db, Date.now).events({ loop: opts.loop, sinceMs: opts.sinceMs });
    // The unit and the actuators come from the config; without one the plot still draws.
    const loaded = fs.existsSync(opts.configPath) ? loadConfigFile(opts.configPath) : undefined;
    const loop = loaded?.ok ? loaded.config.loops[opts.loop] : undefined;
    return {
      points: samples.map((s) => ({
        tMs: s.atMs,
        measured: s.measured ?? null,
        setpoint: s.setpoint,
        output: s.output,
        action: s.action,
      })),
      events: events.map((e) => ({ tMs: e.atMs, kind: e.kind, message: e.message })),
      unit: loop?.unit ?? '',
      splitRange: loop?.lower !== undefined,
      fromMs: opts.sinceMs,
      toMs: Math.max(Date.now(), samples[samples.length - 1]?.atMs ?? 0),
    };
  } finally {
    db.close();
  }
}
