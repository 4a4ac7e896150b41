import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { faultConfigText } from './support/config.js';
import { measureFrom, startProbedDaemon } from './support/daemon.js';
import { reportFigures } from './support/figures.js';
import { apiBase } from './support/http.js';
import { type ClientReport, type Lan, lanClient, makeLan } from './support/lan.js';
import { Resources, Verdicts } from './support/scenario.js';

/**
 * The fault case "an API that one device on the LAN cannot lock up", against the daemon as a child
 * process listening on a real LAN address with a token: a network namespace this test makes,
 * the daemon and every device inside it (support/lan.ts), no packet off this machine. Device 1
 * is the attacker, device 2 the owner (with the token), devices 3–6 the other devices of the
 * house. At --speed 60: the guards must hold on real time whatever the daemon's clock says.
 */

const SPEED = 60;
const TOKEN = 'lan-owner-token-0123456789abcdef';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const IDLE_CONNECTIONS = 140;
const SLOW_BODIES = 130;
const OWNER_REQUESTS = 40;
const STREAMS_PER_DEVICE = 8;
const WRONG_TOKENS = 3_000;
/** The rate of the measured attack (3,000 in 12 s). */
const WRONG_TOKENS_PER_S = 250;
/** The owner's requests from another address while the flood goes on. */
const OWNER_DURING_FLOOD = 10;

interface LanDaemon {
  res: Resources;
  v: Verdicts;
  lan: Lan;
  base: string;
  port: number;
  daemon: ReturnType<typeof startProbedDaemon>;
}

/** The demo on simulated plants, its API on the LAN address with the token; undefined: skipped. */
async function lanDaemon(t: TestContext, publicReads: boolean): Promise<LanDaemon | undefined> {
  const res = new Resources(t);
  const lan = makeLan(res);
  if (typeof lan === 'string') {
    t.skip(lan);
    return undefined;
  }
  const dir = res.tempDir('homeostat-fault-http-lan-');
  const configPath = join(dir, 'homeostat.yaml');
  writeFileSync(
    configPath,
    faultConfigText({
      edit: (doc) => doc.set('http', { host: lan.daemonAddress, token: TOKEN, publicReads }),
    }),
  );
  const daemon = startProbedDaemon({
    configPath,
    dbPath: join(dir, 'state.db'),
    speed: SPEED,
    dir,
    prefix: lan.prefix,
  });
  res.daemon(daemon.run);
  await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
  const { base, port } = await apiBase(daemon.run);
  return { res, v: new Verdicts(), lan, base, port, daemon };
}

/** A device job against the daemon from device `n`. */
function device(ctx: LanDaemon, n: number, job: Record<string, unknown>) {
  return lanClient(ctx.res, ctx.lan, {
    host: ctx.lan.daemonAddress,
    port: ctx.port,
    from: ctx.lan.device(n),
    ...job,
  });
}

type Result = { status: number | string; ms: number; retryAfter?: string; body?: string };
const resultsOf = (report: ClientReport) => report.results as Result[];

function latency(results: Result[]): string {
  const ms = results
    .filter((r) => r.status === 200)
    .map((r) => r.ms)
    .sort((a, b) => a - b);
  if (ms.length === 0) return 'none served';
  return `median ${ms[Math.floor(ms.length / 2)]} ms, max ${ms.at(-1)} ms`;
}

