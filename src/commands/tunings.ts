import { randomUUID } from 'node:crypto';
import { openStoreReadOnly } from '../store/database.js';
import { DesiredStore } from '../store/desired-store.js';
import type { StoredTuningView, TuningsResponse } from './api-client.js';
import { liveOrDatabase, type TalkOptions } from './api-inspect.js';
import { significant } from './autotune.js';
import { reachRunningDaemon } from './cli-config.js';

/**
 * `homeostat tunings LOOP [--json]`: the loop's stored tunings (versions of PID gains, from an
 * autotune or entered by hand), newest first, the one in force marked. From the daemon's API,
 * else read-only from the database (said on stderr), like `history`.
 * `homeostat tuning LOOP VERSION|latest|config`: puts one in force through the daemon (accept
 * the newest proposal, restore an earlier one, or go back to the config file's gains).
 */
type Write = (line: string) => void;

export async function tuningsCommand(
  opts: TalkOptions & { loop: string; json: boolean },
  write: Write,
  note: Write,
): Promise<number> {
  const got = await liveOrDatabase<TuningsResponse>(
    'tunings',
    opts,
    note,
    (api) => api.tunings(opts.loop),
    () => ({ value: fromDatabase(opts.dbPath, opts.loop), tail: `tunings from the database ${opts.dbPath}` }),
  );
  if (got.kind === 'failed') return got.code;
  if (opts.json) write(JSON.stringify(got.value, null, 2));
  else for (const line of tuningTable(got.value)) write(line);
  return 0;
}

/** The API's answer, built from the database (read-only). */
export function fromDatabase(dbPath: string, loop: string): TuningsResponse {
  const db = openStoreReadOnly(dbPath);
  try {
    const store = new DesiredStore(db, Date.now);
    const stored = store.tunings(loop);
    if (stored.length === 0 && !store.allDesired().some((row) => row.loop === loop)) {
      throw new Error(`no loop "${loop}" in the database`);
    }
    const tunings = stored.map((t) => ({
      version: t.version,
      createdAt: new Date(t.createdAtMs).toISOString(),
      source: t.source,
      active: t.active,
      gains: { ...t.gains },
      ...(t.lowerGains === undefined ? {} : { lowerGains: { ...t.lowerGains } }),
      ...(t.model ? { model: { ...t.model, standardError: { ...t.model.standardError } } } : {}),
      ...(t.details === undefined ? {} : { details: t.details }),
    }));
    return { loop, active: stored.find((t) => t.active)?.version ?? 'config', tunings };
  } finally {
    db.close();
  }
}

/** A table a person reads: one row per version, `*` on the one in force, the file's gains last. */
export function tuningTable(answer: TuningsResponse): string[] {
  const inForce = answer.active === 'config' ? "the config file's gains" : `version ${answer.active}`;
  const rows = answer.tunings.map((t) => [
    `${t.active ? '*' : ' '} ${t.version}`,
    t.createdAt.slice(0, 16).replace('T', ' '),
    t.source,
    sides(t, (g) => significant(g.kp)),
    sides(t, (g) => `${significant(g.tiS)} s`),
    sides(t, (g) => `${significant(g.tdS)} s`),
    modelText(t),
  ]);
  const perSide = answer.tunings.some((t) => t.lowerGains !== undefined);
  rows.push([`${answer.active === 'config' ? '*' : ' '} config`, '', 'file', '', '', '', '']);
  const header = ['  version', 'created (UTC)', 'source', 'kp', 'tiS', 'tdS', 'model (gain, τ, θ)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    `${answer.loop}: ${answer.tunings.length} stored tuning(s); in force: ${inForce}`,
    line(header),
    ...rows.map(line),
    ...(perSide ? ["a / b: the raise side's / the lower side's gains (heater / cooler)"] : []),
  ];
}

/** A gain of a tuning's one side, or `raise / lower` when it has the lower side's own. */
function sides(t: StoredTuningView, cell: (gains: StoredTuningView['gains']) => string): string {
  return t.lowerGains === undefined ? cell(t.gains) : `${cell(t.gains)} / ${cell(t.lowerGains)}`;
}

function modelText(t: StoredTuningView): string {
  const m = t.model;
  if (!m) return '';
  const pm = (v: number, se: number | null | undefined) =>
    typeof se === 'number' && Number.isFinite(se) ? `${significant(v)} ± ${significant(se)}` : significant(v);
  const se = m.standardError;
  return `${pm(m.gain, se?.gain)}, ${pm(m.timeConstantS, se?.timeConstantS)} s, ${pm(m.deadTimeS, se?.deadTimeS)} s`;
}

export interface TuningOptions {
  configPath: string;
  apiUrl?: string;
  loop: string;
  version: number | 'latest' | 'config';
}

/** `VERSION`, `latest` or `config` as typed; undefined when it is none of them. */
export function parseVersion(text: string | undefined): TuningOptions['version'] | undefined {
  if (text === 'latest' || text === 'config') return text;
  if (text !== undefined && /^[1-9]\d{0,8}$/.test(text)) return Number(text);
  return undefined;
}

/** `homeostat tuning`: exit 0 applied (or already in force), 1 refused / no daemon / error. */
export async function tuningCommand(opts: TuningOptions, write: Write, note: Write): Promise<number> {
  const say = (line: string) => write(`homeostat tuning: ${line}`);
  const api = await reachRunningDaemon('tuning', opts, 'a tuning is put in force by the running daemon', {
    write,
    note,
  });
  if (typeof api === 'number') return api;
  const answer = await api.tuning(opts.loop, {
    version: opts.version,
    requestId: randomUUID().slice(0, 12),
  });
  if (answer.kind === 'error') {
    say(answer.message);
    return 1;
  }
  if (answer.kind === 'unreachable') {
    say(
      `the daemon at ${answer.url}: ${answer.why}: the change may or may not have been applied; check with homeostat tunings ${opts.loop}`,
    );
    return 1;
  }
  const result = answer.value;
  if (!result.accepted) {
    say(`${opts.loop}: refused: ${result.reason ?? 'no reason given'}`);
    return 1;
  }
  const what =
    opts.version === 'config'
      ? "the config file's gains"
      : opts.version === 'latest'
        ? 'the newest tuning'
        : `tuning version ${opts.version}`;
  const generation = result.generation === undefined ? '' : ` (generation ${result.generation})`;
  write(
    result.changed === false
      ? `${opts.loop}: ${what} already in force${generation}`
      : `${opts.loop}: ${what} in force${generation}; the PID takes the new gains bumplessly at its next cycle`,
  );
  return 0;
}
