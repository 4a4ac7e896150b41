import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { sleep } from '../integration/helpers.js';
import { seedHistory } from '../support/history.js';
import { faultConfigText, LOOPS, stateTopic } from './support/config.js';
import { measureFrom, type ProbedDaemon, probeSamples, rssOf } from './support/daemon.js';
import { desiredRows, integrity } from './support/db.js';
import { reportFigures } from './support/figures.js';
import {
  apiBase,
  getJson,
  type PollResult,
  poll,
  postJson,
  type RawOutcome,
  rawRequest,
} from './support/http.js';
import { type HostileRequest, hostileHttpCorpus } from './support/http-hostile.js';
import type { TestMqtt } from './support/mqtt.js';
import {
  actuatorLines,
  assertFreshlyReconciled,
  openScenario,
  startRegulating,
  type Verdicts,
} from './support/scenario.js';

/**
 * The HTTP API under attack, on a daemon that regulates (`homeostat run --speed 60`, the
 * demo config, a private broker whose retained states show the loops cycling, the API on a
 * free loopback port, the probe preloaded): connection exhaustion and slowloris, ≥ 2,000 hostile
 * requests, and a storm of long history reads. Each checks that nothing gets in, nothing hangs,
 * regulation goes on with a bounded event-loop stall and bounded memory, and prints its figures.
 */

const SPEED = 60;
/** The longest event-loop stall allowed while the API is attacked (a safety bound, not a timing). */
const STALL_BOUND_MS = 250;
/** RSS growth allowed during an attack (peak against before). */
const RSS_GROWTH_BOUND = 60 * 1024 * 1024;
/** The room's retained state comes every wall second at --speed 60: a gap this long means stalled. */
const STATE_GAP_BOUND_MS = 5_000;
const SLOW_CONNECTIONS = 500;
const IDLE_STREAMS = 50;
/** The server's headersTimeout is 5 s, checked every second: a slow connection lives ~6 s. */
const SLOW_CLOSED_WITHIN_MS = 15_000;
/** The attackers give up after this long if the server has not closed them all. */
const ATTACK_MAX_MS = 20_000;
/** Then the attack goes on this long, every closed connection reopened (a real slowloris). */
const PERSISTENT_MS = 15_000;
const STREAMS_PER_ADDRESS = 8;
const HOSTILE_CONCURRENCY = 16;
const HISTORY_REQUESTS_PER_RANGE = 40;
/** Every history request of the storm answers within this (200 or 503 busy). */
const HISTORY_ANSWER_BOUND_MS = 60_000;

async function regulatingWithApi(t: TestContext, prefix: string, before?: (dbPath: string) => void) {
  const scenario = await openScenario(t, prefix);
  writeFileSync(scenario.configPath, faultConfigText({ brokerUrl: scenario.broker.url }));
  before?.(scenario.dbPath);
  const daemon = await startRegulating(scenario.res, scenario, { speed: SPEED });
  const api = await apiBase(daemon.run);
  await sleep(1_500); // past the start-up's own work
  return { ...scenario, daemon, ...api };
}

/** Longest wall time between two states of `loop` in [fromMs, toMs] (edges included). */
function longestStateGapMs(client: TestMqtt, loop: string, fromMs: number, toMs: number): number {
  const at = client.received
    .filter((m) => m.topic === stateTopic(loop) && m.atMs >= fromMs && m.atMs <= toMs)
    .map((m) => m.atMs);
  return Math.max(0, ...[...at, toMs].map((t, i) => t - (i === 0 ? fromMs : at[i - 1]!)));
}

function peakRss(daemon: ProbedDaemon, fromMs: number, toMs: number): number {
  return Math.max(0, ...probeSamples(daemon.probePath, fromMs, toMs).map((s) => s.rssBytes));
}

