import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import type Database from 'better-sqlite3';
import mqtt, { type MqttClient } from 'mqtt';
import type YAML from 'yaml';
import { parseConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { reasonKind } from '../../src/control/rejection-log.js';
import type { Daemon } from '../../src/daemon/daemon.js';
import type { MqttBridge } from '../../src/mqtt/bridge.js';
import { ScaledClock } from '../../src/runtime/scaled-clock.js';
import type { DesiredStore } from '../../src/store/desired-store.js';
import { validConfig } from '../support/config.js';
import type { ResultPayload, StatePayload } from '../support/contract.js';
import { type LogRecord, recordingLogger } from '../support/logger.js';
import { startTestNode } from '../support/node.js';
import {
  demoConfigText,
  makeTempDir,
  openReadOnly,
  seededRandom,
  sleep,
  startDaemon,
  waitUntil,
} from './helpers.js';
import { type Broker, type BrokerOptions, brokerFor as brokerForTest, FAST_RECONNECT } from './mosquitto.js';

/**
 * The daemon's MQTT side against a real Mosquitto (one per test, on a free port): an in-process
 * node (src/node.ts, as `homeostat run` builds it: daemon, store supervisor on a real SQLite
 * file, MQTT bridge) on the demo's simulated plants with a ScaledClock (60×), and a separate MQTT.js
 * client playing Home Assistant. Checks the MQTT contract (docs/home-assistant.md):
 * availability, device discovery, retained states, commands (stored before their result, idempotent,
 * hostile ones rejected without a trace in the desired state), broker restarts, Home
 * Assistant's birth message, the finalizer of a removed loop, passwords and the last will.
 */

const SPEED = 60;
const BASE = 'homeostat/demo';
const AVAILABILITY = `${BASE}/availability`;
const DISCOVERY = 'homeassistant/device/demo/config';
const HA_STATUS = 'homeassistant/status';
const LOOPS = ['room', 'fermenter', 'greenhouse_humidity'] as const;
const stateTopic = (loop: string) => `${BASE}/${loop}/state`;
const resultTopic = (loop: string) => `${BASE}/${loop}/result`;
/** The unique-id (cmps key) prefix of a loop's Home Assistant components. */
const componentPrefix = (loop: string) => `homeostat_demo_${loop}_`;

interface DiscoveryJson {
  dev: { ids: string[] };
  o: { name: string };
  avty_t: string;
  cmps: Record<string, { p: string } & Record<string, unknown>>;
}

// ---------------------------------------------------------------------------------------
// Per-test resources, released in reverse order of acquisition

const cleanupLists = new WeakMap<TestContext, Array<() => unknown>>();

/** Runs `fn` after the test; later registrations run first (the daemon stops before its broker). */
function onCleanup(t: TestContext, fn: () => unknown): void {
  let list = cleanupLists.get(t);
  if (!list) {
    const fns: Array<() => unknown> = [];
    list = fns;
    cleanupLists.set(t, fns);
    t.after(async () => {
      for (const cleanup of fns.reverse()) await cleanup();
    });
  }
  list.push(fn);
}

/** A broker for one test, disposed of after the node that uses it has stopped. */
function brokerFor(t: TestContext, opts?: BrokerOptions): Promise<Broker> {
  return brokerForTest({ after: (fn) => onCleanup(t, fn) }, opts);
}

interface Stack {
  daemon: Daemon;
  bridge: MqttBridge;
  config: Config;
  desired: DesiredStore;
  /** A second, read-only connection to the database file: what another process would see. */
  readDb: Database.Database;
  records: LogRecord[];
  /** Every log line so far, as written. */
  logText: () => string;
  /** Stops the daemon, then the bridge (as `homeostat run` does), and closes the database. */
  stop: () => Promise<void>;
}

interface StackOptions {
  /** Edits the demo config (mqtt.url is already the test broker's). */
  edit?: (doc: YAML.Document) => void;
  /** The node's MQTT connection reconnects within a tenth of a second (FAST_RECONNECT). */
  fastReconnect?: boolean;
  /** Reuse this directory's database (a restart); default a fresh temp dir. */
  dir?: string;
}

/** The demo daemon with its MQTT bridge, started, as `homeostat run --speed 60` wires them. */
async function startStack(t: TestContext, broker: Broker, opts: StackOptions = {}): Promise<Stack> {
  const temp = opts.dir ? undefined : makeTempDir('homeostat-bridge-');
  if (temp) onCleanup(t, temp.remove);
  const dir = opts.dir ?? temp!.dir;
  const text = demoConfigText((doc) => {
    doc.setIn(['mqtt', 'url'], broker.url);
    opts.edit?.(doc);
  });
  const config = validConfig(text);
  const clock = new ScaledClock(SPEED);
  const { logger, records, text: logText } = recordingLogger({ level: 'debug' });
  const dbPath = join(dir, 'state.db');
  // The node as `homeostat run` builds it; with fastReconnect, its connection reconnects faster.
  const { node, daemon } = await startTestNode(text, dbPath, {
    clock,
    logger,
    mqtt: opts.fastReconnect ? { connection: FAST_RECONNECT } : {},
  });
  // The demo config names a broker (here, the test's).
  const started = node.bridge;
  assert.ok(started, 'the demo config names a broker');
  const desired = node.store.desired;
  const readDb = openReadOnly(dbPath);

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      await node.stop('test');
      readDb.close();
    })();
    return stopped;
  };
  onCleanup(t, stop);
  return { daemon, bridge: started, config, desired, readDb, records, logText, stop };
}

