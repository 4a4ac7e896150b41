import { z } from 'zod';

/** Default HTTP port: unassigned by IANA and clear of Home Assistant (8123) and Mosquitto. */
export const DEFAULT_HTTP_PORT = 8734;

/**
 * The local HTTP API and dashboard (src/http). On loopback by default: only this machine can
 * reach it. Bound to any other address, it needs a token (see checkHttp).
 */
export const httpSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('Serve the API and the dashboard. Default true.'),
    host: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe(
        'Address to listen on. Default 127.0.0.1 (this machine only). Any other address (0.0.0.0, a LAN address) needs token or tokenFile.',
      ),
    port: z.number().int().min(0).max(65_535).default(DEFAULT_HTTP_PORT).describe('TCP port. Default 8734.'),
    token: z
      .string()
      .min(16, { error: 'must be at least 16 characters (use tokenFile for a generated one)' })
      .optional()
      .describe(
        'Shared secret for requests from other machines (Authorization: Bearer …). Prefer tokenFile. Never logged. Default: none.',
      ),
    tokenFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Path of a file holding the token (kept out of this file, readable by the service user only). ' +
          'Never logged. Default: none.',
      ),
    publicReads: z
      .boolean()
      .default(false)
      .describe(
        'Off loopback, let reads (the dashboard, status, history, metrics) through without the token; writes always need it. Default false.',
      ),
    allowedHosts: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'Extra names the API answers to in the Host header (a reverse proxy, an mDNS name such as pi.local); guards against DNS rebinding. Default: none beyond the listen address, localhost and loopback addresses.',
      ),
  })
  .describe('Local HTTP API and web dashboard. Default: on, at http://127.0.0.1:8734.');

export type HttpConfig = z.output<typeof httpSchema>;

/** Whether `host` only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** Cross-field rules of the http block (a token off loopback). */
export function checkHttp(http: HttpConfig | undefined, ctx: z.RefinementCtx): void {
  if (!http?.enabled) return;
  if (http.token !== undefined && http.tokenFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['http', 'token'], message: 'give token or tokenFile, not both' });
  }
  if (!isLoopbackHost(http.host) && http.token === undefined && http.tokenFile === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['http', 'host'],
      message: `listening on ${http.host} (reachable from other machines) needs http.tokenFile or http.token: every request that changes something must carry it`,
    });
  }
}
