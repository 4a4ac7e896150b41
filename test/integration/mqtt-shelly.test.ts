/**
 * A heater on a Shelly Plus 1PM (Gen2), end to end: a real Mosquitto on a free port, the node as
 * `homeostat run` builds it on the real clock, and a script playing the Shelly as its firmware
 * talks MQTT:
 * - RPC requests on `<id>/rpc`, answered on `<src>/rpc` with `{"id","src","dst","result"}`
 *   (shelly-api-docs.shelly.cloud gen2/General/RPCProtocol, gen2/General/RPCChannels);
 *   `Switch.Set` with `id`, `on` and the optional `toggle_after` (the flip-back timer), whose
 *   result is `{"was_on": …}` (gen2/ComponentsAndServices/Switch);
 * - the whole Switch status on `<id>/status/switch:0` with "Generic status update over MQTT"
 *   (`status_ntf`) on (gen2/ComponentsAndServices/Mqtt): `output`, `apower`, `voltage`, …,
 *   `timer_started_at`/`timer_duration` while a flip-back timer runs. Published when the status
 *   changes, not periodically (non-PM Gen2 relays send nothing while nothing changes:
 *   bieniu/ha-shellies-discovery-gen2#69), so the script publishes only on a change of output
 *   or a (re)started timer;
 * - `true`/`false` retained on `<id>/online` (its will is `false`).
 * A device that is offline receives nothing: the script drops RPCs while it says `false`.
 *
 * The loop's first retry is a minute after a send (retryInitialS 60), so the OFF that reaches
 * the Shelly within seconds of its return was sent because it came back (retryDueOnReturn).
 *
 * The room is simulated and cold (12 °C; the Shelly does not warm it), so setpoint 20 wants the
 * heater on and setpoint 5 wants it off. Waits are for signals (statuses, messages), never
 * fixed sleeps.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import mqtt from 'mqtt';
import type { LoopStatus } from '../../src/core/status.js';
import { startDeviceNode } from './device-node.js';
import { waitUntil } from './helpers.js';
import { type Broker, brokerFor } from './mosquitto.js';

const SHELLY = 'shellyplus1pm-a8032ab12345';
const RPC = `${SHELLY}/rpc`;
const STATUS = `${SHELLY}/status/switch:0`;
const ONLINE = `${SHELLY}/online`;
const BASE = 'homeostat/it';

interface SwitchSetFrame {
  id: string;
  src: string;
  method: string;
  params: { id: number; on: boolean; toggle_after?: number };
}

/** A Plus 1PM's `status/switch:0` (Switch.GetStatus' fields), drawing 1180 W while on. */
function plus1pmStatus(output: boolean, timer?: { startedAtS: number; durationS: number }): string {
  return JSON.stringify({
    id: 0,
    source: 'MQTT',
    output,
    apower: output ? 1180.2 : 0,
    voltage: 231.4,
    current: output ? 5.12 : 0,
    aenergy: { total: 5123.456, by_minute: [0, 0, 0], minute_ts: Math.floor(Date.now() / 1000) },
    temperature: { tC: 41.2, tF: 106.2 },
    ...(timer ? { timer_started_at: timer.startedAtS, timer_duration: timer.durationS } : {}),
  });
}

/** A Switch.Set frame as homeostat sends it. */
function switchSet(params: SwitchSetFrame['params']): SwitchSetFrame {
  return {
    id: `switch:0:${params.on ? 'on' : 'off'}`,
    src: `homeostat-rpc/${SHELLY}`,
    method: 'Switch.Set',
    params,
  };
}

