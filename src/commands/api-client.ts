import { z } from 'zod';
import { type HistoryResponse, historyResponse } from '../http/recorded-schemas.js';
import {
  type CommandResult,
  commandResult,
  type EventView,
  errorResponse,
  eventsResponse,
  type LoopView,
  loopsResponse,
  type NodeResponse,
  nodeResponse,
} from '../http/schemas.js';

/**
 * The CLI's client of the daemon's HTTP API (src/http): `status`, `history`, `events` and `set`
 * ask the running daemon first (fresh values, no database lock). An answer is one of three:
 * `ok`; `unreachable` (nothing answered: the caller falls back to the database or the broker);
 * `error` (the daemon answered but refused, or something else answered: no fallback, the
 * message says why and what to do). Where the daemon is, and which token it gets: cli-config.ts.
 */

/** Reads: the daemon answers from memory in milliseconds; longer means it is not there. */
export const READ_TIMEOUT_MS = 2_000;
/** Writes store the desired state (one SQLite transaction) before answering. */
export const WRITE_TIMEOUT_MS = 5_000;

/**
 * Why nothing answered: `refused` (no connection: the request never arrived), `timeout` (the
 * daemon took it and did not answer in time: busy or hung), `closed` (dropped mid-way). After a
 * `timeout` or `closed` a write may have been applied.
 */
export type Unreached = {
  kind: 'unreachable';
  url: string;
  why: string;
  cause: 'refused' | 'timeout' | 'closed';
};

export type ApiAnswer<T> =
  | { kind: 'ok'; value: T }
  | Unreached
  | { kind: 'error'; status?: number; message: string };

export interface HistoryQuery {
  /** ISO time or a duration (`6h`), measured on the daemon's clock. */
  since: string;
  until?: string;
  maxPoints: number;
}

export interface EventsQuery {
  loop?: string;
  since?: string;
  kind?: string;
  limit?: number;
}

export interface SetBody {
  setpoint?: number;
  mode?: string;
  requestId: string;
}

/**
 * The autotune and tuning answers (their shapes: src/http/schemas.ts). Declared here,
 * loosely (unknown fields kept, most optional): the CLI prints what the daemon gives and must
 * not refuse a daemon one field newer than itself.
 */
