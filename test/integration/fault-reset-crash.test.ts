/**
 * A fault reset is desired state ("every safety action on one path"): once a reset is
 * answered, a crash cannot bring the latch back while the event log and Home Assistant say it
 * was reset. The latch comes from the room heater of the demo barely heating (as in
 * test/daemon-latch.test.ts); memory is flushed every 600 s (the default), so only a reset
 * committed when it is answered survives a kill right after it.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import mqtt from 'mqtt';
import YAML from 'yaml';
import type { Daemon } from '../../src/daemon/daemon.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { startStoreDaemon } from '../support/node.js';
import { DEMO_CONFIG_PATH, killAll, makeTempDir, startDaemon, waitUntil, withReadOnlyDb } from './helpers.js';
import { startMosquitto } from './mosquitto.js';

/** The demo with an ineffective room heater that the room loop watches. */
function latchingConfigText(mqttUrl?: string): string {
  const text = readFileSync(DEMO_CONFIG_PATH, 'utf8')
    .replace('gain: 20 # a heater raises: positive', 'gain: 0.05')
    .replace(
      '    raise: room_heater # only a heater, so the modes are off and heat\n',
      (line) => `${line}    effectWatch: { periodS: 600, minChange: 1 }\n`,
    );
  if (mqttUrl !== undefined) return text.replace('url: mqtt://127.0.0.1:1883', `url: ${mqttUrl}`);
  // No broker: never the shared one on 1883, where another test's demo has the same node id.
  const doc = YAML.parseDocument(text);
  doc.delete('mqtt');
  return doc.toString();
}

after(killAll);

const faulted = (daemon: Daemon) =>
  daemon
    .statuses()
    .find((s) => s.loop === 'room')
    ?.conditions.find((c) => c.type === 'Faulted');

test('given a latched fault, when it is reset and the process dies at once (no cycle, no flush), then after a restart the latch stays cleared', async (t) => {
  const temp = makeTempDir('homeostat-reset-crash-');
  t.after(temp.remove);
  const dbPath = join(temp.dir, 'state.db');
  const text = latchingConfigText();
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let run = await startStoreDaemon(text, dbPath, clock);
  await clock.advance(15 * 60_000);
  assert.equal(faulted(run.daemon)?.reason, 'LatchedHeatingIneffective', 'latched');

  // A person resets it, and the process is killed before anything else happens: the manual
  // clock does not move, so no cycle runs and nothing batched is flushed.
  assert.equal(run.daemon.requestFaultReset('room', 'test', clock.nowMs()).accepted, true);
  run.db.close();

  const restarted = new ManualClock(clock.nowMs() + 5_000);
  run = await startStoreDaemon(text, dbPath, restarted);
  await restarted.advance(1_000);
  assert.equal(
    faulted(run.daemon)?.status,
    'False',
    'the reset was committed when it was answered: the latch does not come back after a crash',
  );
  await restarted.advance(2 * 60_000);
  assert.equal(await run.daemon.drivers.actuators.get('room_heater')?.observe(), 1, 'heating again');
  assert.equal(
    run.store.desired.events({ loop: 'room' }).filter((e) => e.kind === 'fault-reset').length,
    1,
    'the event log says reset once, and the loop agrees',
  );
  assert.equal(
    run.daemon.requestFaultReset('room', 'test', restarted.nowMs()).accepted,
    false,
    'nothing latched any more',
  );
  await run.daemon.stop();
  run.db.close();
});

interface Result {
  loop: string;
  accepted: boolean;
  reason?: string;
  generation?: number;
}

interface State {
  generation: number;
  observedGeneration: number;
  conditions: { type: string; status: string; reason: string }[];
}

test('given a latched fault, when Home Assistant resets it over MQTT and the daemon is killed with SIGKILL as soon as it answers, then after a restart the latch stays cleared and a second reset is refused', async (t) => {
  const broker = await startMosquitto();
  t.after(() => broker.dispose());
  const temp = makeTempDir('homeostat-reset-kill-');
  t.after(temp.remove);
  const configPath = join(temp.dir, 'homeostat.yaml');
  const dbPath = join(temp.dir, 'state.db');
  writeFileSync(configPath, latchingConfigText(broker.url));

  const client = await mqtt.connectAsync(broker.url, { clientId: 'fault-reset-test', clean: true });
  t.after(() => client.endAsync(true));
  const results: Result[] = [];
  const liveStates: State[] = [];
  client.on('message', (topic, payload, packet) => {
    if (topic.endsWith('/room/result')) results.push(JSON.parse(payload.toString()) as Result);
    // Live publishes only: a retained state may be the killed process's last word.
    else if (topic.endsWith('/room/state') && !packet.retain && payload.length > 0)
      liveStates.push(JSON.parse(payload.toString()) as State);
  });
  await client.subscribeAsync(['homeostat/demo/room/result', 'homeostat/demo/room/state'], { qos: 1 });
  const roomFaulted = (state: State | undefined) => state?.conditions.find((c) => c.type === 'Faulted');

  // Given the room loop latched (10 simulated minutes of heating without effect) …
  const speed = 120;
  let daemon = startDaemon({ configPath, dbPath, speed });
  await daemon.waitForLine(/^homeostat regulating/);
  const latched = await waitUntil(
    () => liveStates.findLast((s) => roomFaulted(s)?.reason === 'LatchedHeatingIneffective'),
    { what: 'the room loop to latch', timeoutMs: 60_000 },
  );

  // … when the reset is answered, the daemon is killed at once.
  const killed = new Promise<Result>((resolve) => {
    client.on('message', (topic, payload) => {
      if (!topic.endsWith('/room/result')) return;
      void daemon.kill('SIGKILL');
      resolve(JSON.parse(payload.toString()) as Result);
    });
  });
  await client.publishAsync('homeostat/demo/room/fault/reset', '', { qos: 1, retain: false });
  const answer = await killed;
  const exit = await daemon.exited;
  assert.equal(exit.signal, 'SIGKILL', `killed, not exited on its own:\n${daemon.output}`);
  assert.equal(answer.accepted, true, JSON.stringify(answer));
  assert.ok(
    (answer.generation ?? 0) > latched.generation,
    `the reset is desired state with its own generation (${answer.generation} after ${latched.generation})`,
  );
  // Then, restarted on the same file, the loop comes up reset …
  liveStates.length = 0;
  results.length = 0;
  daemon = startDaemon({ configPath, dbPath, speed });
  await daemon.waitForLine(/^homeostat regulating/);
  const first = await waitUntil(() => liveStates.find((s) => roomFaulted(s) !== undefined), {
    what: 'a live state of the restarted room loop',
    timeoutMs: 20_000,
  });
  assert.equal(roomFaulted(first)?.status, 'False', `no latch after the restart: ${JSON.stringify(first)}`);

  // … a second reset is refused (nothing is latched) …
  await client.publishAsync('homeostat/demo/room/fault/reset', '', { qos: 1, retain: false });
  const refused = await waitUntil(() => results[0], { what: 'the second reset result', timeoutMs: 10_000 });
  assert.equal(refused.accepted, false, JSON.stringify(refused));
  assert.match(refused.reason ?? '', /nothing to reset/);

  // … and the event log says reset once.
  await daemon.kill('SIGTERM');
  const resets = withReadOnlyDb(
    dbPath,
    (db) =>
      db.prepare("SELECT COUNT(*) AS n FROM events WHERE kind = 'fault-reset' AND loop = 'room'").get() as {
        n: number;
      },
  );
  assert.equal(resets.n, 1);
});
