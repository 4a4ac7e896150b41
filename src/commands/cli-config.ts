import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { loadConfigFile } from '../config/load.js';
import { type HttpConfig, httpSchema } from '../config/schema/http.js';
import type { Config } from '../config/schema.js';
import {
  type ApiTimeouts,
  apiClient,
  type DaemonApi,
  type NoApi,
  type Token,
  type Unreached,
} from './api-client.js';

/** A token is a line: anything longer in the token file is a wrong file. */
const MAX_TOKEN_FILE_BYTES = 4_096;

/**
 * The config as the talking commands (status, history, events, set) need it: for the API's
 * address and token, and (set without a daemon) the loops and the broker. Unlike `run`, a
 * missing file is no error: the daemon may run with another --config, at the default address.
 */
export interface CliConfig {
  path: string;
  config?: Config;
  /** Why `config` is absent: the loader's `path: message` lines. */
  errors: string[];
  missing: boolean;
}

export function loadCliConfig(path: string): CliConfig {
  if (!existsSync(path)) return { path, errors: [`${path}: no such file`], missing: true };
  const loaded = loadConfigFile(path);
  return loaded.ok
    ? { path, config: loaded.config, errors: [], missing: false }
    : { path, errors: loaded.errors, missing: false };
}

/** What a command reached: an identified daemon, a reason to fall back, or an error to print. */
export type Reached = (
  | { kind: 'api'; api: DaemonApi }
  | NoApi
  | Unreached
  /** No fallback: `code` 1 (the wrong node answered, or it refused), 2 (a usage error). */
  | { kind: 'error'; message: string; code: 1 | 2 }
) & { cli: CliConfig };

/**
 * The daemon's API for a command (the config at `configPath`, or `--api-url`), after asking it
 * which node it is (GET /api/node, the one extra request): with a valid config, another node's
 * answer is an error, not a fallback (a second node on this machine may hold the address). A
 * write needs that check, so `set` without a valid config needs --api-url; reads go on and say
 * which node answered. Nothing is cached: every command asks again.
 */
export async function reachDaemon(
  opts: { configPath: string; apiUrl?: string | undefined; access: 'read' | 'write' },
  note: (line: string) => void,
): Promise<Reached> {
  const { configPath, apiUrl } = opts;
  const cli = loadCliConfig(configPath);
  const problem = cli.missing
    ? `no config at ${configPath}`
    : `${configPath} is not valid (${cli.errors[0] ?? 'see homeostat validate'})`;
  if (!cli.config && apiUrl === undefined) {
    if (opts.access === 'write') {
      const message = `${problem}: without it the daemon cannot be checked to be the node you mean; give --config FILE (the daemon's config), or --api-url URL`;
      return { kind: 'error', code: 2, message, cli };
    }
    if (!cli.missing) note(`${problem}; trying the default API address`);
  }
  const api = daemonApi(cli.config, apiUrl === undefined ? {} : { apiUrl });
  if (api.kind === 'none') return { ...api, cli };
  const answer = await api.node();
  if (answer.kind === 'error') return { kind: 'error', code: 1, message: answer.message, cli };
  if (answer.kind === 'unreachable') return { ...answer, cli };
  const found = answer.value.id;
  if (!cli.config) {
    note(`node ${found} answered at ${api.baseUrl} (${problem}: not checked against a config)`);
    return { kind: 'api', api, cli };
  }
  const expected = cli.config.node.id;
  if (found === expected) {
    // Which files: on an installed Pi the CLI finds the service's config without flags.
    note(`node ${found} answered at ${api.baseUrl} (config ${configPath})`);
    return { kind: 'api', api, cli };
  }
  const hint =
    apiUrl === undefined
      ? `give --api-url, or the http.port of ${expected}'s daemon`
      : `give --config with ${found}'s config, or the --api-url of ${expected}'s daemon`;
  const message = `the daemon at ${api.baseUrl} is node ${found}, not ${expected} (config ${configPath}): ${hint}`;
  return { kind: 'error', code: 1, message, cli };
}

/**
 * reachDaemon for a write by `homeostat <command>`: an error is printed (a usage error to `note`,
 * the others to `write`) and its exit code stands in its place.
 */
