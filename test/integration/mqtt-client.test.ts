import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import {
  MqttConnection,
  type MqttConnectionOptions,
  type MqttSettings,
  topicMatchesFilter,
} from '../../src/mqtt/client.js';
import { LogLevel, type LogRecord, recordingLogger } from '../support/logger.js';
import { REPO_ROOT, sleep, waitUntil } from './helpers.js';
import { type Broker, brokerFor, createTestCa, FAST_RECONNECT } from './mosquitto.js';
import { startTcpProxy } from './tcp-proxy.js';

/**
 * The daemon's MQTT connection against a real Mosquitto on a free port (one per test), watched
 * by a plain MQTT.js client: availability (online, offline, last will), no offline queue,
 * reconnect with backoff after a broker restart, subscriptions restored, sessions kept within a
 * process and started clean by each new one,
 * passwords and TLS. Small backoff settings keep the whole file to a few seconds.
 */

const BASE = 'homeostat/it';
const AVAILABILITY = `${BASE}/availability`;

interface Received {
  topic: string;
  payload: string;
  retain: boolean;
}

const WARN = LogLevel.warn;
/** The error text of a record: the connection logs its errors as strings. */
const errText = (record: LogRecord | undefined): string => (record?.err as string | undefined) ?? '';

let clientNo = 0;
function settingsFor(broker: Broker, extra: Partial<MqttSettings> = {}): MqttSettings {
  clientNo += 1;
  return {
    url: broker.url,
    clientId: `homeostat-it-${process.pid}-${clientNo}`,
    protocolVersion: 5,
    baseTopic: BASE,
    ...extra,
  };
}

/** A connection for one test, stopped after it (stop is idempotent). */
function connectionFor(
  t: TestContext,
  settings: MqttSettings,
  opts: MqttConnectionOptions = FAST_RECONNECT,
): { conn: MqttConnection; records: LogRecord[]; connects: () => number } {
  const { logger, records } = recordingLogger({ level: 'debug' });
  const conn = new MqttConnection(settings, logger, opts);
  let connects = 0;
  conn.onConnect(() => {
    connects += 1;
  });
  t.after(() => conn.stop());
  return { conn, records, connects: () => connects };
}

/**
 * A broker whose password file has user `homeostat` with password `s3cret!`, and a connection
 * for one test that logs in as `homeostat` with `password`.
 */
async function passwordBrokerFor(t: TestContext, password: string) {
  const broker = await brokerFor(t, { passwordFile: [{ username: 'homeostat', password: 's3cret!' }] });
  return { broker, ...connectionFor(t, settingsFor(broker, { username: 'homeostat', password })) };
}

/**
 * Starts the connection, waits for `attempts` failed attempts (`what`), and checks that it never
 * connected and warned once, for a reason matching `why`; returns that warning.
 */
async function expectRefusedOnce(
  { conn, records, connects }: ReturnType<typeof connectionFor>,
  attempts: number,
  what: string,
  why: RegExp,
): Promise<LogRecord | undefined> {
  conn.start();
  await waitUntil(() => countAttempts(records) >= attempts, { what });

  assert.equal(conn.connected, false);
  assert.equal(connects(), 0);
  const warnings = records.filter((r) => r.level === WARN);
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.match(errText(warnings[0]), why);
  return warnings[0];
}

/**
 * A second, independent client that records what it receives on `filter`; it reconnects (and
 * resubscribes) by itself every 50 ms, so it survives broker restarts.
 */
async function watcher(
  t: TestContext,
  broker: Broker,
  filter: string,
  extra: mqtt.IClientOptions = {},
): Promise<{ client: MqttClient; messages: Received[]; payloads: (topic: string) => string[] }> {
  const client = mqtt.connect(broker.url, { reconnectPeriod: 50, ...extra });
  const messages: Received[] = [];
  client.on('message', (topic, payload, packet) => {
    messages.push({ topic, payload: payload.toString(), retain: packet.retain });
  });
  t.after(() => client.endAsync(true));
  await client.subscribeAsync(filter, { qos: 1 });
  return {
    client,
    messages,
    payloads: (topic) => messages.filter((m) => m.topic === topic).map((m) => m.payload),
  };
}

