/**
 * MQTT drivers against a real Mosquitto (one per test, on a free port): an in-process node
 * (src/node.ts, as `homeostat run` builds it) on the real clock whose heater is a Tasmota plug
 * behind the broker, sharing the node's one MqttConnection. The plug is a separate MQTT.js client that answers
 * `cmnd/plug/POWER` with `stat/plug/POWER` at once, two seconds late, or never, and can be
 * switched by hand. The room's sensor is simulated (a cold room: the heater is always wanted),
 * or an MQTT topic another client publishes on.
 *
 * Timings are shortened through the config (retryInitialS, staleAfterS); assertions on time
 * are lower bounds only (a loaded machine makes things late, never early).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { safeCommand } from '../../src/commands/safe.js';
import type { LoopStatus } from '../../src/core/status.js';
import { RealClock } from '../../src/runtime/real-clock.js';
import { recordingLogger } from '../support/logger.js';
import { startTestNode } from '../support/node.js';
import { tempTree } from '../support/tmp.js';
import { CliProcess, makeTempDir, sleep, waitUntil } from './helpers.js';
import { type Broker, brokerFor, FAST_RECONNECT } from './mosquitto.js';

const COMMAND_TOPIC = 'cmnd/plug/POWER';
const STATE_TOPIC = 'stat/plug/POWER';
const SENSOR_TOPIC = 'sensors/room/temperature';

let clientNo = 0;
const clientId = (what: string) => `${what}-${process.pid}-${++clientNo}`;

/** A plain MQTT.js client for the test's own devices, ended after the test. */
async function deviceClient(t: TestContext, broker: Broker, what: string): Promise<MqttClient> {
  const client = await mqtt.connectAsync(broker.url, { clientId: clientId(what), reconnectPeriod: 0 });
  t.after(() => client.endAsync(true));
  return client;
}

type PlugBehaviour = 'confirms' | 'lags' | 'never answers';

/** How late a lagging plug answers, ms. */
const LAG_MS = 2_000;

/**
 * A Tasmota plug: answers every `ON`/`OFF` on cmnd/plug/POWER with the same on
 * stat/plug/POWER (not retained, as Tasmota does), at once, late, or never.
 */
async function fakeTasmotaPlug(t: TestContext, broker: Broker, behaviour: PlugBehaviour) {
  const client = await deviceClient(t, broker, 'fake-plug');
  const commands: { payload: string; atMs: number }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  t.after(() => {
    for (const timer of timers) clearTimeout(timer);
  });
  const report = (state: string) => client.publishAsync(STATE_TOPIC, state, { qos: 1, retain: false });
  client.on('message', (topic, payload) => {
    if (topic !== COMMAND_TOPIC) return;
    const state = payload.toString();
    commands.push({ payload: state, atMs: Date.now() });
    if (state !== 'ON' && state !== 'OFF') return;
    if (behaviour === 'confirms') void report(state);
    if (behaviour === 'lags') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        void report(state);
      }, LAG_MS);
      timers.add(timer);
    }
  });
  await client.subscribeAsync(COMMAND_TOPIC, { qos: 1 });
  return {
    commands,
    /** Someone pressed the plug's button: it reports its new state. */
    switchByHand: (state: 'ON' | 'OFF') => report(state),
  };
}

/** A thermometer publishing `value` on SENSOR_TOPIC every 100 ms until `stop()`. */
async function fakeThermometer(t: TestContext, broker: Broker, value: number) {
  const client = await deviceClient(t, broker, 'fake-thermometer');
  let lastAtMs = 0;
  const timer = setInterval(() => {
    lastAtMs = Date.now();
    void client.publishAsync(SENSOR_TOPIC, String(value), { qos: 0 }).catch(() => undefined);
  }, 100);
  t.after(() => clearInterval(timer));
  return {
    /** Stops publishing; returns when the last message was sent (wall clock, ms). */
    stop: () => {
      clearInterval(timer);
      return lastAtMs;
    },
  };
}

interface NodeOptions {
  sensor: 'simulated' | 'mqtt';
  /** The loop's first retry of an unconfirmed command, seconds. */
  retryInitialS: number;
  /** The heater's config section. Default: the Tasmota plug (preset tasmota, device plug). */
  heater?: string;
}

