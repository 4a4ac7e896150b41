/**
 * A heat mat on an ESPHome node's switch, end to end: a real Mosquitto on a free port, the node
 * as `homeostat run` builds it on the real clock, and a script playing the ESPHome firmware as
 * its `mqtt:` component talks (esphome.io/components/mqtt; esphome/esphome
 * components/mqtt/mqtt_switch.cpp, mqtt_client.cpp):
 * - `ON`/`OFF` on `<topic_prefix>/switch/<object_id>/command`; the new state published as
 *   `ON`/`OFF` on `<topic_prefix>/switch/<object_id>/state`, retained (the component's default);
 * - the birth message `online` and the will `offline` on `<topic_prefix>/status`, retained.
 * The node dropping off the network (its TCP connection cut, so the broker sends the will)
 * makes the heater unconfirmed (`DeviceOffline`) at once; the node coming back (birth, then
 * its retained state) confirms it again. Waits are for signals (statuses), never fixed sleeps.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import mqtt from 'mqtt';
import type { LoopStatus } from '../../src/core/status.js';
import { startDeviceNode } from './device-node.js';
import { waitUntil } from './helpers.js';
import { type Broker, brokerFor } from './mosquitto.js';

const PREFIX = 'brewshed';
const COMMAND = `${PREFIX}/switch/heat_mat/command`;
const STATE = `${PREFIX}/switch/heat_mat/state`;
const STATUS = `${PREFIX}/status`;

/** One run of the ESPHome node's MQTT client: birth, will, the switch's command and state. */
async function esphomeNode(broker: Broker, relay: { on: boolean }) {
  const client = await mqtt.connectAsync(broker.url, {
    clientId: `${PREFIX}-${process.pid}`,
    reconnectPeriod: 0,
    will: { topic: STATUS, payload: Buffer.from('offline'), qos: 1, retain: true },
  });
  const publishState = () => client.publishAsync(STATE, relay.on ? 'ON' : 'OFF', { qos: 0, retain: true });
  client.on('message', (topic, payload) => {
    if (topic !== COMMAND) return;
    const text = payload.toString();
    if (text === 'ON' || text === 'OFF') relay.on = text === 'ON';
    void publishState();
  });
  await client.subscribeAsync(COMMAND, { qos: 0 });
  await client.publishAsync(STATUS, 'online', { qos: 1, retain: true });
  await publishState();
  return {
    /** The Wi-Fi drops: the connection is cut without a DISCONNECT, so the broker sends the will. */
    dropOff: () => client.stream.destroy(),
    end: () => client.endAsync(true),
  };
}

async function startNode(t: TestContext, broker: Broker) {
  const text = `
version: 1
node: { id: it }
mqtt: { url: "${broker.url}" }
simulation: { plants: { shed: { ambient: 12, timeConstantS: 3600 } } }
sensors:
  shed_temp: { kind: simulated, plant: shed, periodS: 0.1 }
actuators:
  heat_mat: { kind: mqtt_switch, preset: esphome, device: ${PREFIX}, entity: heat_mat, minOnS: 0, minOffS: 0 }
loops:
  shed: { sensor: shed_temp, raise: heat_mat, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`;
  const started = await startDeviceNode(t, text, 'homeostat-mqtt-esphome-');
  const shed = (): LoopStatus | undefined => started.loop('shed');
  const confirmed = () => shed()?.conditions.find((c) => c.type === 'ActuatorConfirmed');
  const waitFor = (probe: () => boolean, what: string) =>
    waitUntil(probe, { what, timeoutMs: 10_000 }).catch((error: Error) => {
      throw new Error(
        `${error.message} (then: ${JSON.stringify(shed()?.actuators)}, ${JSON.stringify(confirmed())})`,
      );
    });
  return { shed, confirmed, waitFor };
}

describe('a heat mat on an ESPHome switch, on a real broker', () => {
  test('ON confirmed by the state topic; the node dropping off → DeviceOffline at once; back → confirmed again', async (t) => {
    const broker = await brokerFor(t);
    const relay = { on: false };
    const first = await esphomeNode(broker, relay);
    const node = await startNode(t, broker);

    // Given a cold shed, the loop switches the mat on and the node's state confirms it
    await node.waitFor(() => {
      const mat = node.shed()?.actuators.heat_mat;
      return relay.on && mat?.observed === 1 && node.confirmed()?.status === 'True';
    }, 'the heat mat on and confirmed');

    // When the node drops off the network, the broker's will says offline: not confirmed
    first.dropOff();
    await node.waitFor(() => {
      const condition = node.confirmed();
      return (
        condition?.reason === 'DeviceOffline' &&
        /^heat_mat: device offline since \d\d:\d\d UTC \(brewshed\/status\)$/.test(condition.message)
      );
    }, 'DeviceOffline from the will');
    assert.equal(node.shed()?.actuators.heat_mat?.observed, null, 'its last state no longer counts');

    // When it comes back (birth, then its state), the mat is confirmed again
    const second = await esphomeNode(broker, relay);
    t.after(() => second.end());
    await node.waitFor(
      () => node.shed()?.actuators.heat_mat?.observed === 1 && node.confirmed()?.status === 'True',
      'confirmed again once the node is back',
    );
    assert.equal(relay.on, true);
  });
});
