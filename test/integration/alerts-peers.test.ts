/**
 * Peer watch with two daemons on one broker (a private Mosquitto): node `shed` watches node
 * `cellar` through its availability. When cellar is killed with SIGKILL, the broker publishes its
 * last will, and shed tells it on `<base>/shed/alerts` after offlineForS; when cellar runs again,
 * the resolution follows. The one failure a node cannot report itself, told by another.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import mqtt from 'mqtt';
import type { AlertNotice } from '../../src/alerts/notice.js';
import { tempDir } from '../support/tmp.js';
import { type CliProcess, demoConfigText, startDaemon } from './helpers.js';
import { brokerFor } from './mosquitto.js';

const OFFLINE_FOR_S = 2;

function nodeConfig(dir: string, id: string, brokerUrl: string, watch?: string): string {
  const file = path.join(dir, `${id}.yaml`);
  writeFileSync(
    file,
    demoConfigText((doc) => {
      doc.setIn(['node', 'id'], id);
      doc.setIn(['mqtt', 'url'], brokerUrl);
      if (watch) doc.set('alerts', { peers: { nodes: [watch], offlineForS: OFFLINE_FOR_S } });
    }),
  );
  return file;
}

test('given shed watching cellar, when cellar is killed, then shed alerts after offlineForS, and resolves when cellar is back', {
  timeout: 90_000,
}, async (t) => {
  const broker = await brokerFor(t);
  const dir = tempDir(t);
  const alerts: Array<{ notice: AlertNotice; atMs: number; retain: boolean }> = [];
  const client = await mqtt.connectAsync(broker.url, { clientId: 'peer-watch-test', clean: true });
  t.after(() => client.endAsync());
  client.on('message', (topic, payload, packet) => {
    if (topic === 'homeostat/shed/alerts') {
      alerts.push({
        notice: JSON.parse(payload.toString()) as AlertNotice,
        atMs: Date.now(),
        retain: packet.retain,
      });
    }
  });
  await client.subscribeAsync('homeostat/+/alerts', { qos: 1 });
  const running: CliProcess[] = [];
  t.after(() => Promise.all(running.map((run) => run.kill('SIGKILL'))).then(() => undefined));
  const start = (id: string, watch?: string) => {
    const run = startDaemon({
      configPath: nodeConfig(dir, id, broker.url, watch),
      dbPath: path.join(dir, `${id}.db`),
      // Real time: a peer's availability is not simulated.
      speed: 1,
    });
    running.push(run);
    return run;
  };
  const waitForAlert = async (phase: string) => {
    for (let i = 0; i < 400; i++) {
      const found = alerts.find((a) => a.notice.phase === phase);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`no ${phase} alert from shed; got ${JSON.stringify(alerts.map((a) => a.notice))}`);
  };

  // Given both running, cellar seen online by shed
  const cellar = start('cellar');
  await cellar.waitForLine(/^MQTT connected/, 30_000);
  const shed = start('shed', 'cellar');
  await shed.waitForLine(/^homeostat regulating/, 30_000);
  await shed.waitForLine(/^alerts\.peers: cellar is online$/, 30_000);

  // When cellar is killed
  const killedAtMs = Date.now();
  await cellar.kill('SIGKILL');
  const raised = await waitForAlert('raised');
  assert.equal(raised.notice.kind, 'peer');
  assert.equal(raised.notice.title, 'cellar: node offline');
  assert.match(raised.notice.message, /^offline: it stopped, died, lost power or its network/);
  assert.equal(raised.retain, false);
  const startedAtMs = Number(raised.notice.streakId?.split('/').at(-1));
  assert.ok(
    startedAtMs >= killedAtMs - 1_000,
    'the streak began with the kill, not at the start (cellar was seen online)',
  );
  const afterMs = raised.atMs - killedAtMs;
  assert.ok(afterMs >= OFFLINE_FOR_S * 1000 - 100, `told ${afterMs} ms after the kill, before offlineForS`);
  t.diagnostic(`peer alert ${afterMs} ms after SIGKILL (offlineForS ${OFFLINE_FOR_S} s)`);

  // When cellar runs again, then the resolution follows
  start('cellar');
  const resolved = await waitForAlert('resolved');
  assert.equal(resolved.notice.streakId, raised.notice.streakId);
  assert.equal(alerts.filter((a) => a.notice.phase === 'raised').length, 1, 'once per streak');
});
