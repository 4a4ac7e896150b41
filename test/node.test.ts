/**
 * The Node's ordering rules (src/node.ts), as specifications: what starts before what, what a
 * reload and a stop wait for, what systemd hears at the stop, and what is left once stopped.
 * The node is the one `homeostat run` builds, on a ManualClock (the gate's too), with a fake
 * notifier that records what it was asked to send and spies that record every step of the
 * daemon, the gate, the bridge and the store in one list, so an order is one assertion.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { parseConfigText } from '../src/config/load.js';
import { DatabaseInUseError, MQTT_START_WAIT_MS, type Node, Node as NodeClass } from '../src/node.js';
import { ManualClock } from '../src/runtime/manual-clock.js';
import type { Notifier } from '../src/systemd/notify.js';
import { demoConfigText, minimalSimConfigText } from './support/config.js';
import { buildTestNode, silentLogger } from './support/node.js';
import { tempDir } from './support/tmp.js';

/** A port nothing listens on: the MQTT connection keeps retrying, never connects. */
const NO_BROKER = 'mqtt://127.0.0.1:1';
/** Half of a 20 s WatchdogSec, as systemd would give it. */
const PING_EVERY_MS = 10_000;
const FAST_MQTT = {
  reconnect: { initialMs: 20, maxMs: 100, jitter: 0 },
  publishTimeoutMs: 500,
  stopTimeoutMs: 500,
};

/** A notifier that records each message, as systemd would receive it, in `events`. */
function recordingNotifier(events: string[]): Notifier {
  return {
    enabled: true,
    watchdogIntervalMs: PING_EVERY_MS,
    problem: undefined,
    ready: () => events.push('READY=1'),
    watchdog: () => events.push('WATCHDOG=1'),
    status: (text) => events.push(`STATUS=${text}`),
    stopping: () => events.push('STOPPING=1'),
    close: () => events.push('notifier closed'),
  };
}

/**
 * Records `label` in `events` when `target[method]` is called, and `label done` when the
 * promise it returns settles. `delayMs` (real time) holds the call back first, to give a step
 * that could overlap the chance to.
 */
