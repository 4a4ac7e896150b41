/**
 * GET /metrics on a real node (demo config, ManualClock): the Prometheus text a scraper reads,
 * parsed with parse-prometheus-text-format (its quirks: see test/http/metrics.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ApiTestNode, parsePrometheus, postJson, promSamples, startApiNode } from './support.js';

async function scrape(node: ApiTestNode) {
  const res = await fetch(`${node.base}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

const value = (samples: Array<{ value?: string }>) => samples.map((s) => Number(s.value));

describe('given a node serving the API', () => {
  test('GET /metrics: homeostat_loop_setpoint of each loop with its unit, the node info, process metrics', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const families = await scrape(node);
    const setpoints = promSamples(families, 'homeostat_loop_setpoint');
    assert.deepEqual(setpoints.map((s) => [s.labels?.loop, s.labels?.unit, Number(s.value)]).sort(), [
      ['fermenter', '°C', 18],
      ['greenhouse_humidity', '%', 65],
      ['room', '°C', 20],
    ]);
    assert.deepEqual(value(promSamples(families, 'homeostat_node_info', { node: 'demo' })), [1]);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ]) {
      assert.equal(promSamples(families, name).length, 1, name);
    }
  });

  test('after an accepted and a refused write over HTTP: commands_total{source="http"} counts each result; the setpoint gauge follows the cycle', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 22 })).status, 200);
    assert.equal((await postJson(node.base, '/api/loops/room', { setpoint: 99 })).status, 422);
    await node.clock.advance(0);
    const families = await scrape(node);
    const commands = (result: string) =>
      value(promSamples(families, 'homeostat_commands_total', { source: 'http', loop: 'room', result }));
    assert.deepEqual(commands('accepted'), [1]);
    assert.deepEqual(commands('rejected'), [1]);
    assert.deepEqual(value(promSamples(families, 'homeostat_loop_setpoint', { loop: 'room' })), [22]);
  });
});
