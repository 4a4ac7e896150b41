import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { z } from 'zod';
import { type HttpConfig, httpSchema } from '../config/schema/http.js';
import type { Config } from '../config/schema.js';
import {
  type CommandResult,
  commandResult,
  type EventView,
  errorResponse,
  eventsResponse,
  type HistoryResponse,
  historyResponse,
  type LoopView,
  loopsResponse,
} from '../http/schemas.js';

/**
 * The CLI's client of the daemon's HTTP API (src/http): `status`, `history`, `events` and `set`
 * ask the running daemon first (fresh values, no database lock). An answer is one of three:
 * `ok`; `unreachable` (nothing answered: the caller falls back to the database or the broker);
 * `error` (the daemon answered but refused, or something else answered: no fallback, the
 * message says why and what to do).
 */

/** Reads: the daemon answers from memory in milliseconds; longer means it is not there. */
export const READ_TIMEOUT_MS = 2_000;
/** Writes store the desired state (one SQLite transaction) before answering. */
export const WRITE_TIMEOUT_MS = 5_000;
/** A token is a line: anything longer in the token file is a wrong file. */
const MAX_TOKEN_FILE_BYTES = 4_096;

export type ApiAnswer<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'unreachable'; url: string; why: string }
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

export interface DaemonApi {
  kind: 'api';
  baseUrl: string;
  loops(): Promise<ApiAnswer<LoopView[]>>;
  history(loop: string, query: HistoryQuery): Promise<ApiAnswer<HistoryResponse>>;
  events(query: EventsQuery): Promise<ApiAnswer<EventView[]>>;
  set(loop: string, body: SetBody): Promise<ApiAnswer<CommandResult>>;
}

/** No API to ask, and why (printed as the start of the fallback notice). */
export interface NoApi {
  kind: 'none';
  why: string;
}

export interface DaemonApiOptions {
  /** `--api-url`: wins over the config's http block. */
  apiUrl?: string;
  readTimeoutMs?: number;
  writeTimeoutMs?: number;
}

/** Where the token comes from, for messages (never the token itself). */
interface Token {
  value?: string;
  /** Why there is none, or where it came from. */
  note: string;
}

/**
 * The API of the daemon that `config` describes (its http block; the defaults when there is no
 * config), or why there is none. The token (http.token or http.tokenFile) is sent as
 * `Authorization: Bearer`; it is needed off loopback only, so an unreadable token file is not
 * an error until the daemon asks for it (401).
 */
export function daemonApi(
  config: Pick<Config, 'http'> | undefined,
  opts: DaemonApiOptions = {},
): DaemonApi | NoApi {
  const http: HttpConfig = config?.http ?? httpSchema.parse({});
  let baseUrl: string;
  if (opts.apiUrl !== undefined) baseUrl = opts.apiUrl.replace(/\/+$/, '');
  else if (!http.enabled) return { kind: 'none', why: 'HTTP API off in the config (http.enabled: false)' };
  else if (http.port === 0) return { kind: 'none', why: 'http.port is 0 (a random port): give --api-url' };
  else baseUrl = apiBaseUrl(http);
  const token = tokenOf(http);
  const call = <T>(request: ApiRequest<T>) => callApi(baseUrl, token, request);
  const readMs = opts.readTimeoutMs ?? READ_TIMEOUT_MS;
  return {
    kind: 'api',
    baseUrl,
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
  };
}

/** `http://host:port` from the listen address: a wildcard address is reached on loopback. */
export function apiBaseUrl(http: Pick<HttpConfig, 'host' | 'port'>): string {
  let host = http.host.replace(/^\[|\]$/g, '');
  if (host === '0.0.0.0') host = '127.0.0.1';
  else if (/^(::|::0|0:0:0:0:0:0:0:0)$/.test(host)) host = '::1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`;
}

function tokenOf(http: HttpConfig): Token {
  if (http.token !== undefined) return { value: http.token, note: 'the token from http.token was refused' };
  if (http.tokenFile === undefined) return { note: 'no token is configured' };
  try {
    const value = readTokenFile(http.tokenFile);
    if (value === '') return { note: `http.tokenFile ${http.tokenFile} is empty` };
    return { value, note: `the token from http.tokenFile ${http.tokenFile} was refused` };
  } catch (error) {
    return { note: `cannot read http.tokenFile ${http.tokenFile} (${(error as Error).message})` };
  }
}

/** A regular file of at most 4 KiB, opened non-blocking (a FIFO must not hang the CLI). */
function readTokenFile(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error('not a regular file');
    if (stat.size > MAX_TOKEN_FILE_BYTES) throw new Error(`larger than ${MAX_TOKEN_FILE_BYTES} bytes`);
    const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, length).toString('utf8').trim();
  } finally {
    closeSync(fd);
  }
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
    return { kind: 'unreachable', url: baseUrl, why: unreachableWhy(error, request.timeoutMs) };
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
  if (status === 401) {
    return {
      kind: 'error',
      status,
      message: `the daemon at ${where.baseUrl} wants a valid token (401): ${where.token.note}; put the daemon's token in http.tokenFile (or http.token) of the config given with --config`,
    };
  }
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

/** Why nothing answered, for the fallback notice. */
function unreachableWhy(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  const cause =
    error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  switch (cause?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed before an answer';
    default:
      return cause?.message ?? (error instanceof Error ? error.message : String(error));
  }
}