// ---------------------------------------------------------------------------------------
// The test client (Home Assistant's side)

interface Received {
  topic: string;
  payload: string;
  retain: boolean;
}

interface Watch {
  client: MqttClient;
  messages: Received[];
  /** Payloads received on `topic`, in order. */
  on: (topic: string) => string[];
  /** Non-empty payloads received on `topic`, parsed. */
  json: <T>(topic: string) => T[];
}

/**
 * An independent client recording everything it receives on `filters`; it reconnects (and
 * resubscribes) by itself every 50 ms, so it survives broker restarts.
 */
async function watcher(
  t: TestContext,
  broker: Broker,
  filters: string | string[],
  extra: mqtt.IClientOptions = {},
): Promise<Watch> {
  const client = mqtt.connect(broker.url, { reconnectPeriod: 50, ...extra });
  const messages: Received[] = [];
  client.on('message', (topic, payload, packet) => {
    messages.push({ topic, payload: payload.toString('utf8'), retain: packet.retain });
  });
  onCleanup(t, () => client.endAsync(true));
  await client.subscribeAsync(filters, { qos: 1 });
  const on = (topic: string) => messages.filter((m) => m.topic === topic).map((m) => m.payload);
  return {
    client,
    messages,
    on,
    json: <T>(topic: string) =>
      on(topic)
        .filter((p) => p !== '')
        .map((p) => JSON.parse(p) as T),
  };
}

/** The retained payload of `topic` as a fresh client sees it (undefined: none). */
async function retainedOf(
  broker: Broker,
  topic: string,
  extra: mqtt.IClientOptions = {},
): Promise<string | undefined> {
  const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, ...extra });
  try {
    const got = new Promise<string>((resolve) =>
      client.on('message', (_t, payload, packet) => packet.retain && resolve(payload.toString('utf8'))),
    );
    await client.subscribeAsync(topic, { qos: 1 });
    // Mosquitto sends retained messages right after the SUBACK; a publish round trip started
    // after the SUBACK ends after them, so if nothing came by then, nothing is retained.
    const none = client.publishAsync(`it-probe/${Math.random()}`, 'x', { qos: 1 }).then(() => undefined);
    return await Promise.race([got, none]);
  } finally {
    await client.endAsync(true);
  }
}

/** Polls an async probe until it returns something other than undefined; rejects after `timeoutMs`. */
async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Publishes one command (QoS 1) and returns the next result of its loop. */
async function sendCommand(
  watch: Watch,
  loop: string,
  suffix: string,
  payload: string | Buffer,
): Promise<ResultPayload> {
  const before = watch.on(resultTopic(loop)).length;
  await watch.client.publishAsync(`${BASE}/${loop}/${suffix}`, payload, { qos: 1 });
  await waitUntil(() => watch.on(resultTopic(loop)).length > before, {
    what: `the result of ${suffix} ${JSON.stringify(payload.toString().slice(0, 40))}`,
  });
  return JSON.parse(watch.on(resultTopic(loop))[before]!) as ResultPayload;
}

/**
 * Resolves once the bridge's command subscriptions are in place: it subscribes right after
 * connecting and publishes discovery after that on the same connection, which the broker
 * handles in order. (A command sent before then is lost: the first session has no subscriptions.)
 */
async function bridgeReady(broker: Broker, extra: mqtt.IClientOptions = {}): Promise<void> {
  await eventually(() => retainedOf(broker, DISCOVERY, extra), 'the bridge connected and subscribed');
}

/** Waits until the watcher has seen a reconciled state with a measurement from every loop. */
async function settledStates(watch: Watch, loops: readonly string[] = LOOPS): Promise<void> {
  await waitUntil(
    () =>
      loops.every((loop) =>
        watch
          .json<StatePayload>(stateTopic(loop))
          .some((s) => typeof s.measured === 'number' && s.observedGeneration === s.generation),
      ),
    { what: `a reconciled state of ${loops.join(', ')}` },
  );
}

// ---------------------------------------------------------------------------------------
// Reading the database through the second connection

interface DesiredRow {
  loop: string;
  setpoint: number;
  setpoint_source: string;
  mode: string;
  generation: number;
  updated_at_ms: number;
}