const finiteOrNull = z.number().nullable().optional();
const fopdtFields = {
  gain: z.number(),
  timeConstantS: z.number(),
  deadTimeS: z.number(),
  ambient: z.number().optional(),
};
/** Standard errors: NaN (unknown) travels as null in JSON. */
const standardErrorView = z.object({
  gain: finiteOrNull,
  timeConstantS: finiteOrNull,
  deadTimeS: finiteOrNull,
});
export const gainsView = z.looseObject({ kp: z.number(), tiS: z.number(), tdS: z.number() });
export const tuningModelView = z.looseObject({
  ...fopdtFields,
  standardError: standardErrorView.optional(),
  rmsResidual: finiteOrNull,
});
/** A finished run's result as the loop's status shows it: the model and the gains, flat. */
export const autotuneResultView = z.looseObject({
  ...fopdtFields,
  standardError: standardErrorView.optional(),
  rmsResidual: finiteOrNull,
  kp: z.number(),
  tiS: z.number(),
  tdS: z.number(),
  closedLoopS: finiteOrNull,
  /** The suggested relay duty band, loop unit; or a time-proportioning window, s. */
  band: finiteOrNull,
  windowS: finiteOrNull,
});
export const autotuneView = z.looseObject({
  phase: z.string(),
  side: z.string().optional(),
  cycles: z.number().optional(),
  cyclesNeeded: z.number().optional(),
  elapsedMs: finiteOrNull,
  elapsedS: finiteOrNull,
  remainingMs: finiteOrNull,
  remainingS: finiteOrNull,
  remainingIsLimit: z.boolean().optional(),
  startedAt: z.string().nullable().optional(),
  endedAt: z.string().nullable().optional(),
  abortReason: z.string().nullable().optional(),
  reason: z.string().nullable().optional(),
  result: autotuneResultView.nullable().optional(),
});
export type AutotuneView = z.infer<typeof autotuneView>;
/** GET /api/loops/{loop} as the autotune follows it: the Loop with `autotune` and `tuning`. */
export const loopTuningView = z.looseObject({
  loop: z.string(),
  quantity: z.string(),
  unit: z.string(),
  mode: z.string(),
  setpoint: z.number(),
  step: z.number().optional(),
  generation: z.number(),
  observedGeneration: z.number(),
  actuators: z.record(z.string(), z.unknown()),
  autotune: autotuneView.nullable().optional(),
  tuning: z
    .looseObject({
      active: z.union([z.number(), z.literal('config')]),
      latest: z.number().nullable().optional(),
      /** The last start the loop could not make (a latched fault, no reading…), and why. */
      refused: z.looseObject({ reason: z.string(), generation: z.number().optional() }).nullable().optional(),
    })
    .nullable()
    .optional(),
});
export type LoopTuningView = z.infer<typeof loopTuningView>;
export const storedTuningView = z.looseObject({
  version: z.number(),
  createdAt: z.string(),
  source: z.string(),
  active: z.boolean(),
  gains: gainsView,
  /** A loop with a heater and a cooler: the lower side's gains (absent: `gains` serve both). */
  lowerGains: gainsView.optional(),
  model: tuningModelView.nullable().optional(),
  details: z.unknown().optional(),
});
export type StoredTuningView = z.infer<typeof storedTuningView>;
export const tuningsResponse = z.looseObject({
  loop: z.string(),
  active: z.union([z.number(), z.literal('config')]),
  tunings: z.array(storedTuningView),
});
export type TuningsResponse = z.infer<typeof tuningsResponse>;
/** A write's answer (autotune, tuning): refusals are answers too (`accepted: false`). */
export const writeResult = z.looseObject({
  loop: z.string().optional(),
  accepted: z.boolean(),
  reason: z.string().optional(),
  generation: z.number().int().optional(),
  changed: z.boolean().optional(),
  requestId: z.string().optional(),
});
export type WriteResult = z.infer<typeof writeResult>;

export interface AutotuneBody {
  action: 'start' | 'cancel';
  side?: 'raise' | 'lower';
  closedLoopS?: number;
  maxDurationS?: number;
  requestId: string;
}

export interface DaemonApi {
  kind: 'api';
  baseUrl: string;
  /** GET /api/node: which node answers here (checked against the config before anything else). */
  node(): Promise<ApiAnswer<NodeResponse['node']>>;
  loops(): Promise<ApiAnswer<LoopView[]>>;
  history(loop: string, query: HistoryQuery): Promise<ApiAnswer<HistoryResponse>>;
  events(query: EventsQuery): Promise<ApiAnswer<EventView[]>>;
  set(loop: string, body: SetBody): Promise<ApiAnswer<CommandResult>>;
  /** GET /api/loops/{loop}, with its autotune progress and tuning in force. */
  loop(loop: string): Promise<ApiAnswer<LoopTuningView>>;
  /** POST /api/loops/{loop}/autotune: start or cancel a run. */
  autotune(loop: string, body: AutotuneBody): Promise<ApiAnswer<WriteResult>>;
  /** POST /api/loops/{loop}/tuning: put a stored version (or latest, or the config's gains) in force. */
  tuning(
    loop: string,
    body: { version: number | 'latest' | 'config'; requestId: string },
  ): Promise<ApiAnswer<WriteResult>>;
  /** GET /api/loops/{loop}/tunings: the stored versions, newest first. */
  tunings(loop: string): Promise<ApiAnswer<TuningsResponse>>;
  /** POST /api/loops/{loop}/preset: select a preset, or none (null). */
  preset(loop: string, body: { preset: string | null; requestId: string }): Promise<ApiAnswer<WriteResult>>;
  /** POST /api/loops/{loop}/profile: start (with a name), pause, resume or stop the profile. */
  profile(loop: string, body: ProfileBody): Promise<ApiAnswer<WriteResult>>;
}