export async function reachForWrite(
  command: string,
  opts: { configPath: string; apiUrl?: string | undefined },
  write: (line: string) => void,
  note: (line: string) => void,
): Promise<Exclude<Reached, { kind: 'error' }> | 1 | 2> {
  const reached = await reachDaemon(
    { configPath: opts.configPath, apiUrl: opts.apiUrl, access: 'write' },
    note,
  );
  if (reached.kind !== 'error') return reached;
  (reached.code === 2 ? note : write)(`homeostat ${command}: ${reached.message}`);
  return reached.code;
}

/**
 * The running daemon's API for a write that only it can make (no fallback): otherwise the
 * reason is printed, with `why` it must run, and the exit code stands in its place.
 */
export async function reachRunningDaemon(
  command: string,
  opts: { configPath: string; apiUrl?: string | undefined },
  why: string,
  out: { write: (line: string) => void; note: (line: string) => void },
): Promise<DaemonApi | 1 | 2> {
  const reached = await reachForWrite(command, opts, out.write, out.note);
  if (typeof reached === 'number') return reached;
  if (reached.kind === 'api') return reached.api;
  out.write(`homeostat ${command}: ${noDaemonNotice(reached)}: ${why}; start it first`);
  return 1;
}

/** The start of every fallback notice: why the daemon was not asked, or did not answer. */
export function noDaemonNotice(answer: Pick<Unreached, 'url' | 'why' | 'cause'> | NoApi): string {
  if (!('url' in answer)) return answer.why;
  if (answer.cause === 'timeout') return `daemon at ${answer.url}: ${answer.why} (daemon busy or hung?)`;
  if (answer.cause === 'closed') return `daemon at ${answer.url}: ${answer.why}`;
  return `daemon not running (no answer at ${answer.url}: ${answer.why})`;
}

/**
 * The API of the daemon that `config` describes (its http block; the defaults when there is no
 * config), or why there is none. The token (http.token or http.tokenFile) is sent as
 * `Authorization: Bearer` to an address off this machine only (from loopback the daemon needs
 * none), so an unreadable token file is not an error until the daemon asks for it (401).
 */
export function daemonApi(
  config: Pick<Config, 'http'> | undefined,
  opts: ApiTimeouts & { apiUrl?: string } = {},
): DaemonApi | NoApi {
  const http: HttpConfig = config?.http ?? httpSchema.parse({});
  let baseUrl: string;
  if (opts.apiUrl !== undefined) baseUrl = opts.apiUrl.replace(/\/+$/, '');
  else if (!http.enabled) return { kind: 'none', why: 'HTTP API off in the config (http.enabled: false)' };
  else if (http.port === 0) return { kind: 'none', why: 'http.port is 0 (a random port): give --api-url' };
  else baseUrl = apiBaseUrl(http);
  const token: Token = isLoopbackUrl(baseUrl)
    ? { note: 'the CLI sends no token to a loopback address', loopback: true }
    : tokenOf(http);
  return apiClient(baseUrl, token, opts);
}

/** `http://host:port` from the listen address: a wildcard address is reached on loopback. */
export function apiBaseUrl(http: Pick<HttpConfig, 'host' | 'port'>): string {
  let host = http.host.replace(/^\[|\]$/g, '');
  if (host === '0.0.0.0') host = '127.0.0.1';
  else if (/^(::|::0|0:0:0:0:0:0:0:0)$/.test(host)) host = '::1';
  return `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`;
}

/**
 * Whether `url` reaches this machine: 127.0.0.0/8, ::1 (also IPv4-mapped), localhost, and the
 * wildcard addresses (a connection to 0.0.0.0 or :: lands on this machine). Decided on the URL's
 * host as WHATWG parses it (`127.1`, `2130706433` and `[0:0::1]` are normalised first), no DNS.
 */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '');
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (/^127\.\d+\.\d+\.\d+$/.test(host) || host === '0.0.0.0') return true;
  // IPv6 as WHATWG prints it (compressed, hex): ::1, ::, and IPv4-mapped 127.x (::ffff:7fxx:xxxx).
  return host === '::1' || host === '::' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host);
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
