/**
 * The node as `homeostat run` builds it (src/node.ts: store supervisor on a real SQLite file,
 * drivers, watchdog gate, daemon, MQTT bridge when asked), on a test's clock — a ManualClock by
 * default — and, with `mqtt`, a private broker. Tests and benches start this instead of wiring
 * a daemon themselves, so what is tested is what runs. Not a test file itself.
 */
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { parseConfigText } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { LoopStatus } from '../../src/core/status.js';
import type { GpioPortFactory } from '../../src/drivers/gpio/port.js';
import type { MqttConnectionOptions } from '../../src/mqtt/client.js';
import { Node } from '../../src/node.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import type { Notifier } from '../../src/systemd/notify.js';
import type { Clock } from '../../src/time/clock.js';
import { silentLogger } from './logger.js';

export { silentLogger };

export interface TestNodeOptions {
  /** Default a ManualClock at 2026-01-01T00:00Z. */
  clock?: Clock;
  /** Default silent. */
  logger?: Logger;
  /**
   * Connect to a broker: the one the config names, or `url` (a private test broker), with
   * `connection` timings. Without it the node runs without MQTT, whatever the config says.
   */
  mqtt?: { url?: string; connection?: MqttConnectionOptions };
  /** Told every loop status (subscribed before the start). */
  onStatus?: (status: LoopStatus) => void;
  /** Default 0 (no status lines). */
  statusEveryMs?: number;
  /** Where `node.reload()` reads the config; default none (tests call daemon.reload). */
  configPath?: string;
  gpioPortFactory?: GpioPortFactory;
  /** What systemd hears; default a disabled notifier. */
  notifier?: Notifier;
  /** The watchdog gate's clock; default the monotonic clock of production. */
  gateClock?: Clock;
  /**
   * Serve the HTTP API: where (port 0: a free one, read `node.http?.url` after the start).
   * Default off: most tests do not need it, and many nodes at once would share port 8734.
   */
  http?: { host?: string; port?: number; retryEveryMs?: number };
}

/** A started node and what tests read of it. */
export interface TestNode<C extends Clock = ManualClock> {
  node: Node;
  daemon: Node['daemon'];
  store: Node['store'];
  clock: C;
  /** The database in use (it changes when the supervisor recovers or reopens the file). */
  readonly db: Node['store']['database'];
  /** Stops the node as a signal would: actuators safe, bridge stopped, store closed last. */
  stop(signal?: string): Promise<void>;
}

/** The node on config `text` with its database in `dbPath`, built but not started. */
export function buildTestNode(text: string, dbPath: string, opts: TestNodeOptions = {}): Node {
  const loaded = parseConfigText(text);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.join('\n'));
  const node = new Node({
    configPath: opts.configPath ?? '(test: no config file)',
    // Without `mqtt`, the broker the config may name is not used (the text, which decides
    // the generation, stays as written).
    loaded: { config: opts.mqtt ? loaded.config : withoutMqtt(loaded.config), text },
    dbPath,
    clock: opts.clock ?? new ManualClock(Date.UTC(2026, 0, 1)),
    logger: opts.logger ?? silentLogger,
    ...(opts.mqtt?.url ? { mqttUrl: opts.mqtt.url } : {}),
    ...(opts.mqtt?.connection ? { mqttConnection: opts.mqtt.connection } : {}),
    // No HOMEOSTAT_MQTT_PASSWORD from the environment running the tests.
    env: {},
    statusEveryMs: opts.statusEveryMs ?? 0,
    watchConfig: false,
    ...(opts.gpioPortFactory ? { gpioPortFactory: opts.gpioPortFactory } : {}),
    ...(opts.notifier ? { notifier: opts.notifier } : {}),
    ...(opts.gateClock ? { gateClock: opts.gateClock } : {}),
    http: opts.http ?? false,
  });
  if (opts.onStatus) node.daemon.subscribe({ status: opts.onStatus });
  return node;
}

/** Builds and starts the node (see buildTestNode). */
export async function startTestNode<C extends Clock = ManualClock>(
  text: string,
  dbPath: string,
  opts: TestNodeOptions & { clock?: C } = {},
): Promise<TestNode<C>> {
  const clock = opts.clock ?? (new ManualClock(Date.UTC(2026, 0, 1)) as Clock as C);
  const node = buildTestNode(text, dbPath, { ...opts, clock });
  await node.start();
  return {
    node,
    daemon: node.daemon,
    store: node.store,
    clock,
    get db() {
      return node.store.database;
    },
    stop: (signal = 'test') => node.stop(signal),
  };
}

/**
 * Starts a node on config `text` with its store in `dbPath` and no MQTT; `clock` defaults to a
 * new manual one (the daemon-with-store helper the store, reload and latch tests use).
 */
export function startStoreDaemon(
  text: string,
  dbPath: string,
  clock: ManualClock = new ManualClock(Date.UTC(2026, 0, 1)),
  options: { logger?: Logger; onStatus?: (status: LoopStatus) => void } = {},
): Promise<TestNode> {
  return startTestNode(text, dbPath, { clock, ...options });
}

/**
 * A database the read-only commands can read: the node on config `text` ran 35 minutes, with a
 * setpoint of 21 for `room` from the CLI (request req-1) after 30, then stopped and closed.
 */
export async function databaseWithHistory(text: string, dbPath: string): Promise<void> {
  const { daemon, store, clock, db } = await startStoreDaemon(text, dbPath);
  await clock.advance(30 * 60_000);
  store.desired.setDesired('room', { setpoint: 21 }, 'cli', 'req-1');
  await clock.advance(5 * 60_000);
  await daemon.stop();
  db.close();
}

function withoutMqtt(config: Config): Config {
  const { mqtt: _broker, ...rest } = config;
  return rest;
}