function desiredRow(db: Database.Database, loop: string): DesiredRow | undefined {
  return db
    .prepare<[string], DesiredRow>(
      'SELECT loop, setpoint, setpoint_source, mode, generation, updated_at_ms FROM loop_desired WHERE loop = ?',
    )
    .get(loop);
}

/** Everything a command could change: every desired row, whole, and the node's generation counter. */
function desiredSnapshot(db: Database.Database): { rows: unknown[]; lastGeneration: string | undefined } {
  return {
    rows: db.prepare('SELECT * FROM loop_desired ORDER BY loop').all(),
    lastGeneration: db
      .prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'lastGeneration'")
      .get()?.value,
  };
}

const isIso = (text: unknown) =>
  typeof text === 'string' && !Number.isNaN(Date.parse(text)) && new Date(text).toISOString() === text;

// ---------------------------------------------------------------------------------------

/**
 * The two discovery payloads a loop's removal publishes after the first `discoveriesBefore`:
 * the marker that reduces its components to their platform, then the discovery without them.
 */
async function removalMarkerAndDiscovery(
  watch: Watch,
  discoveriesBefore: number,
): Promise<Array<DiscoveryJson | undefined>> {
  await waitUntil(() => watch.on(DISCOVERY).length >= discoveriesBefore + 2, {
    what: 'the removal marker and the new discovery',
  });
  return watch
    .on(DISCOVERY)
    .slice(discoveriesBefore)
    .map((p) => JSON.parse(p) as DiscoveryJson);
}

