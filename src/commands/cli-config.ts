import { existsSync } from 'node:fs';
import { loadConfigFile } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { type DaemonApi, daemonApi, type NoApi } from './api-client.js';

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

/**
 * The daemon's API for a command: from the config at `configPath` (or `--api-url`). A file that
 * is there but invalid is said on `note` (the daemon may still run on the version it applied),
 * and the default address is tried.
 */
export function apiForCli(
  configPath: string,
  apiUrl: string | undefined,
  note: (line: string) => void,
): { api: DaemonApi | NoApi; cli: CliConfig } {
  const cli = loadCliConfig(configPath);
  if (!cli.missing && !cli.config && apiUrl === undefined) {
    note(
      `${configPath} is not valid (${cli.errors[0] ?? 'see homeostat validate'}); trying the default API address`,
    );
  }
  return { api: daemonApi(cli.config, apiUrl === undefined ? {} : { apiUrl }), cli };
}

/** The start of every fallback notice: why the daemon was not asked, or did not answer. */
export function noDaemonNotice(answer: { url: string; why: string } | NoApi): string {
  return 'url' in answer ? `daemon not running (no answer at ${answer.url}: ${answer.why})` : answer.why;
}