/**
 * A daemon regulating a 15 °C room to 20 °C with the plug as its heater (hysteresis, so the
 * heater is wanted on), its drivers on one shared MqttConnection, a SQLite store for events.
 */
async function startNode(t: TestContext, broker: Broker, opts: NodeOptions) {
  const sensor =
    opts.sensor === 'simulated'
      ? '{ kind: simulated, plant: room, periodS: 0.1 }'
      : `{ kind: mqtt, topic: ${SENSOR_TOPIC}, periodS: 0.2, staleAfterS: 1 }`;
  const text = `
version: 1
node: { id: it }
mqtt: { url: "${broker.url}" }
simulation: { plants: { room: { ambient: 15, timeConstantS: 3600 } } }
sensors:
  room_temp: ${sensor}
actuators:
  heater: ${opts.heater ?? '{ kind: mqtt_switch, preset: tasmota, device: plug }'}
loops:
  room:
    sensor: room_temp
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis }
    retryInitialS: ${opts.retryInitialS}
`;
  const { logger, text: logText } = recordingLogger({ level: 'debug' });
  const temp = makeTempDir('homeostat-mqtt-drivers-');
  // The node as `homeostat run` builds it (its drivers share the node's one connection; with
  // MQTT drivers, regulation starts once it is connected), reconnecting faster.
  const { node, daemon, store } = await startTestNode(text, join(temp.dir, 'state.db'), {
    clock: new RealClock(),
    logger,
    mqtt: { connection: FAST_RECONNECT },
  });
  t.after(async () => {
    await node.stop('test');
    temp.remove();
  });
  assert.ok(node.connection?.connected, 'the daemon connects to the broker');
  const room = (): LoopStatus | undefined => daemon.statuses().find((s) => s.loop === 'room');
  const condition = (type: string) => room()?.conditions.find((c) => c.type === type);
  return { daemon, store, room, condition, log: logText };
}

