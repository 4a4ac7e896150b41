import type { z } from 'zod';
import type { AlertTestResponse } from '../operations/alert-schemas.js';
import type { LoopTuningView, TuningsResponse, WriteResult } from '../operations/client-schemas.js';
import type { HttpSpec } from '../operations/operation.js';
import type { HistoryResponse } from '../operations/recorded-schemas.js';
import {
  type CommandResult,
  type EventView,
  errorResponse,
  type LoopView,
  type NodeResponse,
} from '../operations/schemas.js';
import { type HttpOperationName, OPERATIONS } from '../operations/table.js';

export type {
  AutotuneView,
  LoopTuningView,
  StoredTuningView,
  TuningsResponse,
  WriteResult,
} from '../operations/client-schemas.js';

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
  /** POST /api/alerts/test: a test alert through every channel, or the one named. */
  testAlerts(body: { channel?: string }): Promise<ApiAnswer<AlertTestResponse>>;
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
 * value (the caller decides where a token may go: see daemonApi in cli-config.ts). Each call
 * names its operation; the path, method, answer schema and timeout come from the table.
 */
export function apiClient(baseUrl: string, token: Token, opts: ApiTimeouts = {}): DaemonApi {
  const call = <K extends HttpOperationName>(name: K, input: CallInput = {}) =>
    callApi(baseUrl, token, operationRequest(name, input, opts));
  const of = (loop: string) => ({ params: { loop } });
  return {
    kind: 'api',
    baseUrl,
    node: async () => unwrap(await call('node'), (value) => value.node),
    loops: async () => unwrap(await call('loops'), (value) => value.loops),
    history: (loop, query) => call('loopHistory', { ...of(loop), query: { ...query } }),
    events: async (query) => unwrap(await call('events', { query: { ...query } }), (value) => value.events),
    set: (loop, body) => call('setLoop', { ...of(loop), body }),
    loop: (loop) => call('loop', of(loop)),
    autotune: (loop, body) => call('autotune', { ...of(loop), body }),
    tuning: (loop, body) => call('applyTuning', { ...of(loop), body }),
    tunings: (loop) => call('tunings', of(loop)),
    preset: (loop, body) => call('selectPreset', { ...of(loop), body }),
    profile: (loop, body) => call('commandProfile', { ...of(loop), body }),
    testAlerts: (body) => call('testAlerts', { body }),
  };
}

/** What a call fills in: the path's parameters, the query, the body. */
interface CallInput {
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

type HttpOf<K extends HttpOperationName> = Extract<(typeof OPERATIONS)[K], { http: unknown }>['http'];
/** What the CLI reads an operation's answer as: its `client` schema, else its `response`. */
type ClientAnswer<K extends HttpOperationName> =
  HttpOf<K> extends { client: z.ZodType<infer T> }
    ? T
    : HttpOf<K> extends { response: z.ZodType<infer T> }
      ? T
      : unknown;

/**
 * The request of an operation. A write's refusals (422, 429, 503, a 404 in this shape) are
 * answers too (`accepted: false`): its schema is checked whatever the status.
 */
function operationRequest<K extends HttpOperationName>(
  name: K,
  { params = {}, query = {}, body }: CallInput,
  opts: ApiTimeouts,
): ApiRequest<ClientAnswer<K>> {
  const http: HttpSpec = OPERATIONS[name].http;
  const path = http.path.replace(/:(\w+)/g, (_, key: string) => encodeURIComponent(params[key] ?? ''));
  const schema = (http.client ?? http.response) as z.ZodType<ClientAnswer<K>>;
  return {
    method: http.method,
    path: `${path}${queryString(query)}`,
    ...(body === undefined ? {} : { body }),
    schema,
    ...(http.write ? { anyStatus: true } : {}),
    timeoutMs: http.write
      ? (opts.writeTimeoutMs ?? WRITE_TIMEOUT_MS)
      : (opts.readTimeoutMs ?? READ_TIMEOUT_MS),
  };
}

function unwrap<T, U>(answer: ApiAnswer<T>, pick: (value: T) => U): ApiAnswer<U> {
  return answer.kind === 'ok' ? { kind: 'ok', value: pick(answer.value) } : answer;
}

function queryString(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

interface ApiRequest<T> {
  method: HttpSpec['method'];
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