/** The retained payload of `topic` as a fresh client sees it (undefined: none). */
async function retainedOf(broker: Broker, topic: string, ca?: string): Promise<string | undefined> {
  const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0, ...(ca ? { ca } : {}) });
  try {
    const got = new Promise<string>((resolve) =>
      client.on('message', (_t, payload) => resolve(payload.toString())),
    );
    await client.subscribeAsync(topic, { qos: 1 });
    // Mosquitto sends retained messages right after the SUBACK; a publish round trip started
    // after the SUBACK ends after them, so if nothing came by then, nothing is retained.
    const none = client.publishAsync(`${BASE}/probe/${Math.random()}`, 'x', { qos: 1 }).then(() => undefined);
    return await Promise.race([got, none]);
  } finally {
    await client.endAsync(true);
  }
}

const countWarnings = (records: LogRecord[]): number => records.filter((r) => r.level === WARN).length;
const countAttempts = (records: LogRecord[]): number =>
  records.filter((r) => r.msg === 'MQTT reconnect scheduled').length;

describe('topicMatchesFilter', () => {
  test('MQTT wildcard rules', () => {
    const table: Array<[filter: string, topic: string, matches: boolean]> = [
      ['a/b', 'a/b', true],
      ['a/b', 'a/c', false],
      ['a/+', 'a/b', true],
      ['a/+', 'a/b/c', false],
      ['a/+/c', 'a/b/c', true],
      ['a/#', 'a', true], // # also matches the parent level
      ['a/#', 'a/b/c', true],
      ['a/#', 'b/c', false],
      ['#', 'a/b', true],
      ['+', 'a', true],
      ['+/+', 'a/', true], // an empty level is a level
      ['#', '$SYS/broker/uptime', false], // wildcards at the first level skip $-topics
      ['+/broker/uptime', '$SYS/broker/uptime', false],
      ['$SYS/#', '$SYS/broker/uptime', true],
      ['homeostat/demo/+/set', 'homeostat/demo/room/set', true],
      ['homeostat/demo/+/set', 'homeostat/demo/room/setpoint/set', false],
    ];
    for (const [filter, topic, matches] of table) {
      assert.equal(topicMatchesFilter(filter, topic), matches, `${filter} vs ${topic}`);
    }
  });
});