describe('MQTT bridge against Mosquitto (in-process daemon, demo config, 60× clock)', () => {
  test('given the demo config, when the daemon starts, then availability, device discovery and every loop state are retained', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, `${BASE}/+/state`);
    const stack = await startStack(t, broker);
    await settledStates(watch);

    assert.equal(await retainedOf(broker, AVAILABILITY), 'online');

    // Discovery: one device, a climate per temperature loop, a humidifier for the humidity loop.
    const discovery = JSON.parse((await retainedOf(broker, DISCOVERY)) ?? 'null') as DiscoveryJson;
    assert.ok(discovery, 'device discovery is retained');
    assert.deepEqual(discovery.dev.ids, ['homeostat_demo']);
    assert.equal(discovery.o.name, 'homeostat');
    assert.equal(discovery.avty_t, AVAILABILITY);
    const mainEntities = (platform: string) =>
      Object.values(discovery.cmps)
        .filter((c) => c.p === platform)
        .map((c) => [c.uniq_id, c.temp_cmd_t ?? c.hum_cmd_t, c.mode_cmd_t ?? c.cmd_t])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    const loopsOf = (quantity: string) =>
      Object.entries(stack.config.loops)
        .filter(([, loop]) => loop.quantity === quantity)
        .map(([id]) => id)
        .sort();
    assert.deepEqual(loopsOf('temperature'), ['fermenter', 'room']);
    assert.deepEqual(
      mainEntities('climate'),
      loopsOf('temperature').map((loop) => [
        `homeostat_demo_${loop}_climate`,
        `${BASE}/${loop}/setpoint/set`,
        `${BASE}/${loop}/mode/set`,
      ]),
    );
    assert.deepEqual(mainEntities('humidifier'), [
      [
        'homeostat_demo_greenhouse_humidity_humidifier',
        `${BASE}/greenhouse_humidity/setpoint/set`,
        `${BASE}/greenhouse_humidity/mode/set`,
      ],
    ]);

    // One retained state per loop, with the contract's fields.
    for (const loop of LOOPS) {
      const raw = await retainedOf(broker, stateTopic(loop));
      assert.ok(raw, `${loop}: state retained`);
      const state = JSON.parse(raw) as StatePayload;
      const desired = stack.desired.desired(loop)!;
      assert.equal(state.loop, loop);
      assert.equal(state.setpoint, stack.config.loops[loop]!.setpoint, `${loop}: setpoint from the file`);
      assert.equal(state.mode, desired.mode);
      assert.equal(typeof state.measured, 'number', `${loop}: measured`);
      assert.ok(state.output >= -1 && state.output <= 1, `${loop}: output ${state.output} in −1..1`);
      assert.ok(
        ['off', 'idle', 'heating', 'cooling', 'drying', 'fan', 'humidifying'].includes(state.action),
        `${loop}: action ${state.action}`,
      );
      assert.equal(state.generation, desired.generation, `${loop}: generation is the stored one`);
      assert.equal(state.observedGeneration, state.generation, `${loop}: reconciled`);
      assert.ok(isIso(state.updatedAt), `${loop}: updatedAt ${state.updatedAt} is ISO-8601`);
      const types = state.conditions.map((c) => c.type);
      for (const type of ['SensorHealthy', 'ActuatorConfirmed', 'Converged', 'Faulted']) {
        assert.ok(types.includes(type), `${loop}: condition ${type} in ${types.join(', ')}`);
      }
      for (const c of state.conditions) {
        assert.ok(['True', 'False', 'Unknown'].includes(c.status), `${loop} ${c.type}: status ${c.status}`);
        assert.ok(typeof c.reason === 'string' && c.reason.length > 0, `${loop} ${c.type}: reason`);
        assert.equal(typeof c.message, 'string', `${loop} ${c.type}: message`);
        assert.ok(isIso(c.lastTransitionTime), `${loop} ${c.type}: lastTransitionTime`);
      }
      assert.equal(state.conditions.find((c) => c.type === 'SensorHealthy')?.status, 'True');
    }
  });

  test('given a running daemon, when setpoint/set 21.5 arrives, then the result says accepted with a new generation, already committed, and the state follows', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, `${BASE}/#`);
    const stack = await startStack(t, broker);
    await settledStates(watch, ['room']);
    // What another process reads from the file the moment the result arrives.
    const atReceipt: (DesiredRow | undefined)[] = [];
    watch.client.on('message', (topic) => {
      if (topic === resultTopic('room')) atReceipt.push(desiredRow(stack.readDb, 'room'));
    });
    const before = stack.desired.desired('room')!;

    const result = await sendCommand(watch, 'room', 'setpoint/set', '21.5');

    assert.equal(result.accepted, true, JSON.stringify(result));
    assert.deepEqual(result.change, { setpoint: 21.5 });
    assert.equal(result.loop, 'room');
    assert.ok(isIso(result.at));
    assert.ok(
      result.generation! > before.generation,
      `generation ${result.generation} > ${before.generation}`,
    );
    assert.equal(atReceipt.length, 1);
    assert.deepEqual(
      { ...atReceipt[0], updated_at_ms: 0 },
      {
        loop: 'room',
        setpoint: 21.5,
        setpoint_source: 'mqtt',
        mode: before.mode,
        generation: result.generation,
        updated_at_ms: 0,
      },
    );
    await waitUntil(
      () =>
        watch
          .json<StatePayload>(stateTopic('room'))
          .some((s) => s.setpoint === 21.5 && s.observedGeneration === result.generation),
      { what: 'a room state with setpoint 21.5, reconciled' },
    );
    const retained = JSON.parse((await retainedOf(broker, stateTopic('room')))!) as StatePayload;
    assert.equal(retained.setpoint, 21.5);
    assert.equal(retained.generation, result.generation);
    assert.equal(retained.observedGeneration, result.generation);
    const changes = stack.desired.events({ loop: 'room' }).filter((e) => e.kind === 'setpoint-changed');
    assert.deepEqual(
      changes.map((e) => [e.source, e.data]),
      [['mqtt', { from: before.setpoint, to: 21.5, generation: result.generation }]],
    );
  });

  test('given setpoint 21.5 applied, when the same command arrives again (a QoS 1 redelivery), then it is accepted with the same generation and nothing is written', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, `${BASE}/+/result`);
    const stack = await startStack(t, broker);
    await bridgeReady(broker);
    const first = await sendCommand(watch, 'room', 'setpoint/set', '21.5');
    assert.equal(first.accepted, true);
    const snapshot = desiredSnapshot(stack.readDb);

    const again = await sendCommand(watch, 'room', 'setpoint/set', '21.5');

    assert.equal(again.accepted, true, JSON.stringify(again));
    assert.equal(again.generation, first.generation, 'no generation bump');
    assert.deepEqual(desiredSnapshot(stack.readDb), snapshot, 'the desired state is untouched');
    const changes = stack.desired.events({ loop: 'room' }).filter((e) => e.kind === 'setpoint-changed');
    assert.equal(changes.length, 1, 'one setpoint change recorded');
  });

  test('given hostile payloads on every command topic, then each is rejected with a reason, recorded, and nothing changes in the desired state', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, `${BASE}/+/result`);
    const stack = await startStack(t, broker);
    await bridgeReady(broker);
    const random = seededRandom(7);
    const junk = Array.from({ length: 2048 }, () => String.fromCharCode(33 + Math.floor(random() * 94))).join(
      '',
    );
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x80]);
    const hostile: [suffix: string, payload: string | Buffer, reason: RegExp][] = [
      ['setpoint/set', '1e3', /plain decimal number/],
      ['setpoint/set', 'NaN', /plain decimal number/],
      ['setpoint/set', '99', /outside the limits 5\.\.30/],
      ['setpoint/set', junk, /2048 bytes, more than the 1024 allowed/],
      ['setpoint/set', binary, /not valid UTF-8/],
      ['mode/set', 'turbo', /mode "turbo" is not allowed.*off, heat/],
      ['mode/set', 'HEAT', /mode "HEAT" is not allowed/],
      ['set', '{"setpoint":"20"}', /setpoint: .*expected number/],
      ['set', '{"__proto__":{"x":1}}', /Unrecognized key: "__proto__"/],
      ['set', '[]', /expected object/],
      ['set', '{}', /needs a setpoint, a mode or both/],
      ['fault/reset', 'yes', /fault reset takes an empty payload or "reset"/],
    ];
    const generation = stack.desired.desired('room')!.generation;
    const snapshot = desiredSnapshot(stack.readDb);

    const results: ResultPayload[] = [];
    for (const [suffix, payload] of hostile) results.push(await sendCommand(watch, 'room', suffix, payload));

    hostile.forEach(([suffix, payload, reason], i) => {
      const label = `${suffix} ${JSON.stringify(payload.toString().slice(0, 30))}`;
      assert.equal(results[i]?.accepted, false, `${label}: rejected`);
      assert.match(results[i]?.reason ?? '', reason, label);
      assert.equal(results[i]?.generation, generation, `${label}: reports the unchanged generation`);
      assert.equal(results[i]?.change, undefined, label);
    });
    assert.deepEqual(desiredSnapshot(stack.readDb), snapshot, 'nothing changed in the desired state');
    // Events are coalesced by kind of reason (numbers and quoted values aside): "1e3" and "NaN",
    // "turbo" and "HEAT" are the same mistakes, recorded once with the first one's reason (the
    // count comes at the end of the minute).
    const events = stack.desired.events({ loop: 'room' }).filter((e) => e.kind === 'command-rejected');
    const counted = (e: (typeof events)[number]) => (e.data as { count?: number } | undefined)?.count;
    const rejected = events.filter((e) => counted(e) === undefined);
    // At 60× a minute is a second: the counts of the repeated kinds may be written already.
    const repeats = events.reduce((sum, e) => sum + (counted(e) ?? 0), 0);
    assert.ok(repeats <= 2, `${repeats} repeats counted`);
    const firstOfKind = results.filter(
      (result, i) => results.findIndex((r) => reasonKind(r.reason!) === reasonKind(result.reason!)) === i,
    );
    assert.equal(firstOfKind.length, hostile.length - 2, '1e3 and NaN, turbo and HEAT are one kind each');
    assert.equal(rejected.length, firstOfKind.length, 'one command-rejected event per kind of reason');
    rejected.forEach((event, i) => {
      assert.equal(event.source, 'mqtt');
      assert.ok(event.message.endsWith(firstOfKind[i]!.reason!), `${event.message} names the reason`);
    });
  });

  test('given a 10 MB publish to a command topic, then it never reaches the daemon (MQTT 5 maximumPacketSize), which keeps regulating and answering', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, [`${BASE}/+/result`, `${BASE}/+/state`]);
    const stack = await startStack(t, broker);
    await bridgeReady(broker);
    await settledStates(watch);
    const resultsBefore = watch.on(resultTopic('room')).length;

    await watch.client.publishAsync(`${BASE}/room/setpoint/set`, Buffer.alloc(10 * 1024 * 1024, 0x32), {
      qos: 1,
    });
    const next = await sendCommand(watch, 'room', 'setpoint/set', '21');

    assert.equal(next.accepted, true, JSON.stringify(next));
    assert.equal(watch.on(resultTopic('room')).length, resultsBefore + 1, 'no result for the 10 MB message');
    assert.equal(stack.records.filter((r) => r.msg === 'MQTT connected').length, 1, 'never disconnected');
    const statesBefore = watch.on(stateTopic('room')).length;
    await waitUntil(() => watch.on(stateTopic('room')).length > statesBefore + 2, {
      what: 'more room states',
    });
  });

  test('given the disk full under the database, then every command still gets its result, with the reason, and the bridge logs it once per streak', async (t) => {
    if (process.getuid?.() !== 0) return t.skip('mounting a tmpfs needs root');
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, `${BASE}/+/result`);
    const { dir, remove } = makeTempDir('homeostat-bridge-full-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]);
    onCleanup(t, () => {
      execFileSync('umount', ['-l', dir]);
      remove();
    });
    const stack = await startStack(t, broker, { dir });
    await bridgeReady(broker);
    // Fill the file system to the last byte.
    const filler = join(dir, 'filler');
    try {
      for (;;) appendFileSync(filler, Buffer.alloc(64 * 1024));
    } catch {
      try {
        for (;;) appendFileSync(filler, Buffer.alloc(512));
      } catch {
        // full
      }
    }

    const results: ResultPayload[] = [];
    for (let i = 0; i < 40; i++) {
      results.push(await sendCommand(watch, 'room', 'setpoint/set', i % 2 === 0 ? '22' : '23'));
      results.push(await sendCommand(watch, 'room', 'setpoint/set', '99'));
    }

    assert.equal(results.length, 80, 'every command answered');
    const refused = results.filter((r) => /not stored/.test(r.reason ?? ''));
    assert.ok(refused.length > 0, 'changes are refused as not stored');
    assert.ok(
      refused.every((r) => /full/i.test(r.reason ?? '')),
      refused[0]?.reason,
    );
    assert.ok(results.filter((_r, i) => i % 2 === 1).every((r) => /outside the limits/.test(r.reason ?? '')));
    const bridgeErrors = stack.records.filter(
      (r) => r.level >= 50 && r.component === 'mqtt' && /storage (read|write) failed/.test(r.msg),
    );
    assert.ok(bridgeErrors.length >= 1 && bridgeErrors.length <= 2, JSON.stringify(bridgeErrors));
  });

  test('given a setpoint left retained on the broker, when the daemon restarts with a newer setpoint in the file, then the file wins and the retained command is refused and cleared', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, `${BASE}/+/result`);
    const { dir, remove } = makeTempDir('homeostat-bridge-retained-');
    onCleanup(t, remove);
    const first = await startStack(t, broker, { dir });
    await bridgeReady(broker);
    // Sent with the retain flag while the daemon runs: the broker forwards it live (without the
    // flag) and keeps a copy, which it would replay at every later subscribe.
    await watch.client.publishAsync(`${BASE}/room/setpoint/set`, '25', { qos: 1, retain: true });
    await waitUntil(() => desiredRow(first.readDb, 'room')?.setpoint === 25, {
      what: 'the live command applied',
    });
    await first.stop();
    const resultsBefore = watch.on(resultTopic('room')).length;

    // While stopped, the file's setpoint is edited: the newer intent.
    const second = await startStack(t, broker, {
      dir,
      edit: (doc) => doc.setIn(['loops', 'room', 'setpoint'], 18),
    });

    await waitUntil(() => watch.on(resultTopic('room')).length > resultsBefore, {
      what: 'the replay answered',
    });
    const replay = JSON.parse(watch.on(resultTopic('room'))[resultsBefore]!) as ResultPayload;
    assert.equal(replay.accepted, false, JSON.stringify(replay));
    assert.match(replay.reason ?? '', /retained command refused/);
    assert.equal(desiredRow(second.readDb, 'room')?.setpoint, 18, 'the newer file value stays');
    assert.equal(desiredRow(second.readDb, 'room')?.setpoint_source, 'file');
    assert.equal(
      await eventually(
        async () =>
          (await retainedOf(broker, `${BASE}/room/setpoint/set`)) === undefined ? 'cleared' : undefined,
        'the retained command cleared',
      ),
      'cleared',
    );
    // Our own clearing came back as an empty message: it is not a command and gets no result.
    await sendCommand(watch, 'fermenter', 'setpoint/set', '19');
    assert.equal(watch.on(resultTopic('room')).length, resultsBefore + 1, 'one result: the refusal');
  });

  test('given a running daemon, when the broker stops, then regulation goes on; when it restarts on the same port, availability, discovery and states are back and commands work', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, `${BASE}/+/state`);
    const stack = await startStack(t, broker, { fastReconnect: true });
    await settledStates(watch);
    const connects = () => stack.records.filter((r) => r.msg === 'MQTT connected').length;
    assert.equal(connects(), 1);

    await broker.stop();
    await waitUntil(() => stack.records.some((r) => /MQTT connection lost/.test(r.msg)), {
      what: 'the bridge noticing the outage',
    });
    // Two full rounds of cycles of every loop while the broker is away.
    for (let round = 0; round < 2; round++) {
      const marks = new Map(stack.daemon.statuses().map((s) => [s.loop, s.updatedAtMs]));
      await waitUntil(
        () =>
          stack.daemon.statuses().length === LOOPS.length &&
          stack.daemon.statuses().every((s) => s.updatedAtMs > (marks.get(s.loop) ?? Infinity)),
        { what: 'every loop cycling while the broker is down' },
      );
    }
    for (const status of stack.daemon.statuses()) {
      const sensor = status.conditions.find((c) => c.type === 'SensorHealthy');
      assert.equal(sensor?.status, 'True', `${status.loop}: SensorHealthy while the broker is down`);
      assert.equal(status.observedGeneration, status.generation, `${status.loop}: still reconciling`);
    }
    assert.equal(connects(), 1, 'no connection while the broker is down');

    await broker.start(); // same port, no retained messages
    await waitUntil(() => connects() === 2, { what: 'the bridge reconnecting' });
    assert.equal(await eventually(() => retainedOf(broker, AVAILABILITY), 'availability'), 'online');
    const discovery = JSON.parse(await eventually(() => retainedOf(broker, DISCOVERY), 'discovery'));
    for (const loop of LOOPS) {
      assert.ok(
        Object.keys((discovery as DiscoveryJson).cmps).some((key) => key.startsWith(componentPrefix(loop))),
        `${loop}: components republished`,
      );
      const state = JSON.parse(await eventually(() => retainedOf(broker, stateTopic(loop)), `${loop} state`));
      assert.equal((state as StatePayload).loop, loop);
    }

    const commander = await watcher(t, broker, `${BASE}/+/result`);
    const result = await sendCommand(
      commander,
      'fermenter',
      'set',
      '{"setpoint":19,"requestId":"after-restart"}',
    );
    assert.equal(result.accepted, true, JSON.stringify(result));
    assert.equal(result.requestId, 'after-restart');
    assert.equal(desiredRow(stack.readDb, 'fermenter')?.setpoint, 19);
  });

  test('given a loop removed from the file while the daemon was stopped, when it starts again, then its state is cleared and its components get the removal marker', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, [DISCOVERY, `${BASE}/+/state`]);
    const { dir, remove } = makeTempDir('homeostat-bridge-restart-');
    onCleanup(t, remove);
    const gh = 'greenhouse_humidity';
    const first = await startStack(t, broker, { dir });
    await settledStates(watch);
    const original = JSON.parse((await retainedOf(broker, DISCOVERY))!) as DiscoveryJson;
    const ghKeys = Object.keys(original.cmps).filter((key) => key.startsWith(componentPrefix(gh)));
    await first.stop();
    const discoveriesBefore = watch.on(DISCOVERY).length;

    // When the daemon starts again on the same database, with the loop gone from the file …
    await startStack(t, broker, { dir, edit: (doc) => doc.deleteIn(['loops', gh]) });

    // … then the broker is reconciled with what the database says was published.
    await eventually(
      async () => ((await retainedOf(broker, stateTopic(gh))) === undefined ? true : undefined),
      'the greenhouse state cleared',
    );
    const [marker, final] = await removalMarkerAndDiscovery(watch, discoveriesBefore);
    for (const key of ghKeys) {
      assert.deepEqual(marker?.cmps[key], { p: original.cmps[key]!.p }, `marker for ${key}`);
      assert.equal(final?.cmps[key], undefined);
    }
  });

  test('given discovery cleared by hand, when Home Assistant sends its birth message, then the bridge republishes discovery', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, DISCOVERY);
    const stack = await startStack(t, broker);
    await waitUntil(() => watch.on(DISCOVERY).length > 0, { what: 'discovery' });
    const original = await retainedOf(broker, DISCOVERY);
    assert.ok(original);

    await watch.client.publishAsync(DISCOVERY, '', { qos: 1, retain: true });
    assert.equal(await retainedOf(broker, DISCOVERY), undefined, 'discovery cleared');
    const published = watch.on(DISCOVERY).length;
    await watch.client.publishAsync(HA_STATUS, 'online', { qos: 1 });

    const again = await eventually(() => retainedOf(broker, DISCOVERY), 'discovery after the birth message');
    assert.deepEqual(JSON.parse(again), JSON.parse(original));
    await waitUntil(() => watch.on(DISCOVERY).length > published, { what: 'the republished discovery live' });
    assert.ok(stack.records.some((r) => /Home Assistant online/.test(r.msg)));
  });

  test('given 2,000 Home Assistant birth messages in a burst, then discovery is republished a few times, not 2,000', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, DISCOVERY);
    await startStack(t, broker);
    await waitUntil(() => watch.on(DISCOVERY).length > 0, { what: 'discovery' });
    await bridgeReady(broker);
    const before = watch.on(DISCOVERY).length;

    const births = Array.from({ length: 2_000 }, () =>
      watch.client.publishAsync(HA_STATUS, 'online', { qos: 1 }),
    );
    await Promise.all(births);
    await waitUntil(() => watch.on(DISCOVERY).length > before, { what: 'a republish after the burst' });
    // At 60× the minimum interval of 5 s is 83 ms of real time: allow a few during the burst.
    await sleep(500);

    const republished = watch.on(DISCOVERY).length - before;
    assert.ok(republished >= 1 && republished <= 10, `${republished} republishes for 2,000 births`);
  });

  test('given a running daemon, when a reload removes greenhouse_humidity, then its retained state is cleared and its components are removed (marker first)', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, [DISCOVERY, `${BASE}/+/state`]);
    const stack = await startStack(t, broker);
    await settledStates(watch);
    const gh = 'greenhouse_humidity';
    assert.ok(await retainedOf(broker, stateTopic(gh)), 'greenhouse state retained before');
    const original = JSON.parse((await retainedOf(broker, DISCOVERY))!) as DiscoveryJson;
    const ghKeys = Object.keys(original.cmps).filter((key) => key.startsWith(componentPrefix(gh)));
    assert.ok(ghKeys.length >= 2, `greenhouse components: ${ghKeys.join(', ')}`);
    const discoveriesBefore = watch.on(DISCOVERY).length;
    const ghBefore = watch.on(stateTopic(gh)).length;

    const text = demoConfigText((doc) => {
      doc.setIn(['mqtt', 'url'], broker.url);
      doc.deleteIn(['loops', gh]);
    });
    const outcome = await stack.daemon.reload(parseConfigText(text));

    assert.equal(outcome.result, 'applied');
    assert.deepEqual(outcome.result === 'applied' && outcome.removed, [gh]);
    await waitUntil(() => watch.on(stateTopic(gh)).slice(ghBefore).includes(''), {
      what: 'the greenhouse state cleared',
    });
    const [marker, final] = await removalMarkerAndDiscovery(watch, discoveriesBefore);
    for (const key of ghKeys) {
      assert.deepEqual(
        marker?.cmps[key],
        { p: original.cmps[key]!.p },
        `marker reduces ${key} to its platform`,
      );
      assert.equal(final?.cmps[key], undefined, `${key} gone from the final payload`);
    }
    const others = (d: DiscoveryJson | undefined) =>
      Object.fromEntries(Object.entries(d?.cmps ?? {}).filter(([key]) => !ghKeys.includes(key)));
    assert.deepEqual(others(final), others(original), 'the other loops keep their components');
    assert.deepEqual(others(marker), others(original));
    assert.deepEqual(JSON.parse((await retainedOf(broker, DISCOVERY))!), final);

    // The removed loop stays cleared while the others go on publishing.
    const roomStates = watch.on(stateTopic('room')).length;
    await waitUntil(() => watch.on(stateTopic('room')).length >= roomStates + 3, {
      what: 'more room states',
    });
    assert.equal(await retainedOf(broker, stateTopic(gh)), undefined, 'no retained greenhouse state');
    // A last state of its cycle may go out during the reload, before the clear: never after it.
    const ghSince = watch.on(stateTopic(gh)).slice(ghBefore);
    assert.deepEqual(ghSince.slice(ghSince.indexOf('')), [''], 'nothing published for it after the clear');
    assert.equal(watch.on(DISCOVERY).length, discoveriesBefore + 2, 'exactly two discovery publishes');
  });

  test('given a broker with a password file, when mqtt.passwordFile holds the right password, then the daemon connects and the password is never logged', async (t) => {
    const password = `pw-${randomBytes(9).toString('hex')}`;
    const credentials = { username: 'homeostat', password };
    const broker = await brokerFor(t, { passwordFile: [credentials] });
    const { dir, remove } = makeTempDir('homeostat-pw-');
    onCleanup(t, remove);
    const passwordPath = join(dir, 'mqtt-password');
    writeFileSync(passwordPath, `${password}\n`, { mode: 0o600 });
    const watch = await watcher(t, broker, [AVAILABILITY, `${BASE}/+/result`], credentials);
    const stack = await startStack(t, broker, {
      edit: (doc) => {
        doc.setIn(['mqtt', 'username'], 'homeostat');
        doc.setIn(['mqtt', 'passwordFile'], passwordPath);
      },
    });

    await waitUntil(() => watch.on(AVAILABILITY).at(-1) === 'online', { what: 'online' });
    const result = await sendCommand(watch, 'room', 'setpoint/set', '22');
    assert.equal(result.accepted, true);
    await stack.stop();

    assert.ok(
      stack.records.some((r) => r.msg === 'MQTT connected'),
      'the capture holds the connection log',
    );
    assert.ok(stack.records.length > 10, `${stack.records.length} log records captured`);
    assert.equal(stack.logText().includes(password), false, 'the password is never logged');
    assert.equal(await retainedOf(broker, AVAILABILITY, credentials), 'offline');
  });

  test('given `homeostat run` connected to the broker, when it is killed with SIGKILL, then its last will "offline" is retained', async (t) => {
    const broker = await brokerFor(t);
    const { dir, remove } = makeTempDir('homeostat-will-');
    onCleanup(t, remove);
    const configPath = join(dir, 'config.yaml');
    writeFileSync(
      configPath,
      demoConfigText((doc) => doc.setIn(['mqtt', 'url'], broker.url)),
    );
    const watch = await watcher(t, broker, AVAILABILITY);
    const daemon = startDaemon({ configPath, dbPath: join(dir, 'state.db') });
    onCleanup(t, () => daemon.kill('SIGKILL'));

    await daemon.waitForLine('MQTT connected');
    await waitUntil(() => watch.on(AVAILABILITY).at(-1) === 'online', { what: 'online from the child' });
    const exit = await daemon.kill('SIGKILL');

    assert.equal(exit.signal, 'SIGKILL');
    await waitUntil(() => watch.on(AVAILABILITY).at(-1) === 'offline', { what: 'the last will' });
    assert.equal(await retainedOf(broker, AVAILABILITY), 'offline');
  });
});