function trace<T extends object>(
  events: string[],
  target: T,
  method: keyof T & string,
  label: string,
  delayMs = 0,
) {
  const original = (target[method] as (...args: unknown[]) => unknown).bind(target);
  const traced = (...args: unknown[]) => {
    events.push(label);
    const run = delayMs > 0 ? sleep(delayMs).then(() => original(...args)) : original(...args);
    if (!(run instanceof Promise)) return run;
    return run.finally(() => events.push(`${label} done`));
  };
  Object.assign(target, { [method]: traced });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface Traced {
  node: Node;
  clock: ManualClock;
  events: string[];
  /** Where `node.reload()` reads the config. */
  configPath: string;
}

/**
 * The node on config `text` with a recording notifier, its config in a file (for reloads) and
 * its database in a temp dir; the daemon, gate, bridge and store traced into `events` (start
 * and reload of the daemon held back `delayMs`). Not started; stopped after the test.
 */
function tracedNode(t: TestContext, text: string, opts: { mqttUrl?: string; delayMs?: number } = {}): Traced {
  const dir = tempDir(t, 'homeostat-node-');
  const configPath = join(dir, 'homeostat.yaml');
  writeFileSync(configPath, text);
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const events: string[] = [];
  const node = buildTestNode(text, join(dir, 'state.db'), {
    clock,
    gateClock: clock,
    notifier: recordingNotifier(events),
    configPath,
    ...(opts.mqttUrl ? { mqtt: { url: opts.mqttUrl, connection: FAST_MQTT } } : {}),
  });
  const delayMs = opts.delayMs ?? 0;
  trace(events, node.daemon, 'start', 'daemon.start', delayMs);
  trace(events, node.daemon, 'reload', 'daemon.reload', delayMs);
  trace(events, node.daemon, 'stop', 'daemon.stop');
  trace(events, node.gate, 'start', 'gate.start');
  trace(events, node.gate, 'stop', 'gate.stop');
  trace(events, node.store, 'close', 'store.close');
  if (node.bridge) {
    trace(events, node.bridge, 'start', 'bridge.start');
    trace(events, node.bridge, 'stop', 'bridge.stop');
  }
  t.after(() => node.stop('test end'));
  return { node, clock, events, configPath };
}

/** The events that are steps of the node's parts (not what systemd hears). */
const steps = (events: string[]) => events.filter((e) => /^[a-z]+\.[a-z]+( done)?$/.test(e));

/** Asserts that `first` was recorded before `then` (both present). */
function assertBefore(events: string[], first: string, then: string): void {
  const firstAt = events.indexOf(first);
  const thenAt = events.indexOf(then);
  assert.ok(firstAt >= 0 && thenAt >= 0, `${first} and ${then} both in: ${events.join(', ')}`);
  assert.ok(firstAt < thenAt, `${first} before ${then}: ${events.join(', ')}`);
}

/** The demo with one relay safe on and a continuous actuator safe at 30 %: safe is not always 0. */
const DEMO_WITH_SAFE_LEVELS = demoConfigText((doc) => {
  doc.setIn(['actuators', 'chamber_cooler', 'safeState'], 'on');
  doc.setIn(['actuators', 'fogger', 'safeLevel'], 0.3);
});

/** The minimal loop with its heater behind MQTT (a Tasmota plug): the config uses MQTT drivers. */
const MQTT_HEATER = minimalSimConfigText({ extra: 'mqtt: {}' }).replace(
  '  heater: { kind: simulated_relay, plant: p, gain: 20 }',
  '  heater: { kind: mqtt_switch, preset: tasmota, device: plug }',
);

describe('Node start', () => {
  test('given no MQTT drivers, the daemon starts first, then the watchdog gate, then the bridge', async (t) => {
    const { node, events } = tracedNode(t, demoConfigText(), { mqttUrl: NO_BROKER });
    await node.start();
    assert.deepEqual(steps(events), ['daemon.start', 'daemon.start done', 'gate.start', 'bridge.start']);
  });

  test('given the daemon started, READY=1 comes once the gate has started and every loop has cycled', async (t) => {
    const { node, clock, events } = tracedNode(t, demoConfigText());
    await node.start();
    assertBefore(events, 'daemon.start done', 'gate.start');
    assert.equal(events.includes('READY=1'), false, 'not before the first cycles');
    await clock.advance(60_000);
    assertBefore(events, 'gate.start', 'READY=1');
    assert.equal(events.filter((e) => e === 'READY=1').length, 1);
  });

  test(`given MQTT drivers and no broker, the bridge starts first and regulation waits for it at most ${MQTT_START_WAIT_MS / 1000} s`, async (t) => {
    const { node, events } = tracedNode(t, MQTT_HEATER, { mqttUrl: NO_BROKER });
    const startedAtMs = Date.now();
    await node.start();
    const tookMs = Date.now() - startedAtMs;

    assert.deepEqual(steps(events), ['bridge.start', 'daemon.start', 'daemon.start done', 'gate.start']);
    assert.equal(node.connection?.connected, false, 'no broker');
    assert.ok(tookMs >= MQTT_START_WAIT_MS - 50, `waited for the broker: ${tookMs} ms`);
    assert.ok(tookMs < MQTT_START_WAIT_MS + 3_000, `and no longer: ${tookMs} ms`);
  });

  test('start twice is refused', async (t) => {
    const { node } = tracedNode(t, minimalSimConfigText());
    await node.start();
    assert.throws(() => node.start(), /start\(\) called twice/);
  });
});

describe('Node reload', () => {
  test('given a reload asked while the start is in progress, it runs only once the start has finished', async (t) => {
    const { node, events } = tracedNode(t, demoConfigText(), { delayMs: 30 });
    const started = node.start();
    const reloaded = node.reload('test');
    await Promise.all([started, reloaded]);
    assertBefore(events, 'gate.start', 'daemon.reload');
    assert.deepEqual(steps(events).slice(0, 4), [
      'daemon.start',
      'daemon.start done',
      'gate.start',
      'daemon.reload',
    ]);
  });

  test('given two reloads asked at once, they never overlap: the second begins after the first is done', async (t) => {
    const { node, events } = tracedNode(t, demoConfigText(), { delayMs: 30 });
    await node.start();
    events.length = 0;
    await Promise.all([node.reload('first'), node.reload('second')]);
    assert.deepEqual(steps(events), [
      'daemon.reload',
      'daemon.reload done',
      'daemon.reload',
      'daemon.reload done',
    ]);
  });

  test('given a reload that throws, the next one still runs (the chain is not broken)', async (t) => {
    const { node, events, configPath } = tracedNode(t, demoConfigText());
    await node.start();
    events.length = 0;
    writeFileSync(
      configPath,
      demoConfigText((doc) => doc.setIn(['loops', 'fermenter', 'setpoint'], 19)),
    );
    const daemonReload = node.daemon.reload.bind(node.daemon);
    let calls = 0;
    Object.assign(node.daemon, {
      reload: (...args: Parameters<Node['daemon']['reload']>) =>
        ++calls === 1 ? Promise.reject(new Error('disk error')) : daemonReload(...args),
    });
    await node.reload('first');
    await node.reload('second');
    assert.equal(calls, 2);
    assert.equal(node.daemon.currentConfig().loops.fermenter?.setpoint, 19, 'the second reload applied');
  });
});

describe('Node stop', () => {
  test('given a start and a reload in progress, the stop waits for both before it stops the daemon', async (t) => {
    const { node, events } = tracedNode(t, demoConfigText(), { delayMs: 30 });
    const started = node.start();
    const reloaded = node.reload('test');
    await node.stop('SIGTERM');
    await Promise.all([started, reloaded]);
    assertBefore(events, 'daemon.start done', 'daemon.stop');
    assertBefore(events, 'daemon.reload done', 'daemon.stop');
  });

  test('at the stop, systemd hears a last WATCHDOG=1, then STOPPING=1, with no ping after the gate stopped', async (t) => {
    const { node, clock, events } = tracedNode(t, demoConfigText());
    await node.start();
    await clock.advance(3 * PING_EVERY_MS);
    events.length = 0;

    await node.stop('SIGTERM');
    assert.deepEqual(events.slice(0, 4), [
      'gate.stop',
      'WATCHDOG=1',
      'STOPPING=1',
      'STATUS=SIGTERM: driving actuators to their safe state',
    ]);
    const stoppedEvents = events.length;
    await clock.advance(3 * PING_EVERY_MS);
    assert.equal(
      events.length,
      stoppedEvents,
      `nothing after the stop: ${events.slice(stoppedEvents).join(', ')}`,
    );
  });

  test('the daemon stops first, then the bridge; the store is closed last, and then the notifier', async (t) => {
    const { node, events } = tracedNode(t, demoConfigText(), { mqttUrl: NO_BROKER });
    await node.start();
    events.length = 0;
    await node.stop('SIGTERM');
    assert.deepEqual(steps(events), [
      'gate.stop',
      'daemon.stop',
      'daemon.stop done',
      'bridge.stop',
      'bridge.stop done',
      'store.close',
    ]);
    assert.equal(events.at(-1), 'notifier closed');
  });

  test('stop twice (at once, and again later) is harmless: one stop, one STOPPING=1', async (t) => {
    const { node, events } = tracedNode(t, demoConfigText());
    await node.start();
    events.length = 0;
    await Promise.all([node.stop('SIGTERM'), node.stop('SIGINT')]);
    await node.stop('SIGTERM');
    for (const once of ['daemon.stop', 'store.close', 'STOPPING=1', 'notifier closed']) {
      assert.equal(events.filter((e) => e === once).length, 1, `${once} once: ${events.join(', ')}`);
    }
  });

  test('after the stop, every actuator is at its safe level (0, or what the config says)', async (t) => {
    const node = buildTestNode(DEMO_WITH_SAFE_LEVELS, join(tempDir(t, 'homeostat-node-'), 'state.db'));
    const clock = node.clock as ManualClock;
    t.after(() => node.stop('test end'));
    await node.start();
    await clock.advance(20 * 60_000);
    await node.stop('SIGTERM');
    const levels: Record<string, number | undefined> = {};
    for (const [id, driver] of node.drivers.actuators) levels[id] = await driver.observe();
    assert.deepEqual(levels, { room_heater: 0, chamber_heater: 0, chamber_cooler: 1, fogger: 0.3 });
  });
});

describe('Node: one daemon per database', () => {
  const TEXT = minimalSimConfigText();

  test('given a node on a database, when a second is built on it, then it is refused naming the first, before opening anything', async (t) => {
    const dbPath = join(tempDir(t, 'homeostat-node-'), 'state.db');
    const first = buildTestNode(TEXT, dbPath);
    t.after(() => first.stop('test end'));
    await first.start();
    assert.throws(
      () => buildTestNode(TEXT, dbPath),
      (error: Error) =>
        error instanceof DatabaseInUseError &&
        error.message.startsWith(`another homeostat is already running on ${dbPath}: pid ${process.pid} on `),
    );
  });

  test('given a node stopped, when another starts on its database (a restart), then it runs', async (t) => {
    const dbPath = join(tempDir(t, 'homeostat-node-'), 'state.db');
    const first = buildTestNode(TEXT, dbPath);
    await first.start();
    await first.stop('SIGTERM');
    const second = buildTestNode(TEXT, dbPath);
    t.after(() => second.stop('test end'));
    await second.start();
    assert.equal(second.store.onStandIn, false);
  });

  test('given a node whose database was closed without a stop (how tests simulate a crash), then another takes over', async (t) => {
    const dbPath = join(tempDir(t, 'homeostat-node-'), 'state.db');
    const first = buildTestNode(TEXT, dbPath);
    await first.start();
    await first.daemon.stop('crash');
    first.store.database.close();
    const second = buildTestNode(TEXT, dbPath);
    t.after(() => second.stop('test end'));
    await second.start();
    assert.equal(second.store.onStandIn, false);
  });

  test('given a node that could not be built (--speed with a real driver), then it left the database free', (t) => {
    const dbPath = join(tempDir(t, 'homeostat-node-'), 'state.db');
    const gpio = minimalSimConfigText().replace(
      '  heater: { kind: simulated_relay, plant: p, gain: 20 }',
      '  heater: { kind: gpio_relay, bcm: 17 }',
    );
    assert.notEqual(gpio, TEXT, 'the config has a real driver');
    const loaded = parseConfigText(gpio);
    assert.ok(loaded.ok);
    const options = {
      configPath: '(test)',
      loaded: { config: loaded.config, text: gpio },
      dbPath,
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
      logger: silentLogger,
      speed: 60,
      http: false as const,
      watchConfig: false,
      env: {},
    };
    assert.throws(() => new NodeClass(options), /speed/);
    const next = buildTestNode(TEXT, dbPath);
    t.after(() => next.stop('test end'));
  });
});
