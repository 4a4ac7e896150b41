import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { sleep } from '../integration/helpers.js';
import { BASE, faultConfigText, LOOPS, stateTopic } from './support/config.js';
import { measureFrom, rssOf, startProbedDaemon } from './support/daemon.js';
import { historyRowsBetween, lastEventId } from './support/db.js';
import { reportFigures } from './support/figures.js';
import { condition } from './support/mqtt.js';
import { bridgeReady, openScenario } from './support/scenario.js';

/**
 * The broker outages: the private Mosquitto is stopped and started again (it forgets
 * every retained message: persistence is off). Regulation never depends on it — the simulated
 * loops go on switching — and a loop whose thermometer is an MQTT sensor goes to its safe state
 * once its reading is stale. When the broker is back, the daemon republishes availability and
 * every loop's state by itself. `homeostat run` (real time) on the demo, as a child process.
 */

/** Real time: --speed needs every driver simulated, and the room reads an MQTT sensor. */
const SPEED = 1;
const ROOM_TOPIC = 'test/room/temperature';
/** Outages, wall-clock seconds: a short one, and one long enough for the reconnect backoff to grow. */
const OUTAGES_S = [3, 12];
/** The reconnect backoff tops out at 60 s (MqttConnection's default): republish within that and some. */
const REPUBLISH_BOUND_MS = 70_000;
/** Stale after 2 s and a cycle: the heater is off well within this. */
const SAFE_BOUND_MS = 5_000;

describe('broker outages', () => {
  test(`the broker stopped for ${OUTAGES_S.join(' s and ')} s: regulation continues, the MQTT-sensor loop goes safe, state is republished on reconnect`, {
    timeout: 240_000,
  }, async (t) => {
    const { res, v, broker, client, dir, configPath, dbPath } = await openScenario(
      t,
      'homeostat-fault-broker-',
    );
    writeFileSync(
      configPath,
      faultConfigText({
        brokerUrl: broker.url,
        edit: (doc) => {
          // The room's thermometer publishes over MQTT: without the broker its reading goes stale.
          doc.setIn(['sensors', 'room_mqtt'], {
            kind: 'mqtt',
            topic: ROOM_TOPIC,
            periodS: 1,
            staleAfterS: 2,
          });
          doc.setIn(['loops', 'room', 'sensor'], 'room_mqtt');
          doc.deleteIn(['sensors', 'room_temp']);
          doc.setIn(['actuators', 'room_heater', 'minOffS'], 0);
          // Every simulated sensor read every second, so the other loops cycle (and record
          // history, flushed every second) through the outage.
          for (const sensor of ['greenhouse_rh', 'chamber_temp'])
            doc.setIn(['sensors', sensor, 'periodS'], 1);
        },
      }),
    );
    const daemon = startProbedDaemon({ configPath, dbPath, speed: SPEED, dir });
    res.daemon(daemon.run);
    const feeder = setInterval(
      () => void client.publish(ROOM_TOPIC, '15', { qos: 0 }).catch(() => undefined),
      100,
    );
    res.add(() => clearInterval(feeder));
    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    await bridgeReady(client, LOOPS);
    await daemon.run.waitForLine(/^room_heater → ON/, 15_000);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);
    const eventsBefore = lastEventId(dbPath);

    const outcomes: string[] = [];
    let worstSafeMs: number | undefined = 0;
    let worstRepublishMs: number | undefined = 0;
    const measured = await measureFrom(daemon);
    for (const outageS of OUTAGES_S) {
      // When the broker goes away
      const heaterOnBefore = daemon.run.lines.length;
      const stoppedAtMs = Date.now();
      await broker.stop();
      await sleep(outageS * 1000);
      const restartAtMs = Date.now();

      // Then the other loops kept cycling (their history grew), and the MQTT-sensor loop's heater went off
      await sleep(1_500); // a flush
      const cycled = historyRowsBetween(dbPath, stoppedAtMs + 500, restartAtMs, 'room');
      const off = daemon.run.lines.slice(heaterOnBefore).find((l) => /^room_heater → OFF/.test(l.msg));
      const safeMs = off ? off.time - stoppedAtMs : undefined;
      worstSafeMs =
        safeMs === undefined || worstSafeMs === undefined ? undefined : Math.max(worstSafeMs, safeMs);
      v.check(`${outageS} s outage: other loops regulate`, () => assert.ok(cycled > 0, 'no history rows'));
      v.check(`${outageS} s outage: room heater safe within ${SAFE_BOUND_MS} ms`, () =>
        assert.ok(safeMs !== undefined && safeMs <= SAFE_BOUND_MS, `${safeMs ?? 'never'}`),
      );

      // When it is back (empty: no retained messages), the daemon republishes by itself
      await broker.start();
      const startedAtMs = Date.now();
      let republishMs: number | undefined;
      await v.checkAsync(`${outageS} s outage: availability and every state republished`, async () => {
        await client.first(
          (m) =>
            m.topic === `${BASE}/availability` && m.atMs >= startedAtMs && m.payload.toString() === 'online',
          REPUBLISH_BOUND_MS,
          'availability online',
        );
        const states = await Promise.all(
          LOOPS.map((loop) =>
            client.state(stateTopic(loop), () => true, {
              sinceMs: startedAtMs,
              timeoutMs: REPUBLISH_BOUND_MS,
            }),
          ),
        );
        republishMs = Math.max(...states.map((s) => s.atMs)) - startedAtMs;
      });
      worstRepublishMs =
        republishMs === undefined || worstRepublishMs === undefined
          ? undefined
          : Math.max(worstRepublishMs, republishMs);
      // And the room regulates again once its readings flow
      await v.checkAsync(`${outageS} s outage: room heater on again`, () =>
        client.state(stateTopic('room'), (s) => condition(s, 'SensorHealthy')?.status === 'True', {
          sinceMs: startedAtMs,
          timeoutMs: 15_000,
        }),
      );
      // Switched on again before the next outage: else that outage has no heater to turn off.
      await v.checkAsync(`${outageS} s outage: room heater switched on again`, () =>
        daemon.run.waitForLine((l) => /^room_heater → ON/.test(l.msg) && l.time >= startedAtMs, 30_000),
      );
      outcomes.push(
        `${outageS} s: ${cycled} history rows by other loops, heater off after ${safeMs ?? 'never'} ms, republished ${republishMs ?? 'never'} ms after the broker was back`,
      );
    }
    v.check('the daemon runs', () => assert.equal(daemon.run.exitStatus, undefined));
    reportFigures(t, {
      scenario: `broker outages ${OUTAGES_S.join(' s, ')} s`,
      timeToSafeMs: worstSafeMs,
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      rowsWritten: lastEventId(dbPath) - eventsBefore,
      notes: `${outcomes.join('; ')}; worst republish ${worstRepublishMs ?? 'never'} ms`,
    });
    v.settle();
  });
});
