/** The API's reads on a real node (demo config, SQLite in a temp dir, ManualClock), with fetch. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type * as Api from '../../src/operations/schemas.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { homeostatVersion } from '../../src/version.js';
import { type ApiTestNode, getJson, postJson, startApiNode } from './support.js';

const T0 = Date.UTC(2026, 0, 1);
const DEMO_LOOPS = ['room', 'fermenter', 'greenhouse_humidity'];
/** The loops' allowed silence: 3 × the default resync of 30 s. */
const MAX_SILENCE_MS = 3 * 30_000;
const storedSamples = (node: ApiTestNode) =>
  (node.db.prepare('SELECT count(*) AS n FROM samples').get() as { n: number }).n;

describe('given a node serving the API on loopback', () => {
  test('GET /api/node: its id, name, version, start, clock time, config generation and health', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const { status, body } = await getJson<Api.NodeResponse>(node.base, '/api/node');
    assert.equal(status, 200);
    assert.deepEqual(body.node, {
      id: 'demo',
      name: 'homeostat demo',
      version: homeostatVersion(),
      startedAt: new Date(T0).toISOString(),
      now: new Date(T0 + 60_000).toISOString(),
      configGeneration: 1,
    });
    assert.equal(body.health.ok, true);
  });

  test('GET /api/health: 200 and ok while every loop cycles; storage healthy, MQTT not configured', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const { status, body } = await getJson<Api.HealthView>(node.base, '/api/health');
    assert.equal(status, 200);
    assert.deepEqual(body, {
      ok: true,
      silentLoops: [],
      storage: { healthy: true, message: 'database writable' },
      mqtt: { configured: false, connected: false },
    });
  });

  test('GET /api/health: 503 naming every loop silent beyond 3 × resync (the watchdog rule), 200 again once they cycle', async (t) => {
    // The gate times silences on its own clock: moving it alone is time passing without cycles.
    const gateClock = new ManualClock(T0);
    const node = await startApiNode(t, { gateClock });
    await node.clock.advance(1_000);
    await gateClock.advance(MAX_SILENCE_MS + 1_000);
    const silent = await getJson<Api.HealthView>(node.base, '/api/health');
    assert.equal(silent.status, 503);
    assert.equal(silent.body.ok, false);
    assert.deepEqual(
      silent.body.silentLoops.map((l) => l.loop),
      DEMO_LOOPS,
    );
    for (const loop of silent.body.silentLoops) {
      assert.ok(loop.silentS > MAX_SILENCE_MS / 1000, `${loop.loop} silent ${loop.silentS} s`);
    }
    const info = await getJson<Api.NodeResponse>(node.base, '/api/node');
    assert.equal(info.status, 200, '/api/node answers whatever the health');
    assert.equal(info.body.health.ok, false);

    await node.clock.advance(30_000);
    const again = await getJson<Api.HealthView>(node.base, '/api/health');
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.silentLoops, []);
  });

  test('GET /api/loops: every loop of the config, in config order, with its live status', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const { status, body } = await getJson<{ loops: Api.LoopView[] }>(node.base, '/api/loops');
    assert.equal(status, 200);
    assert.deepEqual(
      body.loops.map((l) => l.loop),
      DEMO_LOOPS,
    );
    for (const loop of body.loops) {
      assert.ok(loop.updatedAt !== null, `${loop.loop} has cycled`);
      assert.ok(
        loop.conditions.some((c) => c.type === 'Reconciled' && c.status === 'True'),
        `${loop.loop} reconciled`,
      );
    }
  });

  test('GET /api/loops/{loop}: the loop as configured and as the last cycle left it', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const { status, body } = await getJson<Api.LoopView>(node.base, '/api/loops/fermenter');
    assert.equal(status, 200);
    const status0 = node.daemon.statuses().find((s) => s.loop === 'fermenter')!;
    assert.deepEqual(
      { ...body, conditions: body.conditions.length, actuators: Object.keys(body.actuators) },
      {
        loop: 'fermenter',
        name: 'Fermenter',
        quantity: 'temperature',
        unit: '°C',
        limits: { min: 0, max: 30 },
        step: 0.5,
        modes: ['off', 'heat', 'cool', 'heat_cool'],
        mode: 'heat_cool',
        setpoint: 18,
        measured: status0.measured ?? null,
        measuredAt: new Date(status0.measuredAtMs!).toISOString(),
        output: status0.output,
        action: status0.action,
        generation: 1,
        observedGeneration: 1,
        desired: { setpointSource: 'file', modeSource: 'file' },
        controller: 'pid',
        tuning: { active: 'config' },
        actuators: ['chamber_heater', 'chamber_cooler'],
        conditions: status0.conditions.length,
        updatedAt: new Date(status0.updatedAtMs).toISOString(),
      },
    );
  });

  test('GET /api/loops/{loop} of a loop the config does not have: 404 naming the loops there are', async (t) => {
    const node = await startApiNode(t);
    for (const loop of ['nope', '__proto__', 'constructor']) {
      const { status, body } = await getJson<{ error: string }>(node.base, `/api/loops/${loop}`);
      assert.equal(status, 404, loop);
      assert.match(body.error, /^unknown loop ".+" \(loops: room, fermenter, greenhouse_humidity\)$/);
    }
  });

  test('GET /api/loops/{loop}/history: the cycles since the start, samples not flushed yet included', async (t) => {
    const node = await startApiNode(t);
    // Less than storage.memoryFlushS (600 s): nothing of the history is in the database yet.
    await node.clock.advance(5 * 60_000);
    assert.equal(storedSamples(node), 0, 'no sample flushed yet');
    const { status, body } = await getJson<Api.HistoryResponse>(node.base, '/api/loops/room/history');
    assert.equal(status, 200);
    assert.equal(body.loop, 'room');
    assert.equal(body.to, new Date(T0 + 5 * 60_000).toISOString());
    assert.equal(body.from, new Date(T0 + 5 * 60_000 - 6 * 3_600_000).toISOString());
    assert.equal(body.downsampled, false);
    // One sample per cycle: the room's sensor is read every 10 s, each reading runs the loop.
    assert.deepEqual(
      body.points.map((p) => p.at),
      Array.from({ length: 31 }, (_, i) => new Date(T0 + i * 10_000).toISOString()),
    );
    assert.ok(
      body.points.every((p) => p.setpoint === 20 && typeof p.measured === 'number'),
      'setpoint 20 and a reading at every point',
    );
    assert.equal(body.points.at(-1)?.action, 'heating');
    // Past the flush (600 s): stored and waiting samples together, each once.
    await node.clock.advance(6 * 60_000);
    assert.ok(storedSamples(node) > 0, 'flushed');
    const after = await getJson<Api.HistoryResponse>(node.base, '/api/loops/room/history');
    assert.deepEqual(
      after.body.points.map((p) => p.at),
      Array.from({ length: 67 }, (_, i) => new Date(T0 + i * 10_000).toISOString()),
    );
  });

  test('GET …/history?maxPoints=2: at most 2 points, bucket averages, marked downsampled', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(5 * 60_000);
    const { status, body } = await getJson<Api.HistoryResponse>(
      node.base,
      '/api/loops/room/history?since=10m&maxPoints=2',
    );
    assert.equal(status, 200);
    assert.equal(body.from, new Date(T0 - 5 * 60_000).toISOString());
    assert.ok(body.points.length >= 1 && body.points.length <= 2, `${body.points.length} points`);
    assert.equal(body.downsampled, true);
  });

  test('GET …/history with since and until as ISO times: only the samples between them', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(5 * 60_000);
    const since = new Date(T0 + 60_000).toISOString();
    const until = new Date(T0 + 120_000).toISOString();
    const { status, body } = await getJson<Api.HistoryResponse>(
      node.base,
      `/api/loops/room/history?since=${since}&until=${until}`,
    );
    assert.equal(status, 200);
    assert.deepEqual([body.from, body.to], [since, until]);
    // Samples every 10 s, both ends included.
    assert.equal(body.points.length, 7);
    assert.ok(
      body.points.every((p) => p.at >= since && p.at <= until),
      'every point between since and until',
    );
  });

  const badHistory: Array<[string, RegExp]> = [
    ['since=yesterday', /^since: "yesterday" is neither an ISO time nor a duration such as 6h$/],
    ['since=12:00', /^since: /],
    ['until=soon', /^until: /],
    ['since=1h&until=2h', /^since must not be after until$/],
    ['maxPoints=0', /^maxPoints: "0" must be a whole number from 1 to 5000$/],
    ['maxPoints=5001', /^maxPoints: /],
    ['maxPoints=1.5', /^maxPoints: /],
    ['since=401d', /^since must not be more than 400 days before until$/],
    // Used to throw in toISOString: a 500 and an error log line per request.
    ['since=99999999999d', /^since: "99999999999d" is before 1970/],
  ];
  for (const [query, reason] of badHistory) {
    test(`GET …/history?${query}: 400 with the reason`, async (t) => {
      const node = await startApiNode(t);
      const { status, body } = await getJson<{ error: string }>(
        node.base,
        `/api/loops/room/history?${query}`,
      );
      assert.equal(status, 400);
      assert.match(body.error, reason);
    });
  }

  test('GET …/history of an unknown loop: 404', async (t) => {
    const node = await startApiNode(t);
    assert.equal((await getJson(node.base, '/api/loops/nope/history')).status, 404);
  });

  test('GET /api/events: oldest first; filtered by loop, kind, since; the newest `limit`', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(10 * 60_000);
    assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 })).status, 200);
    const events = async (query: string) => {
      const answer = await getJson<{ events: Api.EventView[] }>(node.base, `/api/events${query}`);
      assert.equal(answer.status, 200, query);
      return answer.body.events;
    };
    const all = await events('');
    const times = all.map((e) => e.at);
    assert.deepEqual(times, [...times].sort(), 'oldest first');
    assert.deepEqual(
      (await events('?kind=loop-added')).map((e) => e.loop),
      DEMO_LOOPS,
    );
    assert.deepEqual(
      (await events('?kind=loop-added&loop=fermenter')).map((e) => e.loop),
      ['fermenter'],
    );
    const room = await events('?loop=room');
    assert.ok(room.length > 1 && room.every((e) => e.loop === 'room'), 'only room events');
    const recent = await events('?since=5m');
    assert.ok(
      recent.every((e) => Date.parse(e.at) >= T0 + 5 * 60_000),
      'only events of the last 5 min',
    );
    assert.ok(
      recent.some((e) => e.kind === 'setpoint-changed' && e.source === 'http'),
      'the write of this test',
    );
    assert.ok(!recent.some((e) => e.kind === 'loop-added'), 'not the start events');
    assert.deepEqual(await events(`?since=${new Date(T0 + 5 * 60_000).toISOString()}`), recent);
    assert.deepEqual(await events('?limit=2'), all.slice(-2), 'the newest 2, oldest first');
    assert.deepEqual(await events('?kind=no-such-kind'), []);
  });

  for (const query of ['since=yesterday', 'limit=0', 'limit=1001', 'limit=x']) {
    test(`GET /api/events?${query}: 400`, async (t) => {
      const node = await startApiNode(t);
      assert.equal((await getJson(node.base, `/api/events?${query}`)).status, 400);
    });
  }

  test('GET /: the dashboard page (HTML, its content security policy); /assets/app.js its script; an unknown asset 404', async (t) => {
    const node = await startApiNode(t);
    const page = await fetch(`${node.base}/`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.match(await page.text(), /<html/i);
    const script = await fetch(`${node.base}/assets/app.js`);
    assert.equal(script.status, 200);
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.match(await script.text(), /\S/);
    assert.equal((await fetch(`${node.base}/assets/nope.js`)).status, 404);
  });

  test('GET /api/openapi.json: an OpenAPI 3.1 document listing the loop routes', async (t) => {
    const node = await startApiNode(t);
    const { status, body } = await getJson<{ openapi: string; paths: Record<string, object> }>(
      node.base,
      '/api/openapi.json',
    );
    assert.equal(status, 200);
    assert.match(body.openapi, /^3\.1\./);
    for (const path of ['/api/loops', '/api/loops/{loop}', '/api/loops/{loop}/history', '/api/stream']) {
      assert.ok(Object.hasOwn(body.paths, path), path);
    }
  });

  test('an unknown path: 404 {error}; a known path with another method: 405 with Allow', async (t) => {
    const node = await startApiNode(t);
    const missing = await getJson<{ error: string }>(node.base, '/api/nope');
    assert.deepEqual([missing.status, missing.body], [404, { error: 'not found' }]);
    const wrong = await getJson(node.base, '/api/loops', { method: 'DELETE' });
    assert.equal(wrong.status, 405);
    assert.match(wrong.headers.get('allow') ?? '', /GET/);
  });
});
