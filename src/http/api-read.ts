import type { ServerResponse } from 'node:http';
import type { HistoryResponse } from '../operations/recorded-schemas.js';
import type { LoopView, NodeResponse, TuningsResponse } from '../operations/schemas.js';
import { MAX_HISTORY_SPAN_MS } from '../store/history-reader.js';
import type { ApiDeps } from './api-deps.js';
import { queryCount, queryText, queryTimeMs } from './query.js';
import { recordedViews } from './recorded-history.js';
import { HttpError } from './respond.js';
import type { RouteContext } from './router.js';
import type { EventStream } from './sse.js';
import { isoTime, toEventView, toLoopView, toTuningView } from './views.js';

/** History points a request may ask for, at most (a phone draws 500 well). */
export const MAX_HISTORY_POINTS = 5_000;
export const DEFAULT_HISTORY_POINTS = 500;
/** Events a request may ask for, at most. */
export const MAX_EVENTS = 1_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The reads of the API: pure functions of the deps and the request's URL. */
export function nodeInfo(deps: ApiDeps): NodeResponse {
  const { node } = deps.config();
  return {
    node: {
      id: node.id,
      name: node.name,
      version: deps.version,
      startedAt: isoTime(deps.startedAtMs),
      now: isoTime(deps.nowMs()),
      configGeneration: deps.configGeneration() ?? null,
    },
    health: deps.health(),
  };
}

export function allLoops(deps: ApiDeps): { loops: LoopView[] } {
  const config = deps.config();
  const statuses = new Map(deps.statuses().map((status) => [status.loop, status]));
  const desired = new Map(deps.desired().map((row) => [row.loop, row]));
  return {
    loops: Object.entries(config.loops).map(([id, loop]) =>
      toLoopView(id, loop, statuses.get(id), desired.get(id)),
    ),
  };
}

/** One loop (HttpError 404 for a loop the config does not have). */
export function oneLoop(deps: ApiDeps, id: string): LoopView {
  const loop = knownLoop(deps, id);
  const status = deps.statuses().find((s) => s.loop === id);
  const desired = deps.desired().find((row) => row.loop === id);
  return toLoopView(id, loop, status, desired);
}

/** The header a history answer carries when the stored samples could not be read (see ApiHistory). */
export const HISTORY_SOURCE_HEADER = 'X-Homeostat-History-Source';

export async function loopHistory(
  deps: ApiDeps,
  id: string,
  url: URL,
): Promise<{ body: HistoryResponse; headers?: Record<string, string> }> {
  knownLoop(deps, id);
  const nowMs = deps.nowMs();
  const toMs = queryTimeMs(url, 'until', nowMs, nowMs);
  const fromMs = queryTimeMs(url, 'since', nowMs, toMs - 6 * HOUR_MS);
  if (fromMs > toMs) throw new HttpError(400, 'since must not be after until');
  if (toMs - fromMs > MAX_HISTORY_SPAN_MS) {
    throw new HttpError(400, `since must not be more than ${MAX_HISTORY_SPAN_MS / DAY_MS} days before until`);
  }
  const maxPoints = queryCount(url, 'maxPoints', DEFAULT_HISTORY_POINTS, MAX_HISTORY_POINTS);
  const query = { loop: id, fromMs, toMs, maxPoints };
  const { points, downsampled, memoryOnly } = await deps.history(query);
  const stored = (await deps.recorded?.(query)) ?? [];
  const recorded = recordedViews(deps.config(), id, stored, query);
  const body = { loop: id, from: isoTime(fromMs), to: isoTime(toMs), downsampled, points, recorded };
  // A header, not a field: the History schema is the contract; the dashboard still draws.
  return memoryOnly === undefined
    ? { body }
    : {
        body,
        headers: {
          [HISTORY_SOURCE_HEADER]: 'memory; stored samples unreadable now, only those not yet flushed',
        },
      };
}

/**
 * GET /api/loops/{loop}/tunings: the loop's stored tunings, newest first, and the one in force
 * (`config`: the config file's gains). HttpError 404 for a loop the config does not have (a
 * removed loop's history stays in the database, for `homeostat tunings` on the file).
 */
export function loopTunings(deps: ApiDeps, id: string): TuningsResponse {
  knownLoop(deps, id);
  const tunings = deps.tunings(id);
  return {
    loop: id,
    active: tunings.find((tuning) => tuning.active)?.version ?? 'config',
    tunings: tunings.map(toTuningView),
  };
}

export function eventList(deps: ApiDeps, url: URL) {
  const nowMs = deps.nowMs();
  const loop = queryText(url, 'loop');
  const kind = queryText(url, 'kind');
  const since = url.searchParams.get('since');
  const until = url.searchParams.get('until');
  const events = deps.events({
    ...(since ? { sinceMs: queryTimeMs(url, 'since', nowMs, 0) } : {}),
    ...(until ? { untilMs: queryTimeMs(url, 'until', nowMs, nowMs) } : {}),
    ...(loop === undefined ? {} : { loop }),
    ...(kind === undefined ? {} : { kind }),
    limit: queryCount(url, 'limit', 100, MAX_EVENTS),
  });
  return { events: events.map(toEventView) };
}

function knownLoop(deps: ApiDeps, id: string) {
  const { loops } = deps.config();
  const loop = Object.hasOwn(loops, id) ? loops[id] : undefined;
  if (!loop)
    throw new HttpError(404, `unknown loop "${id.slice(0, 64)}" (loops: ${Object.keys(loops).join(', ')})`);
  return loop;
}

/** GET /api/health: 200 when every loop cycled recently, 503 when not (the watchdog rule). */
export function healthAnswer(deps: ApiDeps): { status: number; body: unknown } {
  const health = deps.health();
  return { status: health.ok ? 200 : 503, body: health };
}

/** GET /api/fleet: the nodes on this node's broker (404 without one). */
export function fleetAnswer(deps: ApiDeps): { body: unknown } {
  if (!deps.fleet) {
    throw new HttpError(404, 'no fleet view: this node has no MQTT broker (the view reads the nodes on it)');
  }
  return { body: deps.fleet() };
}

/** GET /api/stream: Server-Sent Events for one loop or all; `handled` once the stream is open. */
export function openStream(
  deps: ApiDeps,
  stream: EventStream,
  { req, res, url, peer, trusted }: RouteContext,
): { status: number; body: undefined; headers: Record<string, string> } | 'handled' {
  // HEAD takes no slot: its writes are dropped, so it would hold one and never be drained.
  if (req.method === 'HEAD') {
    return { status: 200, body: undefined, headers: { 'Content-Type': 'text/event-stream; charset=utf-8' } };
  }
  const loop = url.searchParams.get('loop') ?? undefined;
  if (!stream.open(res, loop, allLoops(deps).loops, peer, trusted ? 'trusted' : 'public')) {
    throw new HttpError(503, 'too many open streams; close another page or try again later');
  }
  return 'handled';
}

/** GET /metrics: Prometheus text (404 when metrics are off). */
export async function writeMetrics(deps: ApiDeps, res: ServerResponse): Promise<'handled'> {
  if (!deps.metrics) throw new HttpError(404, 'metrics are off');
  const text = await deps.metrics.render();
  res.writeHead(200, { 'Content-Type': deps.metrics.contentType, 'Cache-Control': 'no-store' });
  res.end(text);
  return 'handled';
}