function tally(values: Array<number | string>): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(String(v), (counts.get(String(v)) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} × ${k}`).join(', ');
}

/** The daemon still answers and regulates (its health, from the owner, with the token). */
async function checkAlive(ctx: LanDaemon): Promise<void> {
  const { v, daemon } = ctx;
  v.check('the daemon survives', () =>
    assert.equal(daemon.run.exitStatus, undefined, daemon.run.stderr.slice(-2_000)),
  );
  const health = resultsOf(
    await device(ctx, 2, { kind: 'requests', path: '/api/health', headers: BEARER }).done,
  );
  v.check('GET /api/health answers 200 after (every loop cycling)', () =>
    assert.equal(health[0]?.status, 200),
  );
}

interface ThrottleObserved {
  flood: ClientReport;
  floodFromMs: number;
  stall: { longestStallMs: number; p99DelayMs: number };
  owner: Result[];
  metricsText: string;
  same: Result[];
  sameServedAfterMs: number;
}

/** Scenario (c)'s figures and checks: throttled, logged once, in /metrics, the owner unaffected. */
function checkThrottled(t: TestContext, ctx: LanDaemon, o: ThrottleObserved): void {
  const { v, daemon } = ctx;
  const { flood, floodFromMs, stall, owner, metricsText, same, sameServedAfterMs } = o;
  const byStatus = flood.byStatus as Record<string, number>;
  const warnings = daemon.run.filter(
    (line) => line.level === 40 && line.time >= floodFromMs && /wrong API tokens from/.test(line.msg),
  );
  const metric = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metricsText)?.[1] ?? Number.NaN);
  const figures = {
    failures: metric('homeostat_http_auth_failures_total'),
    throttled: metric('homeostat_http_auth_throttled_total'),
    lockedOut: metric('homeostat_http_locked_out_addresses'),
  };
  reportFigures(t, {
    scenario: `LAN: ${WRONG_TOKENS} wrong tokens from one address`,
    ...stall,
    notes:
      `in ${Number(flood.seconds).toFixed(1)} s (${Math.round(WRONG_TOKENS / Number(flood.seconds))}/s): ${tally(Object.entries(byStatus).flatMap(([k, n]) => Array(n).fill(k)))}; Retry-After ${(flood.retryAfters as string[]).join(', ') || '–'} s; ` +
      `${warnings.length} warning(s); /metrics: ${figures.failures} auth failures, ${figures.throttled} throttled, ${figures.lockedOut} address(es) locked out; ` +
      `owner from another address during the flood: ${tally(owner.map((r) => r.status))} (${latency(owner)}); same address with the right token: ${tally(same.map((r) => r.status))}, served ${same.at(-1)?.status === 200 ? `${sameServedAfterMs} ms after the flood` : 'never'}`,
  });
  v.check('the flood was throttled: most answers 429', () =>
    assert.ok((byStatus['429'] ?? 0) > WRONG_TOKENS / 2, JSON.stringify(byStatus)),
  );
  v.check('no wrong token let in', () => assert.equal(byStatus['200'] ?? 0, 0));
  v.check('at most a handful of tokens compared (401)', () =>
    assert.ok((byStatus['401'] ?? 0) <= 20, JSON.stringify(byStatus)),
  );
  v.check('every 429 says when to come back (Retry-After)', () => assert.equal(flood.missingRetryAfter, 0));
  v.check('logged once, at warning', () =>
    assert.equal(warnings.length, 1, warnings.map((l) => l.msg).join('\n')),
  );
  v.check('/metrics shows the failures, the throttled requests and the locked-out address', () => {
    assert.equal(figures.failures, byStatus['401'] ?? 0, metricsText.slice(0, 500));
    assert.equal(figures.throttled, byStatus['429'] ?? 0);
    assert.equal(figures.lockedOut, 1);
  });
  v.check('the owner from another address is served at once, during the flood', () => {
    assert.equal(
      owner.filter((r) => r.status === 200).length,
      OWNER_DURING_FLOOD,
      tally(owner.map((r) => r.status)),
    );
    assert.ok(
      owner.every((r) => r.ms < 1_000),
      latency(owner),
    );
  });
  v.check(
    'the same address is refused 429 at first, then served with the right token after the lockout',
    () => {
      assert.equal(same[0]?.status, 429, tally(same.map((r) => r.status)));
      assert.equal(same.at(-1)?.status, 200, tally(same.map((r) => r.status)));
    },
  );
}

describe('the HTTP API on a LAN address: one device cannot lock it up', () => {
  test(`${IDLE_CONNECTIONS} idle keep-alive connections and ${SLOW_BODIES} slow-body POSTs from one address, reopened as closed: the owner from another address is served every request`, {
    timeout: 120_000,
  }, async (t) => {
    const ctx = await lanDaemon(t, false);
    if (!ctx) return;
    const { v, daemon } = ctx;
    const measured = await measureFrom(daemon);
    // Given an attacker holding 140 keep-alive connections and 130 POSTs whose body never ends
    const attacker = device(ctx, 1, {
      kind: 'hold',
      idle: IDLE_CONNECTIONS,
      slowBody: SLOW_BODIES,
      settleMs: 3_000,
    });
    const held = await attacker.ready;
    // When the owner sends 40 requests with the token, each on a fresh connection, 250 ms apart
    const owner = resultsOf(
      await device(ctx, 2, { kind: 'requests', count: OWNER_REQUESTS, everyMs: 250, headers: BEARER }).done,
    );
    const attack = await attacker.stop();
    const stall = measured();
    const served = owner.filter((r) => r.status === 200).length;
    reportFigures(t, {
      scenario: `LAN: ${IDLE_CONNECTIONS} idle + ${SLOW_BODIES} slow bodies from one address`,
      ...stall,
      notes:
        `attacker: ${held.opened} connections opened in the first 3 s (${held.live} open then), ${attack.opened} in all, ${attack.closedByServer} closed by the server; ` +
        `owner (another address, token, fresh connections): ${served}/${OWNER_REQUESTS} served (${latency(owner)}); others ${tally(owner.filter((r) => r.status !== 200).map((r) => r.status)) || 'none'}`,
    });
    v.check(`the owner was served all ${OWNER_REQUESTS} requests`, () =>
      assert.equal(served, OWNER_REQUESTS, tally(owner.map((r) => r.status))),
    );
    v.check('no error logged (an evicted request is no handler failure)', () => {
      const errors = daemon.run.filter((line) => line.level >= 50);
      assert.deepEqual(
        errors.slice(0, 5).map((line) => line.msg),
        [],
      );
    });
    v.check('the owner was served in under 3 s each', () =>
      assert.ok(
        owner.every((r) => r.ms < 3_000),
        latency(owner),
      ),
    );
    await checkAlive(ctx);
    v.settle();
  });

  test(`${STREAMS_PER_DEVICE} unauthenticated streams from each of 4 other addresses (publicReads): the owner's stream is accepted`, {
    timeout: 90_000,
  }, async (t) => {
    const ctx = await lanDaemon(t, true);
    if (!ctx) return;
    const { v } = ctx;
    // Given four other devices each opening 8 event streams without the token (publicReads)
    const others = [3, 4, 5, 6].map((n) =>
      device(ctx, n, { kind: 'streams', count: STREAMS_PER_DEVICE, hold: true }),
    );
    const opened = await Promise.all(others.map((o) => o.ready));
    const publicStatuses = opened.flatMap((o) => o.statuses as Array<number | string>);
    // When the owner's page logs in and opens its stream (session cookie), and a script its own (token)
    const page = await device(ctx, 2, { kind: 'streams', count: 1, login: TOKEN }).done;
    const script = await device(ctx, 7, { kind: 'streams', count: 1, headers: BEARER }).done;
    await Promise.all(others.map((o) => o.stop()));
    const pageStatus = (page.statuses as unknown[])[0];
    const scriptStatus = (script.statuses as unknown[])[0];
    reportFigures(t, {
      scenario: 'LAN: 4 addresses × 8 public streams',
      notes: `public streams from 4 addresses: ${tally(publicStatuses)}; the owner's page (session): ${String(pageStatus)}; a script with the token: ${String(scriptStatus)}`,
    });
    v.check("the owner's page gets its stream (200)", () => assert.equal(pageStatus, 200));
    v.check('a client with the token gets its stream (200)', () => assert.equal(scriptStatus, 200));
    v.check('the public streams did not take every slot (some refused 503)', () =>
      assert.ok(
        publicStatuses.some((s) => s === 503),
        tally(publicStatuses),
      ),
    );
    await checkAlive(ctx);
    v.settle();
  });

  test(`${WRONG_TOKENS} wrong tokens from one address: throttled (429, Retry-After), logged once, in /metrics; the right token works from another address at once and from the same one after the lockout`, {
    timeout: 120_000,
  }, async (t) => {
    const ctx = await lanDaemon(t, false);
    if (!ctx) return;
    const { v, daemon } = ctx;
    const measured = await measureFrom(daemon);
    const floodFromMs = Date.now();
    // When one address sends 3,000 wrong tokens in 12 s, 8 at a time on kept-alive connections
    const flooding = device(ctx, 1, {
      kind: 'flood',
      count: WRONG_TOKENS,
      concurrency: 8,
      ratePerS: WRONG_TOKENS_PER_S,
    });
    // … and, once it is locked out (the warning), the owner from another address asks, meanwhile
    await daemon.run.waitForLine(/wrong API tokens from/, 20_000).catch(() => undefined);
    const owner = resultsOf(
      await device(ctx, 2, { kind: 'requests', count: OWNER_DURING_FLOOD, everyMs: 200, headers: BEARER })
        .done,
    );
    const flood = await flooding.done;
    const stall = measured();
    // Then /metrics (read by the owner) …
    const metricsText =
      resultsOf(
        await device(ctx, 2, { kind: 'requests', path: '/metrics', headers: BEARER, keepBody: true }).done,
      )[0]?.body ?? '';
    // … and the attacker's address with the right token, polled every 500 ms until served
    const afterMs = Date.now();
    const same = resultsOf(
      await device(ctx, 1, { kind: 'requests', count: 120, everyMs: 500, headers: BEARER, untilStatus: 200 })
        .done,
    );
    const sameServedAfterMs = Date.now() - afterMs;
    checkThrottled(t, ctx, { flood, floodFromMs, stall, owner, metricsText, same, sameServedAfterMs });
    await checkAlive(ctx);
    v.settle();
  });
});
