/**
 * The HTTP API's writes on a real node (demo config, SQLite file, ManualClock): the MQTT set
 * command's rules (strict, never clamped), stored before the answer, source `http`; a refused
 * write changes nothing; the change budget is shared with MQTT.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NOTHING_LATCHED_REASON } from '../../src/control/commands.js';
import type { CommandResult, EventView, LoopView } from '../../src/operations/schemas.js';
import { type ApiTestNode, getJson, postJson, rawRequest, startApiNode } from './support.js';

const ROOM = '/api/loops/room';

/** What a refused write must leave as it was: the stored desired row and the event log. */
async function snapshot(node: ApiTestNode) {
  const events = await getJson<{ events: EventView[] }>(node.base, '/api/events?limit=1000');
  const kinds = events.body.events.filter((e) => e.kind !== 'command-rejected' && e.kind !== 'actuator');
  return { desired: node.store.desired.desired('room'), events: kinds };
}

describe('given a node serving the API on loopback', () => {
  test('POST {"setpoint": 22}: 200 with the new generation, stored, setpoint-changed from http, applied by the cycle it triggers', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const before = node.store.desired.desired('room')!;
    const { status, body } = await postJson<CommandResult>(node.base, ROOM, { setpoint: 22 });
    assert.equal(status, 200);
    assert.deepEqual(body, { loop: 'room', accepted: true, generation: before.generation + 1 });
    const stored = node.store.desired.desired('room')!;
    assert.deepEqual(
      [stored.setpoint, stored.setpointSource, stored.generation, stored.mode, stored.modeSource],
      [22, 'http', body.generation, 'heat', 'file'],
    );
    const changed = await getJson<{ events: EventView[] }>(node.base, '/api/events?kind=setpoint-changed');
    assert.deepEqual(
      changed.body.events.map((e) => [e.loop, e.source, e.data]),
      [['room', 'http', { from: 20, to: 22, generation: body.generation }]],
    );
    const shown = await getJson<LoopView>(node.base, ROOM);
    assert.deepEqual([shown.body.setpoint, shown.body.desired.setpointSource], [22, 'http']);
    await node.clock.advance(0);
    const applied = node.daemon.statuses().find((s) => s.loop === 'room')!;
    assert.deepEqual([applied.setpoint, applied.observedGeneration], [22, body.generation]);
  });

  test('POST {"mode": "off", "requestId": "r-1"}: accepted, the requestId echoed, mode from http', async (t) => {
    const node = await startApiNode(t);
    const { status, body } = await postJson<CommandResult>(node.base, ROOM, {
      mode: 'off',
      requestId: 'r-1',
    });
    assert.equal(status, 200);
    assert.deepEqual([body.accepted, body.requestId], [true, 'r-1']);
    const stored = node.store.desired.desired('room')!;
    assert.deepEqual([stored.mode, stored.modeSource], ['off', 'http']);
  });

  test('POST the setpoint already desired: 200, same generation, no event', async (t) => {
    const node = await startApiNode(t);
    const before = await snapshot(node);
    const { status, body } = await postJson<CommandResult>(node.base, ROOM, { setpoint: 20 });
    assert.deepEqual([status, body.accepted, body.generation], [200, true, before.desired!.generation]);
    assert.deepEqual(await snapshot(node), before);
  });

  test('POST the limits themselves (inclusive): both accepted', async (t) => {
    const node = await startApiNode(t);
    assert.equal((await postJson(node.base, ROOM, { setpoint: 30 })).status, 200);
    assert.equal((await postJson(node.base, ROOM, { setpoint: 5 })).status, 200);
    assert.equal(node.store.desired.desired('room')?.setpoint, 5);
  });

  const refused: Array<[string, string, RegExp]> = [
    [
      'above the limits (never clamped to 30)',
      '{"setpoint": 30.5}',
      /^setpoint 30\.5 is outside the limits 5\.\.30$/,
    ],
    [
      'below the limits (never clamped to 5)',
      '{"setpoint": -40}',
      /^setpoint -40 is outside the limits 5\.\.30$/,
    ],
    ['not JSON', '{"setpoint": 22', /^payload is not JSON/],
    ['an unknown key', '{"setpoint": 22, "target": 23}', /^invalid command: .*target/],
    ['a setpoint as a string', '{"setpoint": "22"}', /^invalid command: setpoint: /],
    ['a duplicate key', '{"setpoint": 22, "setpoint": 6}', /^duplicate key "setpoint"/],
    ['nothing to change', '{}', /^command needs a setpoint, a mode or both, or a preset$/],
    [
      'a mode the loop does not allow',
      '{"mode": "cool"}',
      /^mode "cool" is not allowed for this loop \(allowed: off, heat\)$/,
    ],
    ['an array', '[22]', /^invalid command: /],
  ];
  for (const [what, body, reason] of refused) {
    test(`POST ${what} (${body}): 422 with the parser's reason; nothing stored, no setpoint event`, async (t) => {
      const node = await startApiNode(t);
      const before = await snapshot(node);
      const answer = await postJson<CommandResult>(node.base, ROOM, body);
      assert.equal(answer.status, 422);
      assert.equal(answer.body.accepted, false);
      assert.equal(answer.body.loop, 'room');
      assert.match(answer.body.reason ?? '', reason);
      assert.equal(answer.body.generation, before.desired!.generation);
      assert.deepEqual(await snapshot(node), before);
    });
  }

  test('POST a setpoint without Content-Type application/json: 415, nothing stored', async (t) => {
    const node = await startApiNode(t);
    const before = await snapshot(node);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const answer = await getJson<{ error: string }>(node.base, ROOM, {
        method: 'POST',
        headers: { 'Content-Type': type },
        body: '{"setpoint": 22}',
      });
      assert.equal(answer.status, 415, type);
      assert.match(answer.body.error, /Content-Type: application\/json/);
    }
    assert.deepEqual(await snapshot(node), before);
    const charset = { 'Content-Type': 'application/json; charset=utf-8' };
    assert.equal((await postJson(node.base, ROOM, { setpoint: 22 }, charset)).status, 200, 'with a charset');
  });

  test('on loopback no token is asked, but a cross-site write is refused 403 and a rebinding Host 403; nothing stored', async (t) => {
    const node = await startApiNode(t);
    const before = await snapshot(node);
    const crossSite: Array<Record<string, string>> = [
      { Origin: 'http://evil.example' },
      { 'Sec-Fetch-Site': 'cross-site' },
    ];
    for (const headers of crossSite) {
      const answer = await postJson<{ error: string }>(node.base, ROOM, { setpoint: 22 }, headers);
      assert.equal(answer.status, 403, JSON.stringify(headers));
      assert.match(answer.body.error, /^cross-site request refused/);
    }
    const port = new URL(node.base).port;
    const rebound = await rawRequest(`${node.base}${ROOM}`, {
      method: 'POST',
      headers: { Host: `evil.example:${port}`, 'Content-Type': 'application/json' },
      body: '{"setpoint": 22}',
    });
    assert.equal(rebound.status, 403);
    const read = await rawRequest(`${node.base}/api/loops`, { headers: { Host: `evil.example:${port}` } });
    assert.equal(read.status, 403, 'reads too: the page of another site must not read the API');
    assert.deepEqual(await snapshot(node), before);
  });

  test('POST a body over 4 KiB: 413, nothing stored', async (t) => {
    const node = await startApiNode(t);
    const before = await snapshot(node);
    const answer = await postJson(node.base, ROOM, `{"setpoint": 22, "requestId": "${'x'.repeat(5000)}"}`);
    assert.equal(answer.status, 413);
    assert.deepEqual(await snapshot(node), before);
  });

  test('POST to a loop the config does not have: 404, accepted false with the reason', async (t) => {
    const node = await startApiNode(t);
    for (const path of ['/api/loops/nope', '/api/loops/__proto__', '/api/loops/nope/fault-reset']) {
      const { status, body } = await postJson<CommandResult>(
        node.base,
        path,
        path.endsWith('reset') ? '' : { setpoint: 22 },
      );
      assert.equal(status, 404, path);
      assert.equal(body.accepted, false);
      assert.match(body.reason ?? '', /^unknown loop "/);
    }
  });

  test('POST fault-reset with nothing latched: 422 with the reason; with a body other than {}: 422', async (t) => {
    const node = await startApiNode(t);
    await node.clock.advance(60_000);
    const before = await snapshot(node);
    for (const body of ['', '{}']) {
      const answer = await postJson<CommandResult>(node.base, `${ROOM}/fault-reset`, body);
      assert.equal(answer.status, 422, `body ${JSON.stringify(body)}`);
      assert.deepEqual(
        { ...answer.body, generation: typeof answer.body.generation },
        { loop: 'room', accepted: false, reason: NOTHING_LATCHED_REASON, generation: 'number' },
      );
    }
    const bad = await postJson<CommandResult>(node.base, `${ROOM}/fault-reset`, { reset: true });
    // The body goes to the MQTT command parser as it is, which refuses it (and records the refusal).
    assert.deepEqual(
      [bad.status, bad.body.reason],
      [422, 'fault reset takes an empty payload or "reset" (got "{\\"reset\\":true}")'],
    );
    assert.deepEqual(await snapshot(node), before);
  });

  test('rate limit: the loop takes 10 changes at once from MQTT and HTTP together, then 429 with the reason; stopping is never limited; another loop has its own budget', async (t) => {
    const node = await startApiNode(t);
    // Six changes over the MQTT path: the budget is the loop's, whatever the source.
    for (let i = 0; i < 6; i++) {
      const answer = node.node.commands.submit({
        loop: 'room',
        kind: 'json',
        payload: Buffer.from(JSON.stringify({ setpoint: 21 + i })),
        source: 'mqtt',
        receivedAtMs: node.clock.nowMs(),
      });
      assert.equal(answer.outcome.accepted, true, `mqtt change ${i + 1}`);
    }
    for (let i = 0; i < 4; i++) {
      assert.equal(
        (await postJson(node.base, ROOM, { setpoint: 10 + i })).status,
        200,
        `http change ${i + 1}`,
      );
    }
    const before = await snapshot(node);
    const limited = await postJson<CommandResult>(node.base, ROOM, { setpoint: 25 });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.accepted, false);
    assert.match(
      limited.body.reason ?? '',
      /^too many changes: loop room accepts 10 at once and 30 per minute/,
    );
    assert.deepEqual(await snapshot(node), before, 'nothing stored');
    assert.equal((await postJson(node.base, '/api/loops/fermenter', { setpoint: 19 })).status, 200);
    assert.equal((await postJson(node.base, ROOM, { mode: 'off' })).status, 200, 'stopping');
    // 30 per minute: one more change after 2 s.
    await node.clock.advance(2_000);
    assert.equal((await postJson(node.base, ROOM, { setpoint: 25 })).status, 200);
    assert.equal((await postJson(node.base, ROOM, { setpoint: 26 })).status, 429);
  });
});
