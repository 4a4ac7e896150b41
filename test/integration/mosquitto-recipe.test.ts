/**
 * The Mosquitto recipe of systemd/README.md ("Mosquitto on the same Pi (optional)") against a
 * real Mosquitto: the ACL, the broker settings and homeostat's `mqtt:` block are read out of
 * the documentation, so what is tested is what a reader copies. Users homeostat (the daemon),
 * homeassistant (may command) and guest (anybody else: read only); anonymous is refused.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import YAML from 'yaml';
import type { LoopStatus } from '../../src/core/status.js';
import { minimalSimConfigText } from '../support/config.js';
import type { ResultPayload, StatePayload } from '../support/contract.js';
import { LogLevel, recordingLogger } from '../support/logger.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { makeTempDir } from '../support/tmp.js';
import { sleep, waitUntil } from './helpers.js';
import { FAST_RECONNECT } from './mosquitto.js';
import { codeBlockAfter, docSection, type RecipeBroker, startRecipeBroker } from './mosquitto-recipe.js';

const RECIPE = docSection('systemd/README.md', '## Mosquitto on the same Pi (optional)');
const ACL = codeBlockAfter(RECIPE, '2. **Who may do what**');
const SETTINGS = codeBlockAfter(RECIPE, "3. **The broker's settings**");
const MQTT_BLOCK = codeBlockAfter(RECIPE, "4. **homeostat's side**");

const NODE_ID = 'pi';
const BASE = `homeostat/${NODE_ID}`;
const STATE = `${BASE}/room/state`;
const RESULT = `${BASE}/room/result`;
/** The node's Home Assistant discovery: published after its command subscriptions (same connection). */
const DISCOVERY = `homeassistant/device/${NODE_ID}/config`;

/** Passwords like step 1's `openssl rand -hex 24`. */
const password = () => randomBytes(24).toString('hex');
const USERS = { homeostat: password(), homeassistant: password(), guest: password() };

/** The loop's setpoint in the config, and what each client asks for. */
const FILE_SETPOINT = 20;
const GUEST_SETPOINT = 25;
const HA_SETPOINT = 21.5;

/** A client of the test broker that keeps every message it receives, by topic. */
interface Watcher {
  client: MqttClient;
  on(topic: string): string[];
}

async function watcher(url: string, username: string, topics: string[]): Promise<Watcher> {
  const client = await mqtt.connectAsync(url, {
    username,
    password: USERS[username as keyof typeof USERS],
    reconnectPeriod: 0,
  });
  const seen = new Map<string, string[]>();
  client.on('message', (topic, payload) => {
    const list = seen.get(topic) ?? [];
    list.push(payload.toString());
    seen.set(topic, list);
  });
  const granted = await client.subscribeAsync(topics, { qos: 1 });
  assert.ok(
    granted.every((grant) => grant.qos < 0x80),
    `${username} may subscribe to ${topics.join(', ')}: ${JSON.stringify(granted)}`,
  );
  return { client, on: (topic) => seen.get(topic) ?? [] };
}

/** The `mqtt:` block of step 4, with the test broker's URL and password file. */
function mqttBlock(url: string, passwordFile: string): Record<string, unknown> {
  const doc = YAML.parse(MQTT_BLOCK) as { mqtt: Record<string, unknown> };
  return { ...doc.mqtt, url, passwordFile };
}

const room = (node: TestNode): LoopStatus => {
  const status = node.daemon.statuses().find((s) => s.loop === 'room');
  assert.ok(status, 'loop room has a status');
  return status;
};

