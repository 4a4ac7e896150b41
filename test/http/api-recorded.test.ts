/** A loop's recorded sensors (loops.<id>.record) through the HTTP API and /metrics, on a real node. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HistoryResponse } from '../../src/operations/recorded-schemas.js';
import { demoConfigText } from '../support/config.js';
import { getJson, startApiNode } from './support.js';

/** The demo with the fermenter recording the room's probe (another loop's sensor). */
const TEXT = demoConfigText((doc) => {
  doc.setIn(['loops', 'fermenter', 'record'], [{ sensor: 'room_temp', label: 'room', unit: '°C' }]);
});

test('given the fermenter recording room_temp, then its history has the series and /metrics a gauge', async (t) => {
  const node = await startApiNode(t, { text: TEXT });
  await node.clock.advance(5 * 60_000);
  const { status, body } = await getJson<HistoryResponse>(
    node.base,
    '/api/loops/fermenter/history?since=10m',
  );
  assert.equal(status, 200);
  const series = body.recorded?.[0];
  assert.equal(series?.sensor, 'room_temp');
  assert.equal(series?.label, 'room');
  assert.ok(series!.points.length >= 25, `${series!.points.length} points`);
  assert.ok(series!.points.every((p) => typeof p.value === 'number'));
  const room = await getJson<HistoryResponse>(node.base, '/api/loops/room/history?since=10m');
  assert.deepEqual(room.body.recorded, []);
  const metrics = await (await fetch(`${node.base}/metrics`)).text();
  assert.match(
    metrics,
    /^homeostat_recorded_value\{loop="fermenter",sensor="room_temp",unit="°C"\} \d+(\.\d+)?$/m,
  );
});