/** The checks every attack ends with: alive, regulating, bounded stall and memory, integrity. */
function checkStillRegulating(
  v: Verdicts,
  ctx: { daemon: ProbedDaemon; client: TestMqtt; dbPath: string },
  figures: { longestStallMs: number; rssBeforeBytes: number; peakRssBytes: number; stateGapMs: number },
): void {
  v.check('the daemon survives', () =>
    assert.equal(ctx.daemon.run.exitStatus, undefined, ctx.daemon.run.stderr.slice(-2_000)),
  );
  for (const loop of LOOPS) {
    v.check(`${loop} still publishes reconciled states`, () => assertFreshlyReconciled(ctx.client, loop));
  }
  v.check(`room states kept coming (no gap over ${STATE_GAP_BOUND_MS} ms)`, () =>
    assert.ok(figures.stateGapMs < STATE_GAP_BOUND_MS, `${figures.stateGapMs} ms`),
  );
  v.check(`longest event-loop stall under ${STALL_BOUND_MS} ms`, () =>
    assert.ok(figures.longestStallMs < STALL_BOUND_MS, `${figures.longestStallMs} ms`),
  );
  v.check(`peak RSS grows less than ${RSS_GROWTH_BOUND / 1_048_576} MB`, () =>
    assert.ok(
      figures.peakRssBytes - figures.rssBeforeBytes < RSS_GROWTH_BOUND,
      `${mb(figures.rssBeforeBytes)} → peak ${mb(figures.peakRssBytes)} MB`,
    ),
  );
  v.check('integrity', () => assert.deepEqual(integrity(ctx.dbPath), ['ok']));
}

const mb = (bytes: number) => Math.round(bytes / 1_048_576);

interface SlowConnection {
  socket: Socket;
  openedAtMs?: number;
  closedAtMs?: number;
  byUs: boolean;
  answered: boolean;
  /** Bytes of the trickle sent so far. */
  sent: number;
}

/**
 * Slowloris: `count` connections that send half a request line, then one more byte a second
 * (the rest of the line, a Host, then a header that never ends). `reconnect()` makes it
 * persistent: a connection the server closes is opened again a second later, until `stop()`.
 */
function slowloris(port: number, count: number) {
  const rest = `om HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `;
  const connections: SlowConnection[] = [];
  let running = true;
  let reconnecting = false;
  const open = () => {
    const socket = connect({ port, host: '127.0.0.1' });
    const c: SlowConnection = { socket, byUs: false, answered: false, sent: 0 };
    socket.on('connect', () => {
      c.openedAtMs = Date.now();
      socket.write('GET /api/loops/ro');
    });
    socket.on('data', () => {
      c.answered = true;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      c.closedAtMs = Date.now();
      if (running && reconnecting) setTimeout(() => running && open(), 1_000);
    });
    connections.push(c);
  };
  for (let i = 0; i < count; i++) open();
  const trickle = setInterval(() => {
    for (const c of connections) {
      if (c.closedAtMs !== undefined || c.openedAtMs === undefined) continue;
      c.socket.write(rest[c.sent] ?? 'a');
      c.sent++;
    }
  }, 1_000);
  return {
    connections,
    allClosed: () => connections.every((c) => c.closedAtMs !== undefined),
    reconnect() {
      reconnecting = true;
      for (const c of [...connections]) if (c.closedAtMs !== undefined) open();
    },
    stop() {
      running = false;
      clearInterval(trickle);
      for (const c of connections) {
        if (c.closedAtMs !== undefined) continue;
        c.byUs = true;
        c.socket.destroy();
      }
    },
  };
}

/** `count` event streams from one address that never read: their status (200, 503) or closed. */
async function idleStreams(port: number, count: number) {
  const sockets: Socket[] = [];
  const statuses = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<string>((resolve) => {
          const socket = connect({ port, host: '127.0.0.1' });
          sockets.push(socket);
          const timer = setTimeout(() => resolve('no answer'), 5_000);
          socket.once('data', (chunk: Buffer) => {
            clearTimeout(timer);
            const status = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 'garbled';
            if (status === '200')
              socket.pause(); // idle: never reads again
            else socket.destroy();
            resolve(status);
          });
          socket.on('error', () => {});
          socket.on('close', () => resolve('closed'));
          socket.on('connect', () =>
            socket.write(
              `GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`,
            ),
          );
        }),
    ),
  );
  return {
    statuses,
    close: () => {
      for (const s of sockets) s.destroy();
    },
  };
}

