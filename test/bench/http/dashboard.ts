/**
 * The dashboard as a browser loads it, for the benchmark: the page and the assets it names,
 * weighed as served (bytes on the wire, with and without Accept-Encoding: gzip), and a whole
 * visit (page, assets, node, loops, each loop's history and events, as dashboard/app.js asks).
 */
import { request } from 'node:http';

/** `/` and the `/assets/…` files the page names (what a browser fetches before any API call). */
export async function pagePaths(baseUrl: string): Promise<string[]> {
  const res = await fetch(`${baseUrl}/`);
  const html = await res.text();
  if (res.status !== 200) throw new Error(`GET /: HTTP ${res.status}`);
  const assets = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  return ['/', ...new Set(assets)];
}

/** Body bytes of GET `path` as they crossed the socket (node:http does not decompress). */
function servedBytes(baseUrl: string, path: string, gzip: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}${path}`,
      { headers: gzip ? { 'Accept-Encoding': 'gzip' } : {} },
      (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.byteLength;
        });
        res.on('end', () =>
          res.statusCode === 200 ? resolve(bytes) : reject(new Error(`GET ${path}: HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export interface PageWeight {
  files: string[];
  plainBytes: number;
  gzippedBytes: number;
}

/** The page and its assets, summed, as served plain and gzipped. */
export async function servedPageWeight(baseUrl: string): Promise<PageWeight> {
  const files = await pagePaths(baseUrl);
  let plainBytes = 0;
  let gzippedBytes = 0;
  for (const path of files) {
    plainBytes += await servedBytes(baseUrl, path, false);
    gzippedBytes += await servedBytes(baseUrl, path, true);
  }
  return { files, plainBytes, gzippedBytes };
}

async function get(url: string): Promise<unknown> {
  const res = await fetch(url, { headers: { 'Accept-Encoding': 'gzip' } });
  const type = res.headers.get('content-type') ?? '';
  const body = type.includes('json') ? await res.json() : await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return body;
}

/**
 * What opening the dashboard asks of the server: the page and its assets, /api/node,
 * /api/loops, then each loop's 6 h history and its events. Returns the number of requests.
 */
export async function dashboardVisit(baseUrl: string): Promise<number> {
  let requests = 1; // pagePaths reads the page once to find the assets
  for (const path of await pagePaths(baseUrl)) {
    await get(`${baseUrl}${path}`);
    requests++;
  }
  await get(`${baseUrl}/api/node`);
  const { loops } = (await get(`${baseUrl}/api/loops`)) as { loops: Array<{ loop: string }> };
  requests += 2;
  for (const { loop } of loops) {
    const history = (await get(`${baseUrl}/api/loops/${loop}/history?since=6h&maxPoints=500`)) as {
      from: string;
    };
    await get(`${baseUrl}/api/events?loop=${loop}&since=${encodeURIComponent(history.from)}&limit=1000`);
    requests += 2;
  }
  return requests;
}