/** The Shelly Plus 1PM: answers Switch.Set, publishes its status on change, says online/offline. */
async function shellyPlus1pm(t: TestContext, broker: Broker) {
  const client = await mqtt.connectAsync(broker.url, {
    clientId: SHELLY,
    reconnectPeriod: 0,
    will: { topic: ONLINE, payload: Buffer.from('false'), qos: 1, retain: true },
  });
  t.after(() => client.endAsync(true));
  let output = false;
  let online = false;
  let timer: { startedAtS: number; durationS: number } | undefined;
  /** Every Switch.Set the device acted on, in order. */
  const received: SwitchSetFrame[] = [];
  /** Switch.Set frames that reached the broker while the device was away. */
  let dropped = 0;

  const publishStatus = () => client.publishAsync(STATUS, plus1pmStatus(output, timer), { qos: 1 });

  const onRpc = (payload: Buffer) => {
    if (!online) {
      dropped += 1;
      return;
    }
    const frame = JSON.parse(payload.toString()) as SwitchSetFrame;
    if (frame.method !== 'Switch.Set' || frame.params.id !== 0) return;
    received.push(frame);
    const wasOn = output;
    output = frame.params.on;
    const toggleAfterS = frame.params.toggle_after;
    timer =
      toggleAfterS === undefined ? undefined : { startedAtS: Date.now() / 1000, durationS: toggleAfterS };
    void client.publishAsync(
      `${frame.src}/rpc`,
      JSON.stringify({ id: frame.id, src: SHELLY, dst: frame.src, result: { was_on: wasOn } }),
      { qos: 1 },
    );
    if (wasOn !== output || timer !== undefined) void publishStatus();
  };
  client.on('message', (topic, payload) => {
    if (topic === RPC) onRpc(payload);
  });
  await client.subscribeAsync(RPC, { qos: 1 });

  return {
    received,
    dropped: () => dropped,
    isOn: () => output,
    /** `<id>/online` retained, as the device (true) or the broker for its will (false) publishes it. */
    setOnline: async (value: boolean) => {
      online = value;
      await client.publishAsync(ONLINE, String(value), { qos: 1, retain: true });
    },
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
actuators:
  heater: { kind: mqtt_switch, preset: shelly, device: ${SHELLY}, minOnS: 0, minOffS: 0 }
loops:
  room:
    sensor: room_temp
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis }
    # A backoff retry would come a minute after a send: a command that arrives within the
    # waits below (10 s) after the device is back was sent because it came back.
    retryInitialS: 60
`;
  const started = await startDeviceNode(t, text, 'homeostat-mqtt-shelly-');
  const room = (): LoopStatus | undefined => started.loop('room');
  const confirmed = () => room()?.conditions.find((c) => c.type === 'ActuatorConfirmed');
  const describeLast = () =>
    `last heater: ${JSON.stringify(room()?.actuators.heater)}, ActuatorConfirmed: ${JSON.stringify(confirmed())}`;
  /** Waits until `probe` holds; a timeout says what the loop looked like then. */
  const waitFor = (probe: () => boolean, what: string) =>
    waitUntil(probe, { what, timeoutMs: 10_000 }).catch((error: Error) => {
      throw new Error(`${error.message} (then: ${describeLast()})`);
    });
  /** Waits until the heater is wanted and seen at `level`, and ActuatorConfirmed is True. */
  const heaterAt = (level: 0 | 1, what: string) =>
    waitFor(() => {
      const heater = room()?.actuators.heater;
      return heater?.wanted === level && heater.observed === level && confirmed()?.status === 'True';
    }, what);
  /** Waits until ActuatorConfirmed is False for `reason` with a message matching `message`. */
  const notConfirmed = (reason: string, message: RegExp, what: string) =>
    waitFor(() => {
      const condition = confirmed();
      return condition?.status === 'False' && condition.reason === reason && message.test(condition.message);
    }, what);
  return { room, heaterAt, waitFor, notConfirmed };
}

/** A watcher of homeostat's side of the broker: the loop state JSON and the discovery message. */
async function homeAssistantSide(t: TestContext, broker: Broker) {
  const client = await mqtt.connectAsync(broker.url, { clientId: `ha-${process.pid}`, reconnectPeriod: 0 });
  t.after(() => client.endAsync(true));
  const latest = new Map<string, unknown>();
  client.on('message', (topic, payload) => {
    if (payload.length > 0) latest.set(topic, JSON.parse(payload.toString()));
  });
  await client.subscribeAsync([`${BASE}/room/state`, 'homeassistant/device/it/config'], { qos: 1 });
  return {
    state: () => latest.get(`${BASE}/room/state`) as { conditions: LoopStatus['conditions'] } | undefined,
    discovery: () =>
      latest.get('homeassistant/device/it/config') as { cmps: Record<string, unknown> } | undefined,
    setpoint: (value: number) => client.publishAsync(`${BASE}/room/setpoint/set`, String(value), { qos: 1 }),
  };
}

describe('a heater on a Shelly Plus 1PM, on a real broker', () => {
  test('on with toggle_after, off, offline → DeviceOffline (in the status and on MQTT), back → the OFF at once', async (t) => {
    const broker = await brokerFor(t);
    const shelly = await shellyPlus1pm(t, broker);
    await shelly.setOnline(true);
    const ha = await homeAssistantSide(t, broker);
    const node = await startNode(t, broker);

    // Cold room: the loop switches the Shelly on, with its dead man's switch (deadManS 600 by default).
    await node.heaterAt(1, 'heater on and confirmed');
    assert.equal(shelly.isOn(), true);
    assert.deepEqual(shelly.received[0], switchSet({ id: 0, on: true, toggle_after: 600 }));

    // Setpoint below the room: off, and an OFF never carries a flip-back timer.
    await ha.setpoint(5);
    await node.heaterAt(0, 'heater off and confirmed');
    assert.equal(shelly.isOn(), false);
    assert.deepEqual(shelly.received.at(-1), switchSet({ id: 0, on: false }));

    // On again, then the Shelly drops off the network while heating: its state no longer counts.
    await ha.setpoint(20);
    await node.heaterAt(1, 'heater on again');
    await shelly.setOnline(false);
    const offlineOn = /^heater: device offline since \d\d:\d\d UTC \(shellyplus1pm-a8032ab12345\/online\)$/;
    await node.notConfirmed('DeviceOffline', offlineOn, 'DeviceOffline while heating');
    assert.equal(node.room()?.actuators.heater?.observed, null);

    // Wanted off while it is away: the heater cannot be confirmed off, and the status says so,
    // as does the loop state Home Assistant reads.
    await ha.setpoint(5);
    const notOff = /^heater is not confirmed off: device offline since \d\d:\d\d UTC$/;
    await node.notConfirmed('DeviceOffline', notOff, 'not confirmed off while offline');
    await node.waitFor(() => {
      const published = ha.state()?.conditions.find((c) => c.type === 'ActuatorConfirmed');
      return published?.reason === 'DeviceOffline' && notOff.test(published.message);
    }, 'the state topic Home Assistant reads carrying DeviceOffline');
    assert.ok(ha.discovery()?.cmps.homeostat_it_room_actuator, 'HA is told of the actuator problem entity');
    assert.equal(shelly.isOn(), true, 'the OFF sent while it was away never reached it');
    assert.ok(shelly.dropped() >= 1, 'an OFF was sent while it was away');

    // Back online: the unconfirmed OFF goes again at once, the relay switches off and says so.
    await shelly.setOnline(true);
    await node.heaterAt(0, 'heater off and confirmed once the Shelly is back');
    assert.equal(shelly.isOn(), false);
    assert.deepEqual(shelly.received.at(-1)?.params, { id: 0, on: false });
  });
});