describe('MqttConnection against Mosquitto', () => {
  test('given a broker, when started, then a second client sees retained "online" and onConnect fired once', async (t) => {
    const broker = await brokerFor(t);
    const { conn, records, connects } = connectionFor(t, settingsFor(broker));

    conn.start();
    await waitUntil(() => connects() === 1, { what: 'onConnect' });

    assert.equal(conn.connected, true);
    assert.equal(await retainedOf(broker, AVAILABILITY), 'online');
    const connected = records.find((r) => r.msg === 'MQTT connected');
    assert.equal(connected?.url, broker.url);
    assert.equal(countWarnings(records), 0);
  });

  test('given a connection, when stopped cleanly, then "offline" is retained and publishing rejects', async (t) => {
    const broker = await brokerFor(t);
    const { conn } = connectionFor(t, settingsFor(broker));
    const watch = await watcher(t, broker, AVAILABILITY);
    conn.start();
    await waitUntil(() => watch.payloads(AVAILABILITY).includes('online'), { what: 'online' });

    await conn.stop();

    assert.equal(conn.connected, false);
    assert.equal(await retainedOf(broker, AVAILABILITY), 'offline');
    await waitUntil(() => watch.payloads(AVAILABILITY).at(-1) === 'offline', { what: 'offline seen live' });
    await assert.rejects(conn.publish(`${BASE}/x`, '1', { qos: 0, retain: false }), /not connected/);
  });

  test('given a daemon process, when it is killed (SIGKILL), then the broker publishes its last will "offline"', async (t) => {
    const broker = await brokerFor(t);
    const watch = await watcher(t, broker, AVAILABILITY);
    const settings = settingsFor(broker);
    // A separate process, so the socket dies the way it does in a crash: no DISCONNECT sent.
    const script = [
      `import { MqttConnection } from ${JSON.stringify(new URL('../../src/mqtt/client.ts', import.meta.url).href)};`,
      `import pino from 'pino';`,
      `const conn = new MqttConnection(${JSON.stringify(settings)}, pino({ level: 'silent' }));`,
      `conn.onConnect(() => console.log('connected'));`,
      'conn.start();',
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    t.after(() => {
      child.kill('SIGKILL');
      return exited;
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('connected') && resolve());
      child.once('exit', (code) => reject(new Error(`child exited (${code}) before connecting`)));
    });
    await waitUntil(() => watch.payloads(AVAILABILITY).at(-1) === 'online', { what: 'online from child' });

    child.kill('SIGKILL');
    await exited;

    await waitUntil(() => watch.payloads(AVAILABILITY).at(-1) === 'offline', { what: 'last will' });
    assert.equal(await retainedOf(broker, AVAILABILITY), 'offline');
  });

  test('given a connection, when the broker stops, then publish rejects at once and nothing is queued; when it restarts on the same port, the connection comes back by itself with its subscription', async (t) => {
    const broker = await brokerFor(t);
    const { conn, records, connects } = connectionFor(t, settingsFor(broker));
    const commands: string[] = [];
    conn.subscribe(`${BASE}/+/set`, 1, (topic, payload) => commands.push(`${topic}=${payload.toString()}`));
    const watch = await watcher(t, broker, `${BASE}/#`);
    conn.start();
    await waitUntil(() => connects() === 1, { what: 'first connect' });

    // Broker down: the connection notices, publishing fails fast at QoS 0 and 1.
    await broker.stop();
    await waitUntil(() => !conn.connected, { what: 'connected false' });
    await assert.rejects(
      conn.publish(`${BASE}/queued`, 'while-down-0', { qos: 0, retain: false }),
      /not connected/,
    );
    await assert.rejects(
      conn.publish(`${BASE}/queued`, 'while-down-1', { qos: 1, retain: false }),
      /not connected/,
    );
    await waitUntil(() => countAttempts(records) >= 3, { what: 'three reconnect attempts while down' });

    // Broker back (without its retained messages and sessions: persistence is off).
    await broker.start();
    await waitUntil(() => connects() === 2, { what: 'onConnect after restart' });
    assert.equal(conn.connected, true);
    await waitUntil(() => watch.client.connected, { what: 'watcher back' });
    await waitUntil(() => watch.payloads(AVAILABILITY).at(-1) === 'online', { what: 'online after restart' });

    // The subscription is back: a command sent after the restart is received.
    await watch.client.publishAsync(`${BASE}/room/set`, '{"setpoint":21}', { qos: 1 });
    await waitUntil(() => commands.length === 1, { what: 'command after restart' });
    assert.deepEqual(commands, [`${BASE}/room/set={"setpoint":21}`]);

    // Nothing published while down was queued: the first message on the topic is the new one.
    await conn.publish(`${BASE}/queued`, 'after', { qos: 1, retain: false });
    await waitUntil(() => watch.payloads(`${BASE}/queued`).length > 0, { what: 'message after restart' });
    assert.deepEqual(watch.payloads(`${BASE}/queued`), ['after']);

    // One warning for the whole outage, however many attempts it took.
    assert.equal(countWarnings(records), 1, JSON.stringify(records.filter((r) => r.level === WARN)));
    assert.match(records.find((r) => r.level === WARN)?.msg ?? '', /connection lost/);
  });

  for (const protocolVersion of [5, 4] as const) {
    const version = protocolVersion === 5 ? '5' : '3.1.1';
    test(`MQTT ${version}: given a stopped daemon, a QoS 1 command sent meanwhile is NOT delivered on the next start (each process starts a clean session)`, async (t) => {
      const broker = await brokerFor(t);
      const settings = settingsFor(broker, { protocolVersion });
      const first = connectionFor(t, settings);
      first.conn.subscribe(`${BASE}/room/setpoint/set`, 1, () => undefined);
      first.conn.start();
      await waitUntil(() => first.connects() === 1, { what: 'first run' });
      await first.conn.stop();

      // Sent while no process runs: the broker would queue it for a kept session.
      const sender = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      t.after(() => sender.endAsync(true));
      await sender.publishAsync(`${BASE}/room/setpoint/set`, '22.5', { qos: 1 });

      // Same client id, handlers registered before start (as the daemon does).
      const second = connectionFor(t, settings);
      const secondReceived: string[] = [];
      second.conn.subscribe(`${BASE}/room/setpoint/set`, 1, (_topic, payload) =>
        secondReceived.push(payload.toString()),
      );
      second.conn.start();
      await waitUntil(() => second.connects() === 1, { what: 'second run' });
      // A live command after the SUBACK arrives: anything queued would have come before it.
      // (Sent again until it arrives: the subscription may still be on its way to the broker.)
      const deadlineMs = Date.now() + 10_000;
      while (!secondReceived.includes('19') && Date.now() < deadlineMs) {
        await sender.publishAsync(`${BASE}/room/setpoint/set`, '19', { qos: 1 });
        await waitUntil(() => secondReceived.includes('19'), {
          what: 'a live command',
          timeoutMs: 200,
        }).catch(() => undefined);
      }
      assert.ok(secondReceived.includes('19'), 'a live command arrives');

      assert.ok(!secondReceived.includes('22.5'), `queued command delivered: ${secondReceived.join(', ')}`);
      const connected = second.records.find((r) => r.msg === 'MQTT connected');
      assert.equal(connected?.sessionPresent, false, 'the new process started a clean session');
    });

    test(`MQTT ${version}: given a running connection cut while the broker stays up, a QoS 1 command sent meanwhile is delivered at the reconnect (session kept within a process)`, async (t) => {
      const broker = await brokerFor(t);
      const proxy = await startTcpProxy(broker.port);
      t.after(() => proxy.close());
      const settings = { ...settingsFor(broker, { protocolVersion }), url: proxy.url };
      const { conn, connects, records } = connectionFor(t, settings);
      const received: string[] = [];
      conn.subscribe(`${BASE}/room/setpoint/set`, 1, (_topic, payload) => received.push(payload.toString()));
      conn.start();
      await waitUntil(() => connects() === 1, { what: 'first connect' });
      if (protocolVersion === 4) {
        // MQTT 3.1.1 has no session expiry: a clean first session ends with its connection, so
        // the kept session begins with the first reconnect. Cut once to get there.
        await proxy.cut();
        await proxy.resume();
        await waitUntil(() => connects() === 2, { what: 'the reconnect that starts the kept session' });
      }
      // The subscription is in the session once a live command arrives (after a reconnect the
      // client subscribes again, and a busy machine may cut before that reaches the broker).
      const live = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      t.after(() => live.endAsync(true));
      const liveDeadlineMs = Date.now() + 10_000;
      while (!received.includes('19') && Date.now() < liveDeadlineMs) {
        await live.publishAsync(`${BASE}/room/setpoint/set`, '19', { qos: 1 });
        await waitUntil(() => received.includes('19'), { what: 'a live command', timeoutMs: 200 }).catch(
          () => undefined,
        );
      }
      assert.ok(received.includes('19'), 'a live command arrives before the cut');
      const before = connects();

      await proxy.cut();
      await waitUntil(() => !conn.connected, { what: 'the connection noticed the cut' });
      const sender = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
      t.after(() => sender.endAsync(true));
      await sender.publishAsync(`${BASE}/room/setpoint/set`, '22.5', { qos: 1 });
      await proxy.resume();

      await waitUntil(() => received.includes('22.5'), { what: 'the command queued during the cut' });
      assert.equal(connects(), before + 1);
      const reconnected = records.filter((r) => r.msg === 'MQTT connected').at(-1);
      assert.equal(reconnected?.sessionPresent, true, 'the reconnect resumed the session');
    });
  }

  test('given a password file, the right password connects', async (t) => {
    const { conn, records, connects } = await passwordBrokerFor(t, 's3cret!');

    conn.start();
    await waitUntil(() => connects() === 1, { what: 'connect with password' });

    assert.equal(conn.connected, true);
    assert.ok(!JSON.stringify(records).includes('s3cret!'), 'the password is never logged');
  });

  test('given a wrong password, the connection keeps retrying without throwing and warns once per streak', async (t) => {
    const { broker, ...refused } = await passwordBrokerFor(t, 'wrong-pw');
    const { conn, records } = refused;

    const warning = await expectRefusedOnce(refused, 4, 'four refused attempts', /not authori[sz]ed/i);
    assert.equal(warning?.url, broker.url);
    assert.ok(!JSON.stringify(records).includes('wrong-pw'), 'the password is never logged');
    await conn.stop(); // resolves although never connected
  });

  test('given a TLS broker requiring client certificates, the generated CA and client certificate connect', async (t) => {
    const broker = await brokerFor(t, { tls: true, requireCertificate: true });
    const ca = readFileSync(broker.caPath!);
    const { conn, connects } = connectionFor(
      t,
      settingsFor(broker, {
        ca,
        cert: readFileSync(broker.clientCertPath!),
        key: readFileSync(broker.clientKeyPath!),
      }),
    );

    conn.start();
    await waitUntil(() => connects() === 1, { what: 'TLS connect' });

    assert.equal(conn.connected, true);
    assert.match(broker.url, /^mqtts:/);
  });

  test('given a TLS broker, a client trusting another CA keeps failing and says why once', async (t) => {
    const broker = await brokerFor(t, { tls: true });
    const wrongCa = createTestCa(broker.dir, 'other-ca');
    const refused = connectionFor(t, settingsFor(broker, { ca: readFileSync(wrongCa.certPath) }));

    await expectRefusedOnce(refused, 3, 'three TLS failures', /certificate/i);
  });

  test('given a connected daemon, when the broker restarts refusing its password, then the refusal is logged at warning with the reason, once per streak', async (t) => {
    const { broker, conn, records, connects } = await passwordBrokerFor(t, 's3cret!');
    conn.start();
    await waitUntil(() => connects() === 1, { what: 'connect with the right password' });

    // The password is changed on the broker: the next connection attempts are refused.
    await broker.stop();
    execFileSync('mosquitto_passwd', ['-b', join(broker.dir, 'passwd'), 'homeostat', 'changed-pw'], {
      stdio: 'pipe',
    });
    const attemptsBefore = countAttempts(records);
    await broker.start();
    await waitUntil(() => countAttempts(records) >= attemptsBefore + 4, { what: 'four refused attempts' });

    const refusals = records.filter((r) => r.level === WARN && /not authori[sz]ed/i.test(errText(r)));
    assert.equal(refusals.length, 1, JSON.stringify(records.filter((r) => r.level >= WARN)));
    assert.match(refusals[0]!.msg, /refused/i);
    assert.ok(!JSON.stringify(records).includes('s3cret!'), 'the password is never logged');
  });

  test('given a password inside the broker URL, then no log line carries it', async (t) => {
    const broker = await brokerFor(t, { passwordFile: [{ username: 'homeostat', password: 'url-secret' }] });
    const url = broker.url.replace('mqtt://', 'mqtt://homeostat:url-secret@');
    const { conn, records, connects } = connectionFor(t, { ...settingsFor(broker), url });
    conn.start();
    await waitUntil(() => connects() === 1, { what: 'connect with the password in the URL' });
    await broker.stop();
    await waitUntil(() => countAttempts(records) >= 2, { what: 'reconnect attempts' });
    await conn.stop();

    assert.ok(
      records.some((r) => typeof r.url === 'string' && r.url.includes('***')),
      'the URL is logged redacted',
    );
    assert.ok(!JSON.stringify(records).includes('url-secret'), 'the password is never logged');
  });

  test('MQTT 5: given a 10 MB publish to a subscribed topic, then it never reaches the handler, the connection stays up and the next message arrives', async (t) => {
    const broker = await brokerFor(t);
    const { conn, records, connects } = connectionFor(t, settingsFor(broker));
    const received: number[] = [];
    conn.subscribe(`${BASE}/room/setpoint/set`, 1, (_topic, payload) => received.push(payload.length));
    conn.start();
    await waitUntil(() => connects() === 1, { what: 'connect' });
    const publisher = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    t.after(() => publisher.endAsync(true));
    // The subscription is sent right after CONNACK: probe until a message comes through.
    while (received.length === 0) {
      await publisher.publishAsync(`${BASE}/room/setpoint/set`, 'probe', { qos: 1 });
      await sleep(20);
    }
    received.length = 0;

    await publisher.publishAsync(`${BASE}/room/setpoint/set`, Buffer.alloc(10 * 1024 * 1024, 0x31), {
      qos: 1,
    });
    await publisher.publishAsync(`${BASE}/room/setpoint/set`, '21', { qos: 1 });
    await waitUntil(() => received.length > 0, { what: 'the small message after the big one' });

    assert.deepEqual(received, [2], 'only the small message reached the handler');
    assert.equal(conn.connected, true);
    assert.equal(connects(), 1, 'no reconnect');
    assert.equal(countWarnings(records), 0, JSON.stringify(records.filter((r) => r.level >= WARN)));
  });

  test('given no broker at all, start() returns at once and stop() still resolves', async (t) => {
    const broker = await brokerFor(t);
    await broker.stop(); // a port nobody listens on
    const { conn, records } = connectionFor(t, settingsFor(broker));

    conn.start();
    await waitUntil(() => countAttempts(records) >= 2, { what: 'two refused attempts' });

    assert.equal(conn.connected, false);
    assert.equal(countWarnings(records), 1);
    assert.match(errText(records.find((r) => r.level === WARN)), /ECONNREFUSED/);
    await conn.stop();
  });
});
