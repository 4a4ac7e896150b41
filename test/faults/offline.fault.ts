import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { DEFAULT_MAX_QUIET_S } from '../../src/kinds/sensors/mqtt-liveness.js';
import type { LogLine } from '../integration/helpers.js';
import { faultConfigText, stateTopic } from './support/config.js';
import { measureFrom, rssOf, startProbedDaemon } from './support/daemon.js';
import { lastEventId } from './support/db.js';
import { reportFigures } from './support/figures.js';
import { condition, type StatePayload } from './support/mqtt.js';
import { bridgeReady, openScenario } from './support/scenario.js';

/**
 * The fault case "MQTT probe offline while heating": the demo's room reads its temperature from a
 * Zigbee probe through Zigbee2MQTT (an `mqtt` sensor with the zigbee2mqtt liveness preset),
 * played by the test's client exactly as Zigbee2MQTT publishes a Sonoff SNZB-02: its state as
 * JSON on `zigbee2mqtt/room_probe` (`{"battery":100,"humidity":52.4,"linkquality":116,
 * "temperature":15.2,"voltage":3100}`, zigbee2mqtt.io devices/SNZB-02.html), not retained, and
 * its availability retained on `zigbee2mqtt/room_probe/availability` (`{"state":"online"}` /
 * `{"state":"offline"}`, zigbee2mqtt.io guide/configuration/device-availability).
 *
 * Given the probe reported a cold room once and is online, the heater is ON, and stays ON past
 * staleAfterS while the probe is quiet (SensorHealthy True, Quiet). When Zigbee2MQTT says the
 * probe is offline, the heater is OFF within one sampling period (the offline message makes the
 * loop run at once) and SensorHealthy is False, Offline, saying so. Online again without a new
 * value, the old value does not count (what happened while it was away went unreported): still
 * safe, Stale. A new value: heating again. `homeostat run` (real time: the probe is not
 * simulated) on the demo, as a child process.
 */

const DEVICE = 'zigbee2mqtt/room_probe';
const AVAILABILITY = `${DEVICE}/availability`;
/** The probe's sampling period, s: one cycle of the room loop when nothing else triggers it. */
const PERIOD_S = 5;
/** Without liveness the room would go safe this long after the probe's last report, s. */
const STALE_AFTER_S = 15;
/** Offline → heater off within one cycle. */
const SAFE_BOUND_MS = PERIOD_S * 1000;

/** A Sonoff SNZB-02 report through Zigbee2MQTT (see above); the room is cold (setpoint 20). */
const report = (temperatureC: number) =>
  JSON.stringify({
    battery: 100,
    humidity: 52.4,
    linkquality: 116,
    temperature: temperatureC,
    voltage: 3100,
  });

const sensorHealthy = (state: StatePayload | undefined) => condition(state, 'SensorHealthy');