export type ProfileBody =
  | { action: 'start'; name: string; requestId: string }
  | { action: 'pause' | 'resume' | 'stop'; requestId: string };

/** No API to ask, and why (printed as the start of the fallback notice). */
export interface NoApi {
  kind: 'none';
  why: string;
}

export interface ApiTimeouts {
  readTimeoutMs?: number;
  writeTimeoutMs?: number;
}

/** Where the token comes from, for messages (never the token itself). */
export interface Token {
  value?: string;
  /** Why there is none, or where it came from. */
  note: string;
  /** None sent: the address is this machine's. */
  loopback?: boolean;
}

/**
 * The client of the API at `baseUrl`: `token` is sent as `Authorization: Bearer` when it has a
 * value (the caller decides where a token may go: see daemonApi in cli-config.ts).
 */
export function apiClient(baseUrl: string, token: Token, opts: ApiTimeouts = {}): DaemonApi {
  const call = <T>(request: ApiRequest<T>) => callApi(baseUrl, token, request);
  const readMs = opts.readTimeoutMs ?? READ_TIMEOUT_MS;
  // Refusals (422, 429, 503, a 404 in this shape) are answers too: `accepted: false`.
  const write = (path: string, body: unknown) =>
    call({
      method: 'POST',
      path,
      body,
      schema: writeResult,
      anyStatus: true,
      timeoutMs: opts.writeTimeoutMs ?? WRITE_TIMEOUT_MS,
    });
  return {
    kind: 'api',
    baseUrl,
    node: async () => {
      const answer = await call({
        method: 'GET',
        path: '/api/node',
        schema: nodeResponse,
        timeoutMs: readMs,
      });
      return answer.kind === 'ok' ? { kind: 'ok', value: answer.value.node } : answer;
    },
    loops: async () => {
      const answer = await call({
        method: 'GET',
        path: '/api/loops',
        schema: loopsResponse,
        timeoutMs: readMs,
      });
      return answer.kind === 'ok' ? { kind: 'ok', value: answer.value.loops } : answer;
    },
    history: (loop, query) =>
      call({
        method: 'GET',
        path: `/api/loops/${encodeURIComponent(loop)}/history${queryString({ ...query })}`,
        schema: historyResponse,
        timeoutMs: readMs,
      }),
    events: async (query) => {
      const path = `/api/events${queryString({ ...query })}`;
      const answer = await call({ method: 'GET', path, schema: eventsResponse, timeoutMs: readMs });
      return answer.kind === 'ok' ? { kind: 'ok', value: answer.value.events } : answer;
    },
    set: (loop, body) =>
      call({
        method: 'POST',
        path: `/api/loops/${encodeURIComponent(loop)}`,
        body,
        // Refusals (422, 429, 503, a 404 in this shape) are answers too: `accepted: false`.
        schema: commandResult,
        anyStatus: true,
        timeoutMs: opts.writeTimeoutMs ?? WRITE_TIMEOUT_MS,
      }),
    loop: (loop) => call({ method: 'GET', path: loopPath(loop), schema: loopTuningView, timeoutMs: readMs }),
    autotune: (loop, body) =>
      call({
        method: 'POST',
        path: `${loopPath(loop)}/autotune`,
        body,
        schema: writeResult,
        anyStatus: true,
        timeoutMs: opts.writeTimeoutMs ?? WRITE_TIMEOUT_MS,
      }),
    tuning: (loop, body) =>
      call({
        method: 'POST',
        path: `${loopPath(loop)}/tuning`,
        body,
        schema: writeResult,
        anyStatus: true,
        timeoutMs: opts.writeTimeoutMs ?? WRITE_TIMEOUT_MS,
      }),
    tunings: (loop) =>
      call({ method: 'GET', path: `${loopPath(loop)}/tunings`, schema: tuningsResponse, timeoutMs: readMs }),
    preset: (loop, body) => write(`${loopPath(loop)}/preset`, body),
    profile: (loop, body) => write(`${loopPath(loop)}/profile`, body),
  };
}

