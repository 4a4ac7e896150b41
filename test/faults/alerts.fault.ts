import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { AlertNotice } from '../../src/alerts/notice.js';
import { startFakeService } from '../alerts/fake-services.js';
import { freePort } from '../support/net.js';
import { BASE, faultConfigText } from './support/config.js';
import { measureFrom, rssOf, startProbedDaemon } from './support/daemon.js';
import { reportFigures } from './support/figures.js';
import type { Received } from './support/mqtt.js';
import { bridgeReady, openScenario } from './support/scenario.js';

/**
 * The fault case "alerts while the receiver is down, then a kill": the demo's room reads a
 * Zigbee2MQTT probe (played by the test's client) and alerts on a webhook whose receiver is not
 * running. Given the heater on, when the probe reports `null` (a value that is not a number),
 * then the heater is off at once, the journal has the fault at warning at once, and after
 * faultedForS the alert is published on MQTT `<base>/alerts`; when the probe reports again, the
 * resolution follows on MQTT. The webhook's two wait in the outbox (failing, retried) and the
 * daemon is killed with SIGKILL. When the receiver is up and the daemon restarted on the same
 * database, then the receiver gets both, once each, in order, with the ids MQTT carried.
 */

const DEVICE = 'zigbee2mqtt/room_probe';
const ALERTS_TOPIC = `${BASE}/alerts`;
const FAULTED_FOR_S = 2;

const report = (temperature: number | null) =>
  JSON.stringify({ battery: 100, linkquality: 116, temperature });
const noticeOf = (message: Received) => JSON.parse(message.payload.toString('utf8')) as AlertNotice;

/** The webhook rows the database holds undelivered (read from outside, read-only). */
function undeliveredRows(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const row = db
      .prepare("SELECT count(*) AS n FROM alert_outbox WHERE channel = 'hook' AND delivered_at_ms IS NULL")
      .get() as { n: number };
    return row.n;
  } finally {
    db.close();
  }
}

describe('alerts', () => {
  test('a probe reads null while the webhook receiver is down: alert and resolution on MQTT; SIGKILL with both undelivered; after the restart the receiver gets both, once, in order', {
    timeout: 120_000,
  }, async (t) => {
    const { res, v, broker, client, dir, configPath, dbPath } = await openScenario(
      t,
      'homeostat-fault-alerts-',
    );
    const port = await freePort();
    writeFileSync(
      configPath,
      faultConfigText({
        brokerUrl: broker.url,
        edit: (doc) => {
          doc.setIn(['sensors', 'room_probe'], {
            kind: 'mqtt',
            topic: DEVICE,
            field: 'temperature',
            periodS: 5,
          });
          doc.setIn(['loops', 'room', 'sensor'], 'room_probe');
          doc.deleteIn(['sensors', 'room_temp']);
          doc.setIn(['actuators', 'room_heater', 'minOnS'], 0);
          doc.setIn(['actuators', 'room_heater', 'minOffS'], 0);
          doc.set('alerts', {
            channels: { hook: { type: 'webhook', url: `http://127.0.0.1:${port}/alerts` } },
            rules: { faultedForS: FAULTED_FOR_S },
          });
        },
      }),
    );
    // Given the daemon regulating the room on the probe, the heater on
    let daemon = startProbedDaemon({ configPath, dbPath, speed: 1, dir, name: 'first' });
    res.daemon(daemon.run);
    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    await bridgeReady(client, ['room']);
    await client.publish(DEVICE, report(15.2));
    await daemon.run.waitForLine(/^room_heater → ON/, 15_000);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);
    const measured = await measureFrom(daemon);

    // When the probe reports null
    const faultAtMs = Date.now();
    await client.publish(DEVICE, report(null));
    const off = await daemon.run.waitForLine(
      (l) => /^room_heater → OFF/.test(l.msg) && l.time >= faultAtMs,
      15_000,
    );
    const warned = await daemon.run.waitForLine(
      (l) => l.msg.startsWith('room: fault: ') && l.time >= faultAtMs,
      5_000,
    );
    v.check('the journal has the fault at warning at once', () => assert.equal(warned.level, 40));
    // Then the alert is on MQTT after faultedForS
    const raised = await client.first(
      (m) => m.topic === ALERTS_TOPIC && noticeOf(m).phase === 'raised',
      15_000,
      'the raised alert on MQTT',
    );
    const raisedAfterMs = raised.atMs - faultAtMs;
    // Raised by the monitor's timer, not at the probe's next cycle (5 s later): at most 2 s late.
    v.check(`raised on MQTT after faultedForS (${FAULTED_FOR_S} s), at most 2 s after it`, () =>
      assert.ok(
        raisedAfterMs >= FAULTED_FOR_S * 1000 - 100 && raisedAfterMs <= FAULTED_FOR_S * 1000 + 2_000,
        `${raisedAfterMs} ms`,
      ),
    );
    v.check('not retained', () => assert.equal(raised.retain, false));

    // When the probe reports again, then the resolution follows on MQTT
    const backAtMs = Date.now();
    await client.publish(DEVICE, report(15.4));
    const resolved = await client.first(
      (m) => m.topic === ALERTS_TOPIC && noticeOf(m).phase === 'resolved',
      15_000,
      'the resolution on MQTT',
    );
    v.check('the resolution names the same streak', () =>
      assert.equal(noticeOf(resolved).streakId, noticeOf(raised).streakId),
    );
    const failing = await daemon.run.waitForLine(/^alert channel hook: delivery failed/, 15_000);
    v.check('the failing receiver is logged at warning', () => assert.equal(failing.level, 40));

    // When the daemon is killed with both webhook alerts undelivered
    await daemon.run.kill('SIGKILL');
    const waiting = undeliveredRows(dbPath);
    v.check('two alerts wait in the outbox after the kill', () => assert.equal(waiting, 2));

    // Then, the receiver up and the daemon restarted, the receiver gets both, once, in order
    const receiver = await startFakeService('', port);
    res.add(() => receiver.close());
    const restartedAtMs = Date.now();
    daemon = startProbedDaemon({ configPath, dbPath, speed: 1, dir, name: 'second' });
    res.daemon(daemon.run);
    await receiver.received(2);
    const deliveredAfterMs = Date.now() - restartedAtMs;
    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    const got = receiver.requests.map((r) => JSON.parse(r.body) as AlertNotice);
    v.check('both, in order, with the ids MQTT carried', () =>
      assert.deepEqual(
        got.map((n) => n.id),
        [noticeOf(raised).id, noticeOf(resolved).id],
      ),
    );
    v.check('each with its id in X-Homeostat-Alert-Id', () =>
      assert.deepEqual(
        receiver.requests.map((r) => r.headers['x-homeostat-alert-id']),
        got.map((n) => n.id),
      ),
    );
    // The receiver answers before the daemon marks the row: wait for the mark.
    await v.checkAsync('nothing left in the outbox', async () => {
      for (let tries = 0; tries < 200 && undeliveredRows(dbPath) > 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(undeliveredRows(dbPath), 0);
    });
    reportFigures(t, {
      scenario: 'alerts: receiver down, SIGKILL',
      timeToSafeMs: off.time - faultAtMs,
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: `heater off ${off.time - faultAtMs} ms after null; warning ${warned.time - faultAtMs} ms after; MQTT alert ${raisedAfterMs} ms after (faultedForS ${FAULTED_FOR_S} s), resolution ${resolved.atMs - backAtMs} ms after the next report; 2 webhook alerts waited through SIGKILL, delivered in order ${deliveredAfterMs} ms after the restart`,
    });
    v.settle();
  });
});