describe('MQTT probe offline while heating', () => {
  test('a Zigbee2MQTT probe goes offline while the heater is on: heater off within one cycle, SensorHealthy says Offline; back online and reporting, it heats again', {
    timeout: 120_000,
  }, async (t) => {
    const { res, v, broker, client, dir, configPath, dbPath } = await openScenario(
      t,
      'homeostat-fault-offline-',
    );
    writeFileSync(
      configPath,
      faultConfigText({
        brokerUrl: broker.url,
        edit: (doc) => {
          doc.setIn(['sensors', 'room_probe'], {
            kind: 'mqtt',
            topic: DEVICE,
            field: 'temperature',
            periodS: PERIOD_S,
            staleAfterS: STALE_AFTER_S,
            liveness: { preset: 'zigbee2mqtt', device: DEVICE },
          });
          doc.setIn(['loops', 'room', 'sensor'], 'room_probe');
          doc.deleteIn(['sensors', 'room_temp']);
          doc.setIn(['actuators', 'room_heater', 'minOnS'], 0);
          doc.setIn(['actuators', 'room_heater', 'minOffS'], 0);
        },
      }),
    );
    // Given the probe online (retained, as Zigbee2MQTT keeps it) and the daemon regulating
    await client.publish(AVAILABILITY, '{"state":"online"}', { qos: 1, retain: true });
    const daemon = startProbedDaemon({ configPath, dbPath, speed: 1, dir });
    res.daemon(daemon.run);
    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    await bridgeReady(client, ['room']);

    // When the probe reports a cold room once, then the heater goes ON
    const reportedAtMs = Date.now();
    await client.publish(DEVICE, report(15.2));
    await daemon.run.waitForLine(/^room_heater → ON/, 15_000);

    // …and stays ON while the probe is quiet past staleAfterS, kept in force by its liveness
    await v.checkAsync(
      `quiet past ${STALE_AFTER_S} s: SensorHealthy True, Quiet, heater still on`,
      async () => {
        const { state } = await client.state(
          stateTopic('room'),
          (s) => sensorHealthy(s)?.reason === 'Quiet',
          {
            sinceMs: reportedAtMs,
            timeoutMs: (STALE_AFTER_S + 2 * PERIOD_S) * 1000,
            what: 'room SensorHealthy Quiet',
          },
        );
        assert.equal(sensorHealthy(state)?.status, 'True');
        assert.match(
          sensorHealthy(state)?.message ?? '',
          new RegExp(
            `^quiet: unchanged for \\d+ s, device seen 0 s ago \\(limit ${DEFAULT_MAX_QUIET_S / 60} min\\)$`,
          ),
        );
        const off = daemon.run.filter((l) => /^room_heater → OFF/.test(l.msg) && l.time >= reportedAtMs);
        assert.deepEqual(off, [], 'the heater went off while the probe was quiet and online');
      },
    );
    const rssBeforeBytes = rssOf(daemon.run.child.pid);
    const eventsBefore = lastEventId(dbPath);
    const measured = await measureFrom(daemon);

    // When Zigbee2MQTT says the probe is offline
    const offlineAtMs = Date.now();
    await client.publish(AVAILABILITY, '{"state":"offline"}', { qos: 1, retain: true });

    // Then the heater is OFF within one cycle
    const off = await daemon.run
      .waitForLine((l: LogLine) => /^room_heater → OFF/.test(l.msg) && l.time >= offlineAtMs, 15_000)
      .catch(() => undefined);
    const safeMs = off ? off.time - offlineAtMs : undefined;
    v.check(`offline: room heater off within one cycle (${SAFE_BOUND_MS} ms)`, () =>
      assert.ok(safeMs !== undefined && safeMs <= SAFE_BOUND_MS, `${safeMs ?? 'never'}`),
    );

    // …and SensorHealthy is False, Offline, saying which topic said so
    let offlineMessage: string | undefined;
    await v.checkAsync('offline: SensorHealthy False, Offline, saying so', async () => {
      const { state } = await client.state(
        stateTopic('room'),
        (s) => sensorHealthy(s)?.reason === 'Offline',
        {
          sinceMs: offlineAtMs,
          timeoutMs: 5_000,
          what: 'room SensorHealthy Offline',
        },
      );
      offlineMessage = sensorHealthy(state)?.message;
      assert.equal(sensorHealthy(state)?.status, 'False');
      const said = /^device offline for (\d+) s \(availability zigbee2mqtt\/room_probe\/availability\)$/.exec(
        offlineMessage ?? '',
      );
      assert.ok(said, offlineMessage);
      assert.ok(Number(said[1]) <= PERIOD_S, `offline for ${said[1]} s in the first state after it`);
      const actuators = state.actuators as Record<string, { wanted?: number }> | undefined;
      assert.equal(actuators?.room_heater?.wanted, 0);
    });

    // When it is back online without a new value, then the value from before does not count:
    // still safe. (The status may go on saying "device offline" until the next value: the
    // sampler keeps the offline reading while the driver refuses the old value as stale.)
    const onlineAtMs = Date.now();
    await client.publish(AVAILABILITY, '{"state":"online"}', { qos: 1, retain: true });
    let onlineReason: string | undefined;
    await v.checkAsync('online, no new value: still safe, SensorHealthy False', async () => {
      const { state } = await client.state(stateTopic('room'), () => true, {
        sinceMs: onlineAtMs,
        timeoutMs: 5_000,
        what: 'a room state after online',
      });
      onlineReason = sensorHealthy(state)?.reason;
      assert.equal(sensorHealthy(state)?.status, 'False', JSON.stringify(sensorHealthy(state)));
      const on = daemon.run.filter((l) => /^room_heater → ON/.test(l.msg) && l.time >= offlineAtMs);
      assert.deepEqual(on, [], 'the heater went on again on the value from before the outage');
    });

    // When the probe reports again, then the room heats again
    const reportedAgainAtMs = Date.now();
    await client.publish(DEVICE, report(15.4));
    let reheatMs: number | undefined;
    await v.checkAsync('reporting again: heater ON, SensorHealthy True', async () => {
      const on = await daemon.run.waitForLine(
        (l: LogLine) => /^room_heater → ON/.test(l.msg) && l.time >= reportedAgainAtMs,
        15_000,
      );
      reheatMs = on.time - reportedAgainAtMs;
      await client.state(stateTopic('room'), (s) => sensorHealthy(s)?.status === 'True', {
        sinceMs: reportedAgainAtMs,
        timeoutMs: 5_000,
        what: 'room SensorHealthy True',
      });
    });
    v.check('the daemon runs', () => assert.equal(daemon.run.exitStatus, undefined));
    reportFigures(t, {
      scenario: 'MQTT probe offline',
      timeToSafeMs: safeMs,
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      rowsWritten: lastEventId(dbPath) - eventsBefore,
      notes: `heater off ${safeMs ?? 'never'} ms after offline, "${offlineMessage ?? 'no Offline message'}"; online without a value: SensorHealthy ${onlineReason ?? '?'}; heating again ${reheatMs ?? 'never'} ms after the next report`,
    });
    v.settle();
  });
});