const loopPath = (loop: string) => `/api/loops/${encodeURIComponent(loop)}`;

function queryString(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

interface ApiRequest<T> {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  schema: z.ZodType<T>;
  /** Validate the answer with `schema` whatever its status (writes); else only a 200 is. */
  anyStatus?: boolean;
  timeoutMs: number;
}

async function callApi<T>(baseUrl: string, token: Token, request: ApiRequest<T>): Promise<ApiAnswer<T>> {
  const endpoint = `${request.method} ${request.path.split('?')[0]}`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: {
        accept: 'application/json',
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token.value === undefined ? {} : { authorization: `Bearer ${token.value}` }),
      },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    return { kind: 'unreachable', url: baseUrl, ...unreachableWhy(error, request.timeoutMs) };
  }
  return interpret(text, response.status, request, { endpoint, baseUrl, token });
}

function interpret<T>(
  text: string,
  status: number,
  request: ApiRequest<T>,
  where: { endpoint: string; baseUrl: string; token: Token },
): ApiAnswer<T> {
  const body = parseJson(text);
  if (status === 401) return { kind: 'error', status, message: refusedToken(where) };
  if (status === 200 || request.anyStatus) {
    const parsed = request.schema.safeParse(body);
    if (parsed.success) return { kind: 'ok', value: parsed.data };
    if (status === 200) return mismatch(where, parsed.error);
  }
  const error = errorResponse.safeParse(body);
  if (error.success)
    return { kind: 'error', status, message: `${error.data.error} (${where.endpoint}: ${status})` };
  return {
    kind: 'error',
    status,
    message: `${where.endpoint} at ${where.baseUrl} answered ${status} without an API error body: is another program listening there?`,
  };
}

function refusedToken(where: { baseUrl: string; token: Token }): string {
  if (where.token.loopback) {
    // The daemon lets this machine in without a token; one that asks is older, or a proxy.
    return `the daemon at ${where.baseUrl} wants a token from loopback (401): an older homeostat, or a proxy in front of it; ${where.token.note} (whatever listens there could be another program); update the daemon, or give --api-url with its non-loopback address to send the token of the config given with --config`;
  }
  return `the daemon at ${where.baseUrl} wants a valid token (401): ${where.token.note}; put the daemon's token in http.tokenFile (or http.token) of the config given with --config`;
}

function mismatch(where: { endpoint: string; baseUrl: string }, error: z.ZodError): ApiAnswer<never> {
  const issue = error.issues[0];
  const detail = issue ? `${issue.path.join('.') || '(body)'}: ${issue.message}` : 'not JSON';
  return {
    kind: 'error',
    status: 200,
    message: `${where.endpoint} at ${where.baseUrl}: the answer does not match the API (${detail}); is another program (or another homeostat version) listening there?`,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Why nothing answered, for the fallback notice; whether the request may have arrived. */
function unreachableWhy(error: unknown, timeoutMs: number): Pick<Unreached, 'why' | 'cause'> {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return { why: `no answer within ${timeoutMs / 1000} s`, cause: 'timeout' };
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  switch (cause?.code) {
    case 'ECONNREFUSED':
      return { why: 'connection refused', cause: 'refused' };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { why: 'host not found', cause: 'refused' };
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { why: 'host unreachable', cause: 'refused' };
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return { why: 'connection closed before an answer', cause: 'closed' };
    default:
      // Unknown: it may have arrived (a write is then not resent).
      return {
        why: cause?.message ?? (error instanceof Error ? error.message : String(error)),
        cause: 'closed',
      };
  }
}