describe('the Mosquitto recipe of systemd/README.md', () => {
  const temp = makeTempDir('homeostat-recipe-');
  const releases: Array<() => unknown> = [temp.remove];
  let broker: RecipeBroker;
  let node: TestNode;
  let nodeLog: ReturnType<typeof recordingLogger>;
  let ha: Watcher;
  let guest: Watcher;

  before(async () => {
    broker = await startRecipeBroker({
      dir: temp.dir,
      settings: SETTINGS,
      acl: ACL,
      users: Object.entries(USERS).map(([username, pw]) => ({ username, password: pw })),
    });
    releases.push(() => broker.stop());
    // Step 1: homeostat's clear-text password, one line, 0600.
    const passwordFile = join(temp.dir, 'mqtt-password');
    writeFileSync(passwordFile, `${USERS.homeostat}\n`, { mode: 0o600 });
    const text = minimalSimConfigText({
      nodeId: NODE_ID,
      extra: YAML.stringify({ mqtt: mqttBlock(broker.url, passwordFile) }),
    });
    nodeLog = recordingLogger({ level: 'debug' });
    node = await startTestNode(text, join(temp.dir, 'state.db'), {
      logger: nodeLog.logger,
      mqtt: { connection: FAST_RECONNECT },
    });
    releases.push(() => node.stop());
    // The manual clock runs the loop's first cycles (and so its first state).
    await node.clock.advance(60_000);
    ha = await watcher(broker.url, 'homeassistant', [`${BASE}/#`, DISCOVERY]);
    releases.push(() => ha.client.endAsync(true));
    guest = await watcher(broker.url, 'guest', [`${BASE}/#`]);
    releases.push(() => guest.client.endAsync(true));
    // Commands reach the daemon once its subscriptions are in place: discovery comes after them.
    await waitUntil(() => ha.on(DISCOVERY).length > 0, { what: `the node's discovery on ${DISCOVERY}` });
  });

  after(async () => {
    for (const release of releases.reverse()) await release();
  });

  test("docs/home-assistant.md's ACL example is the recipe's, word for word", () => {
    const readme = codeBlockAfter(
      docSection('docs/home-assistant.md', '## Who may command'),
      'A Mosquitto example',
    );
    assert.equal(readme, ACL);
    assert.match(ACL, /^user homeassistant$/m, 'the block read is the ACL');
  });

  test("step 4's mqtt block names user homeostat and step 1's password file", () => {
    const block = (YAML.parse(MQTT_BLOCK) as { mqtt: Record<string, unknown> }).mqtt;
    assert.equal(block.username, 'homeostat');
    assert.equal(block.passwordFile, '/etc/homeostat/mqtt-password');
    assert.match(RECIPE, /mosquitto_passwd -c \/etc\/mosquitto\/passwd homeostat\n/);
    assert.match(SETTINGS, /^allow_anonymous false$/m);
  });

  test('given the node on the recipe, then it is connected and its retained state reaches homeassistant and guest', async () => {
    await waitUntil(() => ha.on(STATE).length > 0 && guest.on(STATE).length > 0, { what: 'the room state' });
    const state = JSON.parse(ha.on(STATE).at(-1)!) as StatePayload;
    assert.equal(state.setpoint, FILE_SETPOINT);
    // Retained: a client connecting now gets it at once.
    const late = await watcher(broker.url, 'guest', [STATE]);
    try {
      await waitUntil(() => late.on(STATE).length > 0, { what: 'the retained room state', timeoutMs: 2_000 });
    } finally {
      await late.client.endAsync(true);
    }
    assert.equal(ha.on(`${BASE}/availability`).at(-1), 'online');
    // The ACL lets the daemon subscribe to all it needs (commands, Home Assistant's birth, the fleet).
    const refusals = nodeLog.records.filter((r) => r.level >= LogLevel.warn);
    assert.deepEqual(refusals, [], 'no warning: no refused subscription or publish');
  });

  test("given guest's setpoint sent before homeassistant's, then only homeassistant's reaches the daemon and the loop follows it", async () => {
    const resultsBefore = ha.on(RESULT).length;
    const command = (setpoint: number, requestId: string) => JSON.stringify({ setpoint, requestId });
    // QoS 1: once the broker has acknowledged guest's publish, it has handled it; had the ACL let it
    // through, the daemon would get it (one connection, in order) before homeassistant's.
    await guest.client.publishAsync(`${BASE}/room/set`, command(GUEST_SETPOINT, 'guest-1'), { qos: 1 });
    await guest.client.publishAsync(`${BASE}/room/setpoint/set`, String(GUEST_SETPOINT), { qos: 1 });
    await ha.client.publishAsync(`${BASE}/room/set`, command(HA_SETPOINT, 'ha-1'), { qos: 1 });
    await waitUntil(() => ha.on(RESULT).length > resultsBefore, {
      what: "the result of homeassistant's command",
    });
    // A little longer: a late result of guest's command would show here.
    await sleep(300);

    const results = ha
      .on(RESULT)
      .slice(resultsBefore)
      .map((r) => JSON.parse(r) as ResultPayload);
    assert.deepEqual(
      results.map((r) => [r.requestId, r.accepted, r.change?.setpoint]),
      [['ha-1', true, HA_SETPOINT]],
    );
    await node.clock.advance(60_000);
    assert.equal(room(node).setpoint, HA_SETPOINT, 'the loop runs at the new setpoint');
    const desired = node.store.desired.desired('room');
    assert.deepEqual([desired?.setpoint, desired?.setpointSource], [HA_SETPOINT, 'mqtt']);
    // guest reads the outcome all the same.
    await waitUntil(
      () => guest.on(STATE).some((s) => (JSON.parse(s) as StatePayload).setpoint === HA_SETPOINT),
      { what: 'guest reading the new setpoint' },
    );
  });

  test('given no user name, then the broker refuses the connection', async () => {
    await assert.rejects(mqtt.connectAsync(broker.url, { reconnectPeriod: 0 }), /not authori[sz]ed/i);
  });

  test('given homeostat with a wrong password, then the broker refuses it, the log says so and the node regulates on', async () => {
    const passwordFile = join(temp.dir, 'wrong-password');
    writeFileSync(passwordFile, `${password()}\n`, { mode: 0o600 });
    const { logger, records } = recordingLogger({ level: 'debug' });
    const text = minimalSimConfigText({
      nodeId: 'pi2',
      extra: YAML.stringify({ mqtt: mqttBlock(broker.url, passwordFile) }),
    });
    const other = await startTestNode(text, join(temp.dir, 'wrong.db'), {
      logger,
      mqtt: { connection: FAST_RECONNECT },
    });
    try {
      const refusal = await waitUntil(
        () => records.find((r) => r.level === LogLevel.warn && /refused the connection/.test(r.msg)),
        { what: 'the refusal in the log' },
      );
      assert.match(refusal.msg, /Not authori[sz]ed/i);
      assert.match(refusal.msg, /check mqtt\.username, the password in mqtt\.passwordFile/);
      assert.ok(!JSON.stringify(records).includes(USERS.homeostat), 'no password in the log');

      await other.clock.advance(60_000);
      const before = room(other);
      await other.clock.advance(5 * 60_000);
      const now = room(other);
      assert.ok(now.updatedAtMs > before.updatedAtMs, 'the loop ran its cycles without the broker');
      assert.equal(now.conditions.find((c) => c.type === 'SensorHealthy')?.status, 'True');
      assert.equal(ha.on('homeostat/pi2/room/state').length, 0, 'nothing of pi2 on the broker');
    } finally {
      await other.stop();
    }
  });
});