/** How the normal client fared: successes, failures by kind, the longest time without a read. */
function pollFigures(results: PollResult[], fromMs: number, toMs: number) {
  const inWindow = results.filter((r) => r.atMs >= fromMs && r.atMs <= toMs);
  const failures = new Map<string, number>();
  for (const r of inWindow) if (!r.ok) failures.set(r.what, (failures.get(r.what) ?? 0) + 1);
  const okAt = inWindow.filter((r) => r.ok).map((r) => r.atMs + r.ms);
  const longestGapMs = Math.max(0, ...[...okAt, toMs].map((t, i) => t - (i === 0 ? fromMs : okAt[i - 1]!)));
  const failed = [...failures].map(([what, n]) => `${n} ${what}`).join(', ') || 'none failed';
  return { ok: okAt.length, total: inWindow.length, failed, longestGapMs };
}

describe('the HTTP API under attack', () => {
  test(`${SLOW_CONNECTIONS} slowloris connections and ${IDLE_STREAMS} idle streams from one address, then reopened for ${PERSISTENT_MS / 1000} s: slow ones closed by the server, streams capped, still regulating, served again after`, {
    timeout: 120_000,
  }, async (t) => {
    const ctx = await regulatingWithApi(t, 'homeostat-fault-http-slow-');
    const { v, client, daemon, base, port } = ctx;
    const rssBeforeBytes = rssOf(daemon.run.child.pid)!;
    const measured = await measureFrom(daemon);
    // Given a dashboard already open (one kept-alive connection) and a client that connects
    // anew each time (a page opened, the CLI), both reading the room every 200 ms
    const kept = poll(`${base}/api/loops/room`, 200, false);
    const fresh = poll(`${base}/api/loops/room`, 200, true);
    await sleep(1_000);

    // When 50 event streams that never read open from one address, then 500 slow connections
    const attackFromMs = Date.now();
    const streams = await idleStreams(port, IDLE_STREAMS);
    const slow = slowloris(port, SLOW_CONNECTIONS);
    while (!slow.allClosed() && Date.now() - attackFromMs < ATTACK_MAX_MS) await sleep(250);
    // … then reopen every connection the server closes, a second later, for 15 s
    const persistentFromMs = Date.now();
    slow.reconnect();
    await sleep(PERSISTENT_MS);
    // … and then the attackers stop
    const stoppedAtMs = Date.now();
    slow.stop();
    streams.close();
    await sleep(3_000);
    const keptResults = await kept.stop();
    const freshResults = await fresh.stop();
    const endedAtMs = Date.now();
    const stall = measured();
    const health = await getJson(`${base}/api/health`).catch((error: Error) => ({ status: error.message }));

    // Then: every slow connection was refused at the door or closed by the server in time
    const connected = slow.connections.filter((c) => c.openedAtMs !== undefined);
    const lifeMs = (c: SlowConnection) => (c.closedAtMs ?? stoppedAtMs) - c.openedAtMs!;
    const wave = connected.filter((c) => c.openedAtMs! < persistentFromMs);
    const refused = wave.filter((c) => lifeMs(c) < 1_000);
    const held = connected.filter((c) => c.byUs || lifeMs(c) >= 1_000);
    const waveLives = wave
      .filter((c) => lifeMs(c) >= 1_000)
      .map(lifeMs)
      .sort((a, b) => a - b);
    const statusCount = (s: string) => streams.statuses.filter((x) => x === s).length;
    const during = {
      kept: pollFigures(keptResults, attackFromMs, stoppedAtMs),
      wave: pollFigures(freshResults, attackFromMs, persistentFromMs),
      persistent: pollFigures(freshResults, persistentFromMs, stoppedAtMs),
    };
    const firstFreshOkAfter = freshResults.find((r) => r.atMs >= stoppedAtMs && r.ok);
    const figures = {
      longestStallMs: stall.longestStallMs,
      rssBeforeBytes,
      peakRssBytes: peakRss(daemon, attackFromMs, endedAtMs),
      stateGapMs: longestStateGapMs(client, 'room', attackFromMs, stoppedAtMs),
    };
    reportFigures(t, {
      scenario: `${SLOW_CONNECTIONS} slowloris + ${IDLE_STREAMS} idle streams`,
      ...stall,
      rssBeforeBytes,
      rssAfterBytes: figures.peakRssBytes,
      notes:
        `first wave: ${wave.length} connected, ${refused.length} closed at once (connection cap), ${waveLives.length} held and closed by the server after ` +
        `${waveLives[0] ?? '–'}–${waveLives.at(-1) ?? '–'} ms; ${connected.length - wave.length} reconnections in ${PERSISTENT_MS / 1000} s after it; ` +
        `streams ${statusCount('200')} × 200, ${statusCount('503')} × 503, ${IDLE_STREAMS - statusCount('200') - statusCount('503')} other; ` +
        `kept-alive client read ${during.kept.ok}/${during.kept.total} (${during.kept.failed}, longest gap ${during.kept.longestGapMs} ms); ` +
        `fresh-connection client ${during.wave.ok}/${during.wave.total} in the first wave (${during.wave.failed}, longest gap ${during.wave.longestGapMs} ms), ` +
        `${during.persistent.ok}/${during.persistent.total} while reconnecting (${during.persistent.failed}, longest gap ${during.persistent.longestGapMs} ms); ` +
        `served again ${firstFreshOkAfter ? firstFreshOkAfter.atMs + firstFreshOkAfter.ms - stoppedAtMs : '–'} ms after the attack; ` +
        `longest gap between room states ${figures.stateGapMs} ms; RSS after = peak; ${actuatorLines(daemon.run, attackFromMs, stoppedAtMs).length} actuator writes meanwhile`,
    });
    v.check(
      `every held slow connection closed by the server within ${SLOW_CLOSED_WITHIN_MS / 1000} s`,
      () => {
        const late = held.filter((c) => lifeMs(c) > SLOW_CLOSED_WITHIN_MS);
        const longest = Math.max(0, ...held.map(lifeMs));
        assert.equal(late.length, 0, `${late.length} of ${held.length} lived longer (longest ${longest} ms)`);
      },
    );
    v.check('no slow connection was ever answered as a request', () =>
      assert.equal(connected.filter((c) => c.answered).length, 0),
    );
    v.check(`streams from one address capped at ${STREAMS_PER_ADDRESS}, the rest answered 503`, () => {
      assert.equal(statusCount('200'), STREAMS_PER_ADDRESS, streams.statuses.join(' '));
      assert.equal(statusCount('503'), IDLE_STREAMS - STREAMS_PER_ADDRESS, streams.statuses.join(' '));
    });
    v.check('the kept-alive client was served throughout the attack', () =>
      assert.ok(
        during.kept.longestGapMs < STATE_GAP_BOUND_MS,
        `${during.kept.failed}, longest gap ${during.kept.longestGapMs} ms`,
      ),
    );
    v.check('a fresh client is served again within 2 s of the attack stopping', () => {
      assert.ok(firstFreshOkAfter, 'never');
      assert.ok(firstFreshOkAfter.atMs + firstFreshOkAfter.ms - stoppedAtMs < 2_000);
    });
    v.check('GET /api/health answers 200 after', () => assert.equal(health.status, 200));
    checkStillRegulating(v, ctx, figures);
    v.settle();
  });

  test('≥ 2,000 hostile requests (oversized, unfinished and invalid bodies, NaN/1e999/-0, duplicate keys, built-in loop ids, encoding garbage, 100 KB URLs, 200 headers, wrong methods, HEAD everywhere, form posts, cross-site and rebinding headers): nothing accepted, none hangs, no 5xx, still regulating', {
    timeout: 180_000,
  }, async (t) => {
    const ctx = await regulatingWithApi(t, 'homeostat-fault-http-hostile-');
    const { v, client, daemon, dbPath, base, port } = ctx;
    const corpus = hostileHttpCorpus(port, LOOPS);
    assert.ok(corpus.length >= 2_000, `${corpus.length} requests`);
    const desiredBefore = desiredRows(dbPath);
    const rssBeforeBytes = rssOf(daemon.run.child.pid)!;
    const measured = await measureFrom(daemon);
    const startedAtMs = Date.now();

    // When every request is sent, 16 at a time, those whose body never ends all at once beside
    const outcomes = new Map<HostileRequest, RawOutcome>();
    const send = async (h: HostileRequest) => outcomes.set(h, await rawRequest(port, h.req));
    const waiting = corpus.filter((h) => h.req.thenWait);
    const queue = corpus.filter((h) => !h.req.thenWait);
    const unfinished = Promise.all(waiting.map(send));
    await Promise.all(
      Array.from({ length: HOSTILE_CONCURRENCY }, async () => {
        for (let h = queue.shift(); h; h = queue.shift()) await send(h);
      }),
    );
    await unfinished;
    const endedAtMs = Date.now();
    const stall = measured();
    const desiredAfter = desiredRows(dbPath);

    // Then nothing was accepted, everything was answered or closed, nothing stored
    const all = [...outcomes];
    const show = ([h, o]: [HostileRequest, RawOutcome]) =>
      `${h.label}: ${o.outcome}${o.status ? ` ${o.status}` : ''} ${JSON.stringify(o.head.split('\r\n\r\n')[1]?.slice(0, 120) ?? '')}`;
    const accepted = all.filter(
      ([h, o]) => h.write && (o.status === 200 || o.head.includes('"accepted":true')),
    );
    const hung = all.filter(([, o]) => o.outcome === 'hung');
    const unanswered = all.filter(([h, o]) => h.wellFormed && o.outcome !== 'answered');
    const serverErrors = all.filter(([, o]) => (o.status ?? 0) >= 500);
    const unexpected = all.filter(
      ([h, o]) => h.expect && o.status !== undefined && !h.expect.includes(o.status),
    );
    const leaks = all.filter(([h, o]) => h.mustNotContain?.test(o.head));
    const unfinishedLives = waiting.map((h) => outcomes.get(h)!.ms).sort((a, b) => a - b);
    const byStatus = new Map<string, number>();
    for (const [, o] of all) {
      const key = o.status === undefined ? o.outcome : String(o.status);
      byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
    }
    const figures = {
      longestStallMs: stall.longestStallMs,
      rssBeforeBytes,
      peakRssBytes: peakRss(daemon, startedAtMs, endedAtMs),
      stateGapMs: longestStateGapMs(client, 'room', startedAtMs, endedAtMs),
    };
    reportFigures(t, {
      scenario: `${corpus.length} hostile HTTP requests`,
      ...stall,
      rssBeforeBytes,
      rssAfterBytes: figures.peakRssBytes,
      notes:
        `in ${Math.round((endedAtMs - startedAtMs) / 100) / 10} s: ${[...byStatus]
          .sort()
          .map(([k, n]) => `${n} × ${k}`)
          .join(', ')}; ` +
        `${accepted.length} accepted, ${hung.length} hung, ${serverErrors.length} 5xx, ${unexpected.length} off-contract; ` +
        `unfinished bodies closed after ${unfinishedLives[0]}–${unfinishedLives.at(-1)} ms; longest gap between room states ${figures.stateGapMs} ms; RSS after = peak`,
    });
    v.check('no hostile write accepted', () => assert.deepEqual(accepted.slice(0, 20).map(show), []));
    v.check('stored desired state unchanged', () => assert.deepEqual(desiredAfter, desiredBefore));
    v.check('no request left hanging', () => assert.deepEqual(hung.slice(0, 20).map(show), []));
    v.check('every well-formed request answered', () =>
      assert.deepEqual(unanswered.slice(0, 20).map(show), []),
    );
    v.check('no file from outside the dashboard served', () => assert.deepEqual(leaks.map(show), []));
    v.check('no 5xx answer', () => assert.deepEqual(serverErrors.slice(0, 20).map(show), []));
    v.check('statuses as the contract gives them', () =>
      assert.deepEqual(unexpected.slice(0, 30).map(show), []),
    );
    await v.checkAsync('a valid write afterwards is accepted and applied', async () => {
      const answer = await postJson(base, '/api/loops/room', { setpoint: 21.5 });
      assert.equal(answer.status, 200, answer.head);
      await client.state(stateTopic('room'), (s) => s.setpoint === 21.5, { timeoutMs: 5_000 });
    });
    checkStillRegulating(v, ctx, figures);
    v.settle();
  });

  test(`history storm: ${HISTORY_REQUESTS_PER_RANGE} × 7 days and ${HISTORY_REQUESTS_PER_RANGE} × 400 days at once over a year of history: excess refused 503 busy, all answered in time, still regulating`, {
    timeout: 180_000,
  }, async (t) => {
    let seeded = 0;
    const ctx = await regulatingWithApi(t, 'homeostat-fault-http-history-', (dbPath) => {
      seeded = seedHistory(dbPath, LOOPS, Date.now());
    });
    const { v, client, daemon, base } = ctx;
    const rssBeforeBytes = rssOf(daemon.run.child.pid)!;
    const measured = await measureFrom(daemon);

    // When 80 history requests arrive at once, each on its own connection
    const startedAtMs = Date.now();
    // 7 days and 400 days in turn, over every loop
    const ranges = Array.from({ length: 2 * HISTORY_REQUESTS_PER_RANGE }, (_, i) =>
      i % 2 === 0 ? '7d' : '400d',
    );
    const answers = await Promise.all(
      ranges.map((since, i) =>
        getJson(
          `${base}/api/loops/${LOOPS[Math.floor(i / 2) % LOOPS.length]}/history?since=${since}`,
          HISTORY_ANSWER_BOUND_MS + 5_000,
        )
          .then((a) => ({ since, ...a }))
          .catch((error: Error) => ({
            since,
            status: 0,
            body: error.message,
            headers: {} as Record<string, unknown>,
            ms: Date.now() - startedAtMs,
          })),
      ),
    );
    const endedAtMs = Date.now();
    const stall = measured();
    const after = await getJson(`${base}/api/loops/room/history?since=7d`).catch((e: Error) => ({
      status: 0,
      body: e.message,
      ms: 0,
    }));

    // Then each was served or refused busy, in time, and the loops never waited
    const served = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 503);
    const other = answers.filter((a) => a.status !== 200 && a.status !== 503);
    const servedMs = served.map((a) => a.ms).sort((a, b) => a - b);
    const busyMs = busy.map((a) => a.ms).sort((a, b) => a - b);
    const points = (a: { body: unknown }) => (a.body as { points?: unknown[] }).points?.length ?? 0;
    const figures = {
      longestStallMs: stall.longestStallMs,
      rssBeforeBytes,
      peakRssBytes: peakRss(daemon, startedAtMs, endedAtMs),
      stateGapMs: longestStateGapMs(client, 'room', startedAtMs, endedAtMs),
    };
    reportFigures(t, {
      scenario: `history storm ${ranges.length} × 7d/400d`,
      ...stall,
      rssBeforeBytes,
      rssAfterBytes: figures.peakRssBytes,
      notes:
        `${seeded} samples per loop seeded (7 d of readings every 10 s, 358 d of 5-min buckets); ` +
        `${served.length} × 200 (7d ${served.filter((a) => a.since === '7d').length}, 400d ${served.filter((a) => a.since === '400d').length}) in ` +
        `${servedMs[0]}–${servedMs.at(-1)} ms (median ${servedMs[Math.floor(servedMs.length / 2)]}), ` +
        `${busy.length} × 503 busy in ${busyMs[0] ?? '–'}–${busyMs.at(-1) ?? '–'} ms, ${other.length} other; ` +
        `storm over in ${endedAtMs - startedAtMs} ms; longest gap between room states ${figures.stateGapMs} ms; RSS after = peak`,
    });
    v.check('every request answered 200 or 503', () =>
      assert.deepEqual(
        other.map((a) => `${a.since}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`),
        [],
      ),
    );
    v.check('excess requests refused 503 busy with Retry-After, not queued', () => {
      assert.ok(busy.length > 0, 'none refused');
      for (const a of busy) {
        assert.match(JSON.stringify(a.body), /busy/);
        assert.equal(a.headers['retry-after'], '1');
      }
    });
    v.check('served answers hold the history', () => {
      assert.ok(served.length > 0, 'none served');
      for (const a of served) assert.ok(points(a) > 100, `${a.since}: ${points(a)} points`);
    });
    v.check(`every request answered within ${HISTORY_ANSWER_BOUND_MS / 1000} s`, () =>
      assert.ok(Math.max(...answers.map((a) => a.ms)) < HISTORY_ANSWER_BOUND_MS),
    );
    v.check('a history request after the storm is served', () => assert.equal(after.status, 200));
    checkStillRegulating(v, ctx, figures);
    v.settle();
  });
});
