/**
 * Latency figures of the HTTP benchmark: nearest-rank percentiles (ms, rounded to µs), and a
 * timer for N sequential requests of one kind (after a few untimed ones that warm the JIT and
 * open the keep-alive connection).
 */

export interface Stats {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of `samples` (ms). */
export function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return { n: 0, p50: NaN, p95: NaN, p99: NaN, max: NaN, mean: NaN };
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  const round = (v: number) => Math.round(v * 1000) / 1000;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / sorted.length;
  return {
    n: sorted.length,
    p50: round(at(50)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(sorted.at(-1)!),
    mean: round(mean),
  };
}

/** Milliseconds since `startNs` (process.hrtime.bigint()). */
export function elapsedMs(startNs: bigint, endNs = process.hrtime.bigint()): number {
  return Number(endNs - startNs) / 1e6;
}

/** Untimed requests before each timed series. */
const WARMUP_REQUESTS = 20;

async function getOnce(url: string): Promise<void> {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
}

/**
 * `n` sequential GETs of `url` (undici fetch: one kept-alive connection per origin), each
 * timed from the call to the last byte of the body; fails on any status but 200. With
 * `bareUrl`, each is followed by one of `bareUrl`, timed alike (see bare.ts).
 */
export async function timeGets(
  url: string,
  n: number,
  bareUrl?: string,
): Promise<{ api: Stats; bare?: Stats }> {
  for (let i = 0; i < WARMUP_REQUESTS; i++) {
    await getOnce(url);
    if (bareUrl) await getOnce(bareUrl);
  }
  const api: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < n; i++) {
    let startNs = process.hrtime.bigint();
    await getOnce(url);
    api.push(elapsedMs(startNs));
    if (!bareUrl) continue;
    startNs = process.hrtime.bigint();
    await getOnce(bareUrl);
    bare.push(elapsedMs(startNs));
  }
  return { api: stats(api), ...(bareUrl ? { bare: stats(bare) } : {}) };
}

/** Median of `values` (the middle one; the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing within ${timeoutMs} ms: ${what}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
