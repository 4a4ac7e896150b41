/**
 * GET /api/fleet on real nodes: two homeostat nodes on one private Mosquitto, the first serving
 * the API; the fleet view lists both nodes' loops from their retained states, drops what a
 * stranger publishes there, and follows availability. Plus the page's files, and the answer of
 * a node without a broker.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import mqtt from 'mqtt';
import { type FleetResponse, fleetResponse } from '../../src/http/fleet.js';
import { brokerFor } from '../integration/mosquitto.js';
import { minimalSimConfigText } from '../support/config.js';
import { startTestNode } from '../support/node.js';
import { tempDir } from '../support/tmp.js';
import { getJson, parseStrictly, startApiNode } from './support.js';

/** Until the lead adds the route and its wiring (see the helper's report); then remove it. */
const WIRING = {};

/** Two loops on the second node, its own setpoints: `room` at 24, `attic` at 12. */
const SECOND_EXTRA = `
  attic:
    sensor: t
    raise: heater2
    setpoint: 12
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.2 }
`;

function secondNodeText(): string {
  return minimalSimConfigText({ nodeId: 'pi-2' })
    .replace('setpoint: 20', 'setpoint: 24')
    .replace(
      'heater: { kind: simulated_relay, plant: p, gain: 20 }',
      'heater: { kind: simulated_relay, plant: p, gain: 20 }\n  heater2: { kind: simulated_relay, plant: p, gain: 20 }',
    )
    .concat(SECOND_EXTRA);
}

const setpoints = (fleet: FleetResponse) =>
  Object.fromEntries(
    fleet.nodes.map((n) => [n.node, Object.fromEntries(n.loops.map((l) => [l.loop, l.setpoint]))]),
  );

/** Polls GET /api/fleet until `ready` holds (the states travel through the broker: I/O, not time). */
async function fleetWhen(base: string, ready: (fleet: FleetResponse) => boolean, what: string) {
  let last: FleetResponse | undefined;
  const probe = async () => {
    const answer = await getJson<FleetResponse>(base, '/api/fleet');
    if (answer.status !== 200) return undefined;
    last = answer.body;
    return ready(answer.body) ? answer.body : undefined;
  };
  for (let tries = 0; tries < 400; tries++) {
    const fleet = await probe();
    if (fleet) return fleet;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}; last answer ${JSON.stringify(last)}`);
}

describe('given two nodes on one broker, the first serving the API', () => {
  test(
    'GET /api/fleet lists both nodes, this one first, each loop with its setpoint; strangers are dropped; a stopped node shows offline',
    WIRING,
    async (t) => {
      const broker = await brokerFor(t);
      const first = await startApiNode(t, {
        text: minimalSimConfigText({ nodeId: 'pi-1' }),
        mqtt: { url: broker.url },
      });
      const second = await startTestNode(
        secondNodeText(),
        path.join(tempDir(t, 'homeostat-fleet-'), 'state.db'),
        {
          mqtt: { url: broker.url },
        },
      );
      let secondStopped = false;
      t.after(() => (secondStopped ? undefined : second.stop()));

      // A stranger publishes junk where states live: retained, so it arrives whenever we subscribe.
      const stranger = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      t.after(() => stranger.endAsync(true));
      await stranger.publishAsync('homeostat/evil/room/state', '{"loop":"room","setpoint":"lots"}', {
        retain: true,
        qos: 1,
      });
      await stranger.publishAsync('homeostat/evil/big/state', 'x'.repeat(20_000), { retain: true, qos: 1 });
      await stranger.publishAsync('homeostat/EVIL/room/state', '{}', { retain: true, qos: 1 });

      await first.clock.advance(60_000);
      await second.clock.advance(60_000);
      const fleet = await fleetWhen(
        first.base,
        (f) => f.nodes.flatMap((n) => n.loops).length === 3 && f.dropped >= 3,
        "both nodes' loops and the stranger's three messages",
      );

      parseStrictly(fleetResponse, fleet, 'GET /api/fleet');
      assert.deepEqual(setpoints(fleet), { 'pi-1': { room: 20 }, 'pi-2': { attic: 12, room: 24 } });
      assert.deepEqual(
        fleet.nodes.map(({ node, self, online }) => ({ node, self, online })),
        [
          { node: 'pi-1', self: true, online: true },
          { node: 'pi-2', self: false, online: true },
        ],
      );
      const own = fleet.nodes[0]!.loops[0]!;
      assert.deepEqual(
        { name: own.name, unit: own.unit, mode: own.mode, faulted: own.faulted },
        { name: 'room', unit: '°C', mode: 'heat', faulted: false },
        "this node's loops take name and unit from its config",
      );
      const other = fleet.nodes[1]!.loops.find((l) => l.loop === 'room')!;
      assert.equal(other.unit, null, 'the state payload carries no unit: unknown for other nodes');
      assert.equal(typeof other.measured, 'number');
      assert.deepEqual(fleet.droppedBy, { tooLarge: 1, invalid: 1, badTopic: 1, full: 0 });

      // When the second node stops, its goodbye (retained offline) reaches the fleet view; its
      // last states stay (retained) and show as they were.
      secondStopped = true;
      await second.stop();
      const after = await fleetWhen(first.base, (f) => f.nodes[1]?.online === false, 'pi-2 offline');
      assert.deepEqual(setpoints(after)['pi-2'], { attic: 12, room: 24 });
    },
  );
});

describe('given a node without a broker', () => {
  test('GET /api/fleet answers 404 with the reason', WIRING, async (t) => {
    const node = await startApiNode(t, { text: minimalSimConfigText() });
    const answer = await getJson<{ error: string }>(node.base, '/api/fleet');
    assert.equal(answer.status, 404);
    assert.match(answer.body.error, /no MQTT broker/);
  });
});

describe('the fleet page', () => {
  test('GET /assets/fleet.html and /assets/fleet.js are served (the static folder)', async (t) => {
    const node = await startApiNode(t, { text: minimalSimConfigText() });
    for (const [file, type] of [
      ['fleet.html', /^text\/html/],
      ['fleet.js', /^text\/javascript/],
    ] as const) {
      const res = await fetch(`${node.base}/assets/${file}`);
      assert.equal(res.status, 200, file);
      assert.match(res.headers.get('content-type') ?? '', type);
      await res.arrayBuffer();
    }
  });

  test('GET /fleet is the page', WIRING, async (t) => {
    const node = await startApiNode(t, { text: minimalSimConfigText() });
    const res = await fetch(`${node.base}/fleet`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<title>fleet/);
  });
});
