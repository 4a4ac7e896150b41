/**
 * An MQTT window contact as an interlock, end to end: a real Mosquitto on a free port, the node
 * as `homeostat run` builds it on the real clock, and a script playing a Zigbee2MQTT Aqara
 * MCCGQ11LM exactly as Zigbee2MQTT publishes it: its state on `zigbee2mqtt/living_window`
 * (`contact` true = closed, false = open; zigbee2mqtt.io devices/MCCGQ11LM.html) and its
 * availability, retained, on `zigbee2mqtt/living_window/availability` (`{"state":"online"}`;
 * guide/configuration/device-availability). The room is simulated and cold, so the heater is
 * wanted on whenever the loop may regulate.
 *
 * Closed → regulating; open → paused (heater safe, Interlocked True, "reads 1"); garbage and
 * the device offline → paused, saying why (the sampler passes on the reading's liveness and
 * whyNotANumber). Waits are for signals (statuses), never fixed sleeps.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import mqtt from 'mqtt';
import type { LoopStatus } from '../../src/core/status.js';
import { startDeviceNode } from './device-node.js';
import { waitUntil } from './helpers.js';
import { type Broker, brokerFor } from './mosquitto.js';

const DEVICE = 'zigbee2mqtt/living_window';
const AVAILABILITY = `${DEVICE}/availability`;
const VIA = `availability ${AVAILABILITY}`;
const BRIDGE = 'zigbee2mqtt/bridge/state';

/** The Aqara contact as Zigbee2MQTT publishes it (state not retained, availability retained). */
async function aqaraContact(t: TestContext, broker: Broker) {
  const client = await mqtt.connectAsync(broker.url, {
    clientId: `aqara-${process.pid}`,
    reconnectPeriod: 0,
  });
  t.after(() => client.endAsync(true));
  const state = (contact: unknown) =>
    client.publishAsync(DEVICE, JSON.stringify({ battery: 97, contact, linkquality: 72, voltage: 2995 }), {
      qos: 1,
    });
  return {
    closed: () => state(true),
    opened: () => state(false),
    garbage: () => client.publishAsync(DEVICE, '{"contact":"banana","linkquality":72}', { qos: 1 }),
    availability: (word: 'online' | 'offline') =>
      client.publishAsync(AVAILABILITY, JSON.stringify({ state: word }), { qos: 1, retain: true }),
    /** Zigbee2MQTT's own state, retained; `offline` is its last will (guide/usage/mqtt_topics_and_messages). */
    bridge: (word: 'online' | 'offline') =>
      client.publishAsync(BRIDGE, JSON.stringify({ state: word }), { qos: 1, retain: true }),
  };
}

async function startNode(t: TestContext, broker: Broker) {
  const text = `
version: 1
node: { id: it }
mqtt: { url: "${broker.url}" }
simulation: { plants: { room: { ambient: 12, timeConstantS: 3600 } } }
sensors:
  room_temp: { kind: simulated, plant: room, periodS: 0.1 }
  window: { kind: mqtt_binary, preset: zigbee2mqtt, device: ${DEVICE}, periodS: 0.5 }
actuators:
  heater: { kind: simulated_relay, plant: room, gain: 20, minOnS: 0, minOffS: 0 }
loops:
  room:
    sensor: room_temp
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    interlocks: [{ sensor: window }]
    controller: { type: hysteresis }
`;
  const started = await startDeviceNode(t, text, 'homeostat-mqtt-contact-');
  const room = (): LoopStatus | undefined => started.loop('room');
  const interlocked = () => room()?.conditions.find((c) => c.type === 'Interlocked');
  /** Waits until the loop is paused with a message matching `message`, the heater wanted and seen off. */
  const paused = (message: RegExp, what: string) =>
    waitUntil(
      () => {
        const status = room();
        const heater = status?.actuators.heater;
        return (
          interlocked()?.status === 'True' &&
          message.test(interlocked()?.message ?? '') &&
          heater?.wanted === 0 &&
          heater.observed === 0
        );
      },
      { what: `${what} (last Interlocked: ${JSON.stringify(interlocked())})`, timeoutMs: 10_000 },
    );
  const regulating = (what: string) =>
    waitUntil(() => interlocked()?.status === 'False' && room()?.actuators.heater?.observed === 1, {
      what: `${what} (last Interlocked: ${JSON.stringify(interlocked())})`,
      timeoutMs: 10_000,
    });
  return { room, interlocked, paused, regulating };
}

describe('a Zigbee2MQTT window contact as an interlock, on a real broker', () => {
  test('closed → the loop heats; open → paused, heater safe; garbage, offline (device or Zigbee2MQTT) and back online without a new state → paused, saying why', async (t) => {
    const broker = await brokerFor(t);
    const contact = await aqaraContact(t, broker);
    await contact.availability('online');
    const node = await startNode(t, broker);

    // Before the contact said anything: no reading, the loop must not heat.
    await node.paused(
      /^paused, actuators safe: interlock window: no reading yet$/,
      'paused before any state',
    );

    await contact.closed();
    await node.regulating('heating with the window closed');
    assert.equal(node.room()?.action, 'heating');

    await contact.opened();
    await node.paused(/^paused, actuators safe: interlock window reads 1$/, 'paused with the window open');
    assert.equal(node.room()?.action, 'idle');
    assert.equal(node.interlocked()?.reason, 'Tripped');

    await contact.closed();
    await node.regulating('heating again once closed');

    await contact.garbage();
    const garbageSaid =
      /interlock window: zigbee2mqtt\/living_window: field contact is "banana", neither on \(false\) nor off \(true\)$/;
    await node.paused(garbageSaid, 'paused on garbage, saying so');

    await contact.closed();
    await node.regulating('heating again after a good state');

    await contact.availability('offline');
    const offlineSaid = new RegExp(
      `interlock window: device offline for \\d+ s \\(${VIA.replaceAll('/', '\\/')}\\)$`,
    );
    await node.paused(offlineSaid, 'paused with the device offline, saying so');

    // Online again: the state from before the outage (closed) vouches for nothing, since the
    // window may have opened meanwhile. Still paused, saying why, until a new state comes.
    await contact.availability('online');
    const backSaid = new RegExp(
      `interlock window: device back online; no state since it went offline \\(${VIA.replaceAll('/', '\\/')}\\)$`,
    );
    await node.paused(backSaid, 'still paused once the device is back online, saying why');

    await contact.closed();
    await node.regulating('heating again once a new state says closed');

    // Zigbee2MQTT dies: the broker publishes its last will on the bridge state, while the
    // device's availability stays retained online. Paused, naming the bridge.
    await contact.bridge('offline');
    const bridgeSaid = new RegExp(
      `interlock window: device offline for \\d+ s \\(${VIA.replaceAll('/', '\\/')}, bridge ${BRIDGE.replaceAll('/', '\\/')} offline\\)$`,
    );
    await node.paused(bridgeSaid, 'paused with Zigbee2MQTT offline, naming the bridge');
    await contact.bridge('online');
    await contact.closed();
    await node.regulating('heating again once Zigbee2MQTT is back and a new state says closed');
  });
});
