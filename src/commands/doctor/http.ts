/** Doctor check: the HTTP API's address is free (or served by homeostat) and its token readable. */
import { createServer } from 'node:net';
import type { Config } from '../../config/schema.js';
import { httpSettings } from '../../http/settings.js';
import type { CheckResult } from '../../kinds/types.js';

const NAME = 'HTTP API';

/**
 * Whether the daemon will be able to serve the dashboard: the token file (off loopback) reads,
 * and the address is free — or already served by this node's daemon (running), which is fine;
 * another node's daemon there (a second config on one machine) is not.
 * Listens for a moment at most; changes nothing.
 */
export async function checkHttp(config: Config): Promise<CheckResult> {
  const name = NAME;
  if (!config.http.enabled) return { name, status: 'skip', detail: 'off (http.enabled: false)' };
  let settings: ReturnType<typeof httpSettings>;
  try {
    settings = httpSettings(config.http);
  } catch (error) {
    return {
      name,
      status: 'fail',
      detail: (error as Error).message,
      fix: 'create the token file (openssl rand -hex 24 > FILE), readable by the user running homeostat',
    };
  }
  const shown = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  const url = `http://${shown === '0.0.0.0' ? '127.0.0.1' : shown === '[::]' ? '[::1]' : shown}:${settings.port}`;
  const listen = await tryListen(settings.host, settings.port);
  if (listen === 'ok') {
    const access = settings.loopbackOnly ? 'this machine only' : 'other machines too, with the token';
    return {
      name,
      status: 'ok',
      detail: `${settings.host}:${settings.port} is free (${access}): the dashboard will be at ${url}`,
    };
  }
  if (listen === 'EADDRINUSE') {
    const node = await homeostatAt(url);
    if (node === config.node.id)
      return { name, status: 'ok', detail: `homeostat (node ${node}) serves ${url}` };
    if (node) {
      return {
        name,
        status: 'fail',
        detail: `${settings.host}:${settings.port} is served by another homeostat (node ${node}), not this node (${config.node.id})`,
        fix: `set http.port to a free port (or stop node ${node}); homeostat regulates anyway, without its dashboard`,
      };
    }
    return {
      name,
      status: 'fail',
      detail: `${settings.host}:${settings.port} is in use by another program`,
      fix: 'set http.port to a free port (or stop that program); homeostat regulates anyway, without its dashboard',
    };
  }
  return {
    name,
    status: 'fail',
    detail: `cannot listen on ${settings.host}:${settings.port} (${listen})`,
    fix:
      listen === 'EACCES'
        ? 'use a port above 1023'
        : 'check http.host: it must be an address of this machine',
  };
}

function tryListen(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen(port, host, () => server.close(() => resolve('ok')));
  });
}

/** The node id of a homeostat answering at `url`, or undefined. */
async function homeostatAt(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${url}/api/node`, { signal: AbortSignal.timeout(2_000) });
    const body = (await response.json()) as { node?: { id?: unknown } };
    return typeof body.node?.id === 'string' ? body.node.id : undefined;
  } catch {
    return undefined;
  }
}
