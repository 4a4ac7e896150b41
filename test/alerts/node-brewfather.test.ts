/**
 * A loop's Brewfather stream on the node as `homeostat run` builds it (a real SQLite file, the
 * simulated plant, a manual clock), posting to a loopback server that answers as Brewfather's
 * log does: the loop's temperature and a recorded sensor's value as gravity, a minute after
 * the start, and in /metrics-facing figures as `brewfather/<loop>`.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { nextTurn } from '../support/assert.js';
import { minimalSimConfigText } from '../support/config.js';
import { startTestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { startFakeService } from './fake-services.js';

test('given a fermenter with a stream, its reading and recorded gravity reach Brewfather', {
  timeout: 30_000,
}, async (t) => {
  const server = await startFakeService('{"result":"success"}');
  t.after(() => server.close());
  const dir = tempDir(t);
  const idFile = path.join(dir, 'brewfather.id');
  writeFileSync(idFile, `${server.url}/stream?id=Ab12\n`);
  const text = minimalSimConfigText({
    loopExtra: `    record: [spindel]\n    brewfather: { streamIdFile: ${idFile}, name: FV1, gravity: spindel, beer: Lager }`,
  }).replace('sensors:\n', 'sensors:\n  spindel: { kind: simulated, plant: p }\n');
  const node = await startTestNode(text, path.join(dir, 'h.db'));
  t.after(() => node.stop());
  await node.clock.advance(60_000);
  await server.received(1);
  const body = JSON.parse(server.requests[0]?.body ?? '{}') as Record<string, unknown>;
  assert.equal(server.requests[0]?.url, '/stream?id=Ab12');
  assert.equal(body.name, 'FV1');
  assert.equal(body.temp_unit, 'C');
  assert.equal(body.beer, 'Lager');
  assert.equal(body.gravity_unit, 'G');
  assert.equal(typeof body.temp, 'number');
  assert.equal(typeof body.gravity, 'number');
  assert.match(String(body.comment), /^setpoint 20 °C, /);
  // The answer is counted once it arrived (real IO): each turn gives it a chance.
  const figures = () => node.node.alerts.figures().find((f) => f.channel === 'brewfather/room');
  while (figures()?.sent === 0) await nextTurn();
  assert.deepEqual(figures(), { channel: 'brewfather/room', sent: 1, failed: 0, dropped: 0, undelivered: 0 });
});