describe('MQTT drivers in a running daemon', () => {
  test('given a plug that confirms, the heater is commanded ON once and ActuatorConfirmed is True', async (t) => {
    const broker = await brokerFor(t);
    const plug = await fakeTasmotaPlug(t, broker, 'confirms');
    const node = await startNode(t, broker, { sensor: 'simulated', retryInitialS: 0.2 });
    await waitUntil(() => node.condition('ActuatorConfirmed')?.status === 'True', {
      what: 'ActuatorConfirmed True',
    });
    assert.equal(node.room()?.action, 'heating');
    // Confirmed: no retry (at 0.2 s, 0.6 s, 1.4 s… were it not), keep-alive only after 300 s.
    await sleep(1_500);
    assert.deepEqual(
      plug.commands.map((c) => c.payload),
      ['ON'],
      node.log(),
    );
    assert.equal(node.condition('ActuatorConfirmed')?.status, 'True');
  });

  test('given a plug that answers 2 s late, the command is retried with backoff meanwhile, then confirmed', async (t) => {
    const broker = await brokerFor(t);
    const plug = await fakeTasmotaPlug(t, broker, 'lags');
    const node = await startNode(t, broker, { sensor: 'simulated', retryInitialS: 0.5 });
    await waitUntil(() => plug.commands.length > 0, { what: 'the first command' });
    await waitUntil(() => node.condition('ActuatorConfirmed')?.status === 'False', {
      what: 'ActuatorConfirmed False while the plug has not answered',
    });
    await waitUntil(() => node.condition('ActuatorConfirmed')?.status === 'True', {
      what: 'ActuatorConfirmed True once the plug answers',
      timeoutMs: 10_000,
    });
    const first = plug.commands[0]!.atMs;
    const beforeAnswer = plug.commands.filter((c) => c.atMs < first + LAG_MS);
    // Sends at 0, 0.5 and 1.5 s before the answer at 2 s: a few, not one per cycle (10 per s).
    assert.ok(beforeAnswer.length >= 2 && beforeAnswer.length <= 3, JSON.stringify(plug.commands));
    assert.ok(
      plug.commands.every((c) => c.payload === 'ON'),
      'absolute commands only, never a toggle',
    );
  });

  test('given a plug that never answers, ON is re-sent at doubling intervals and ActuatorConfirmed stays False', async (t) => {
    const broker = await brokerFor(t);
    const plug = await fakeTasmotaPlug(t, broker, 'never answers');
    const initialMs = 200;
    // Without the PulseTime sent before each ON: its round trip would blur the gaps measured here.
    const node = await startNode(t, broker, {
      sensor: 'simulated',
      retryInitialS: initialMs / 1000,
      heater: '{ kind: mqtt_switch, preset: tasmota, device: plug, deadManS: 0 }',
    });
    // Expected sends at 0, 0.2, 0.6, 1.4, 3.0 s: five within 3.5 s.
    await waitUntil(() => plug.commands.length >= 5, { what: 'five sends', timeoutMs: 15_000 });
    const times = plug.commands.map((c) => c.atMs);
    const gaps = times.slice(1).map((at, i) => at - times[i]!);
    gaps.slice(0, 4).forEach((gapMs, i) => {
      // Each retry waits initial × 2^i after the previous send (50 ms for broker delivery jitter).
      assert.ok(gapMs >= initialMs * 2 ** i - 50, `gap ${i} is ${gapMs} ms: ${JSON.stringify(gaps)}`);
    });
    assert.ok(
      plug.commands.every((c) => c.payload === 'ON'),
      `the same absolute command: ${JSON.stringify(plug.commands)}`,
    );
    const confirmed = node.condition('ActuatorConfirmed');
    assert.equal(confirmed?.status, 'False');
    assert.equal(confirmed?.reason, 'Pending');
  });

  test('given a confirmed plug switched OFF by hand, the next cycle re-sends ON and records a drift event', async (t) => {
    const broker = await brokerFor(t);
    const plug = await fakeTasmotaPlug(t, broker, 'confirms');
    const node = await startNode(t, broker, { sensor: 'simulated', retryInitialS: 0.2 });
    await waitUntil(() => node.condition('ActuatorConfirmed')?.status === 'True', {
      what: 'ActuatorConfirmed True',
    });
    const before = plug.commands.length;
    await plug.switchByHand('OFF');
    await waitUntil(() => plug.commands.length > before, { what: 'ON re-sent after the hand switch' });
    assert.equal(plug.commands.at(-1)?.payload, 'ON');
    await waitUntil(() => node.condition('ActuatorConfirmed')?.status === 'True', {
      what: 'confirmed again',
    });
    node.daemon.flush();
    const drift = node.store.desired
      .events({ loop: 'room' })
      .filter((e) => e.kind === 'actuator' && e.source === 'drift');
    assert.equal(drift.length, 1, JSON.stringify(node.store.desired.events({ loop: 'room' })));
    assert.match(drift[0]!.message, /heater → 1 \(drift/);
  });

  test('given an MQTT sensor that goes quiet, the loop goes safe: the plug is commanded OFF after staleAfterS', async (t) => {
    const broker = await brokerFor(t);
    const plug = await fakeTasmotaPlug(t, broker, 'confirms');
    const thermometer = await fakeThermometer(t, broker, 15);
    const node = await startNode(t, broker, { sensor: 'mqtt', retryInitialS: 0.2 });
    await waitUntil(
      () => node.condition('ActuatorConfirmed')?.status === 'True' && node.room()?.action === 'heating',
      {
        what: 'heating on the MQTT reading',
      },
    );
    assert.equal(node.room()?.measured, 15);
    // (Before the first reading the loop was safe too: commands so far may include an OFF.)
    const sentBefore = plug.commands.length;
    const quietAtMs = thermometer.stop();
    const offAfterQuiet = () => plug.commands.slice(sentBefore).find((c) => c.payload === 'OFF');
    const off = await waitUntil(offAfterQuiet, {
      what: 'OFF after the sensor went quiet',
      timeoutMs: 10_000,
    });
    const staleAfterMs = 1_000;
    assert.ok(
      off.atMs - quietAtMs >= staleAfterMs - 50,
      `OFF ${off.atMs - quietAtMs} ms after the last reading`,
    );
    // The OFF goes out during the cycle; its status is published right after the writes.
    const faulted = await waitUntil(
      () => (node.condition('Faulted')?.status === 'True' ? node.condition('Faulted') : undefined),
      { what: 'Faulted after the OFF' },
    );
    assert.equal(faulted.reason, 'SensorStale');
    assert.equal(node.condition('SensorHealthy')?.status, 'False');
  });
});

describe("dead man's switches on the wire (deadManS)", () => {
  /** Every message on `filter`, in the order the broker delivered them. */
  async function recorder(t: TestContext, broker: Broker, filter: string) {
    const client = await deviceClient(t, broker, 'recorder');
    const messages: [string, string][] = [];
    client.on('message', (topic, payload) => messages.push([topic, payload.toString()]));
    await client.subscribeAsync(filter, { qos: 1 });
    return messages;
  }

  test('tasmota (default deadManS 600): PulseTime1 700 reaches the plug first, and again right before every ON', async (t) => {
    const broker = await brokerFor(t);
    const messages = await recorder(t, broker, 'cmnd/plug/#');
    await fakeTasmotaPlug(t, broker, 'confirms');
    const node = await startNode(t, broker, { sensor: 'simulated', retryInitialS: 0.2 });
    await waitUntil(() => node.condition('ActuatorConfirmed')?.status === 'True', {
      what: 'ActuatorConfirmed True',
    });
    await waitUntil(() => messages.some(([topic]) => topic === 'cmnd/plug/POWER'), { what: 'the ON' });
    assert.deepEqual(messages[0], ['cmnd/plug/PulseTime1', '700'], JSON.stringify(messages));
    messages.forEach(([topic, payload], i) => {
      if (topic === 'cmnd/plug/POWER' && payload === 'ON') {
        assert.deepEqual(messages[i - 1], ['cmnd/plug/PulseTime1', '700'], JSON.stringify(messages));
      }
    });
  });

  test('zigbee2mqtt opted in (deadManS 900): the ON carries on_time 900, nothing else is sent', async (t) => {
    const broker = await brokerFor(t);
    const messages = await recorder(t, broker, 'zigbee2mqtt/heater_plug/set');
    await startNode(t, broker, {
      sensor: 'simulated',
      retryInitialS: 0.2,
      heater: '{ kind: mqtt_switch, preset: zigbee2mqtt, device: zigbee2mqtt/heater_plug, deadManS: 900 }',
    });
    await waitUntil(() => messages.length > 0, { what: 'the ON' });
    assert.deepEqual(messages[0], ['zigbee2mqtt/heater_plug/set', '{"state":"ON","on_time":900}']);
  });
});

describe('homeostat safe with MQTT actuators (best effort, after the daemon died)', () => {
  /** The config file `homeostat safe` reads, in a temp dir removed after the test. */
  function safeConfigFile(t: TestContext, url: string): string {
    const config = `
version: 1
node: { id: dead }
mqtt: { url: "${url}" }
sensors: { t: { kind: mqtt, topic: t } }
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
  cooler: { kind: mqtt_switch, preset: zigbee2mqtt, device: zigbee2mqtt/cooler }
  pump: { kind: mqtt_switch, preset: tasmota, device: pump, safeState: on }
  fogger: { kind: mqtt_level, commandTopic: cmnd/fogger/Dimmer, stateTopic: stat/fogger/RESULT, safeLevel: 0.1 }
loops:
  room: { sensor: t, raise: heater, lower: cooler, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
  air: { sensor: t, raise: fogger, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: pid, kp: 0.2 } }
  water: { sensor: t, raise: pump, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`;
    return join(tempTree(t, { 'config.yaml': config }, 'homeostat-safe-mqtt-'), 'config.yaml');
  }

  test('with the broker up, every MQTT actuator gets its safe command (QoS 1, not retained) and exit is 0', async (t) => {
    const broker = await brokerFor(t);
    const client = await deviceClient(t, broker, 'recorder');
    const messages: [string, string, boolean][] = [];
    client.on('message', (topic, payload, packet) =>
      messages.push([topic, payload.toString(), packet.retain]),
    );
    await client.subscribeAsync(['cmnd/#', 'zigbee2mqtt/#'], { qos: 1 });
    const lines: string[] = [];
    const code = await safeCommand(
      { configPath: safeConfigFile(t, broker.url), sysfsRoot: '/nonexistent', env: {} },
      (line) => lines.push(line),
    );
    assert.equal(code, 0, lines.join('\n'));
    await waitUntil(() => messages.length >= 4, { what: 'four safe commands' });
    assert.deepEqual([...messages].sort(), [
      ['cmnd/fogger/Dimmer', '10', false],
      ['cmnd/plug/POWER', 'OFF', false],
      ['cmnd/pump/POWER', 'ON', false],
      ['zigbee2mqtt/cooler/set', '{"state":"OFF"}', false],
    ]);
    assert.ok(
      lines.includes(
        'heater (mqtt_switch): OFF sent on cmnd/plug/POWER (acknowledged); turns itself off ≤ 600 s after its last ON (Tasmota PulseTime)',
      ),
      lines.join('\n'),
    );
  });

  test('with the broker gone, it gives up after its timeout, says so per plug, and still exits 0', async (t) => {
    const broker = await brokerFor(t);
    const url = broker.url;
    await broker.dispose();
    const lines: string[] = [];
    const code = await safeCommand(
      { configPath: safeConfigFile(t, url), sysfsRoot: '/nonexistent', env: {}, mqttTimeoutMs: 500 },
      (line) => lines.push(line),
    );
    assert.equal(code, 0, lines.join('\n'));
    const heater = lines.find((line) => line.startsWith('heater '));
    assert.match(heater ?? '', /^heater \(mqtt_switch\): not reached \(broker mqtt:\/\/127\.0\.0\.1:\d+/);
    assert.match(heater ?? '', /turns itself off ≤ 600 s after its last ON \(Tasmota PulseTime\)$/);
  });
});

describe('homeostat run with MQTT drivers', () => {
  /**
   * `homeostat run` (JSON logs, `extraArgs` appended) on a config where the plug heats a
   * simulated cold room, config and database in a temp dir removed after the test.
   */
  function runPlugged(t: TestContext, broker: Broker, extraArgs: string[] = []): CliProcess {
    const config = `
version: 1
node: { id: plugged }
mqtt: { url: "${broker.url}" }
simulation: { plants: { room: { ambient: 15, timeConstantS: 3600 } } }
sensors:
  room_temp: { kind: simulated, plant: room, periodS: 1 }
actuators:
  heater: { kind: mqtt_switch, preset: tasmota, device: plug }
loops:
  room: { sensor: room_temp, raise: heater, setpoint: 20, limits: { min: 5, max: 30 }, controller: { type: hysteresis } }
`;
    const dir = tempTree(t, { 'config.yaml': config }, 'homeostat-mqtt-run-');
    const configPath = join(dir, 'config.yaml');
    const dbPath = join(dir, 'state.db');
    return new CliProcess([
      'run',
      '--config',
      configPath,
      '--db',
      dbPath,
      ...extraArgs,
      '--log-format',
      'json',
      '--http-port',
      '0',
    ]);
  }

  test('one connection for bridge and drivers: the plug is switched ON, discovery is published, and SIGTERM leaves it OFF', async (t) => {
    const broker = await brokerFor(t);
    const plug = await fakeTasmotaPlug(t, broker, 'confirms');
    const watcher = await deviceClient(t, broker, 'watcher');
    const seen = new Map<string, string>();
    watcher.on('message', (topic, payload) => seen.set(topic, payload.toString()));
    await watcher.subscribeAsync(['homeostat/plugged/#', 'homeassistant/device/plugged/config'], { qos: 1 });
    const run = runPlugged(t, broker);
    t.after(() => run.kill('SIGKILL'));
    await waitUntil(() => plug.commands.some((c) => c.payload === 'ON'), {
      what: `the plug switched ON\n${run.output}`,
      timeoutMs: 20_000,
    });
    await waitUntil(() => seen.has('homeassistant/device/plugged/config'), {
      what: `discovery published on connect\n${run.output}`,
    });
    assert.equal(seen.get('homeostat/plugged/availability'), 'online');
    // Regulation waited for the broker: the first command did not fail for want of a connection.
    assert.equal(run.find(/cycle failed/), undefined, run.output);
    assert.equal(
      run.filter((line) => line.msg === 'MQTT connected').length,
      1,
      'a single connection for the bridge and the drivers',
    );
    const exit = await run.kill('SIGTERM');
    assert.equal(exit.code, 0, run.output);
    assert.equal(plug.commands.at(-1)?.payload, 'OFF', 'safe state sent before the connection closed');
  });

  test('--speed is refused when a driver talks MQTT', async (t) => {
    const broker = await brokerFor(t);
    const run = runPlugged(t, broker, ['--speed', '60']);
    const exit = await run.exited;
    assert.equal(exit.code, 1, run.output);
    assert.ok(run.find('--speed needs every driver to be simulated; real drivers: heater'), run.output);
  });
});
