import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { acceptsGzip, BASE_HEADERS } from './respond.js';

/**
 * The dashboard's files, served from this machine only (a Pi is often offline): the folder
 * `dashboard/` at the package root (the same two levels up from src/http and dist/http), and
 * uPlot's build from node_modules. Read once, on first use, and kept in memory with an ETag and
 * a gzipped copy (the page is about 100 kB, 40 kB gzipped).
 */

/** The dashboard folder: at the package root, two levels above this file in src/ and in dist/. */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../dashboard/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** The page may load only what this server serves, and may not be framed. */
const PAGE_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

interface Asset {
  body: Buffer;
  gzipped: Buffer;
  type: string;
  etag: string;
}

export class DashboardAssets {
  private assets: Map<string, Asset> | undefined;

  constructor(private readonly dir = DASHBOARD_DIR) {}

  /** Answers GET `/` or `/assets/<name>`; false when there is no such file. */
  serve(req: IncomingMessage, res: ServerResponse, name: string): boolean {
    const asset = this.load().get(name);
    if (!asset) return false;
    const headers: Record<string, string> = {
      ...BASE_HEADERS,
      'Content-Type': asset.type,
      ETag: asset.etag,
      // Revalidate every time: cheap (304), and a new version shows at once.
      'Cache-Control': 'no-cache',
      Vary: 'Accept-Encoding',
      ...(asset.type.startsWith('text/html') ? { 'Content-Security-Policy': PAGE_POLICY } : {}),
    };
    if (req.headers['if-none-match'] === asset.etag) {
      res.writeHead(304, headers);
      res.end();
      return true;
    }
    const gzip = acceptsGzip(req.headers['accept-encoding']);
    const body = gzip ? asset.gzipped : asset.body;
    res.writeHead(200, {
      ...headers,
      'Content-Length': String(body.byteLength),
      ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  }

  /** Bytes of every asset, plain and gzipped (the page weight, for the benchmark). */
  weight(): { plainBytes: number; gzippedBytes: number } {
    let plainBytes = 0;
    let gzippedBytes = 0;
    for (const asset of this.load().values()) {
      plainBytes += asset.body.byteLength;
      gzippedBytes += asset.gzipped.byteLength;
    }
    return { plainBytes, gzippedBytes };
  }

  private load(): Map<string, Asset> {
    if (this.assets) return this.assets;
    const files = new Map<string, string>();
    for (const name of safeList(this.dir)) files.set(name, path.join(this.dir, name));
    const uplot = path.dirname(createRequire(import.meta.url).resolve('uplot'));
    files.set('uPlot.iife.min.js', path.join(uplot, 'uPlot.iife.min.js'));
    files.set('uPlot.min.css', path.join(uplot, 'uPlot.min.css'));
    this.assets = new Map();
    for (const [name, file] of files) {
      const type = TYPES[path.extname(name)];
      if (!type) continue;
      const body = readFileSync(file);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      this.assets.set(name, { body, gzipped: gzipSync(body), type, etag });
    }
    return this.assets;
  }
}

/** File names in the folder, plain ones only (no dot files, no subfolders). */
function safeList(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && /^[\w-][\w.-]*$/.test(entry.name))
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}
