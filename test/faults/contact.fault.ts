import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { LogLine } from '../integration/helpers.js';
import { faultConfigText, stateTopic } from './support/config.js';
import { measureFrom, rssOf, startProbedDaemon } from './support/daemon.js';
import { lastEventId } from './support/db.js';
import { reportFigures } from './support/figures.js';
import { condition } from './support/mqtt.js';
import { bridgeReady, openScenario } from './support/scenario.js';

/**
 * The fault case "contact garbage": the demo's room has a Zigbee2MQTT window contact (mqtt_binary,
 * preset zigbee2mqtt) as its interlock, played by the test's client exactly as Zigbee2MQTT
 * publishes an Aqara MCCGQ11LM (`{"contact":true}` closed; availability retained,
 * `{"state":"online"}`). While the room heater is on, the contact sends garbage, then (closed
 * again, heating again) its device goes offline: each time the heater goes off at once and the
 * room's Interlocked condition says why. Each recovery is a new closed state (back online alone
 * is not enough: the state from before the outage vouches for nothing). `homeostat run` (real time: the contact is not
 * simulated) on the demo, as a child process.
 * The sampler passes on the reading's whyNotANumber and liveness, so the exact reason is asserted.
 */

const DEVICE = 'zigbee2mqtt/room_window';
const AVAILABILITY = `${DEVICE}/availability`;
/** A contact message is read at once (the driver triggers a read): the heater is off well within this. */
const SAFE_BOUND_MS = 2_000;

describe('contact garbage', () => {
  test('a window contact interlock gets garbage, then goes offline, while the heater is on: heater off at once, the reason said', {
    timeout: 120_000,
  }, async (t) => {
    const { res, v, broker, client, dir, configPath, dbPath } = await openScenario(
      t,
      'homeostat-fault-contact-',
    );
    writeFileSync(
      configPath,
      faultConfigText({
        brokerUrl: broker.url,
        edit: (doc) => {
          doc.setIn(['sensors', 'room_window'], {
            kind: 'mqtt_binary',
            preset: 'zigbee2mqtt',
            device: DEVICE,
          });
          doc.setIn(['loops', 'room', 'interlocks'], [{ sensor: 'room_window' }]);
          doc.setIn(['actuators', 'room_heater', 'minOnS'], 0);
          doc.setIn(['actuators', 'room_heater', 'minOffS'], 0);
        },
      }),
    );
    await client.publish(AVAILABILITY, '{"state":"online"}', { qos: 1, retain: true });
    const daemon = startProbedDaemon({ configPath, dbPath, speed: 1, dir });
    res.daemon(daemon.run);
    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    await bridgeReady(client, ['room']);
    const closed = () => client.publish(DEVICE, '{"battery":97,"contact":true,"linkquality":72}');
    await closed();
    await daemon.run.waitForLine(/^room_heater → ON/, 15_000);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);
    const eventsBefore = lastEventId(dbPath);
    const measured = await measureFrom(daemon);

    const faults = [
      {
        name: 'garbage',
        inject: () => client.publish(DEVICE, '{"contact":"banana","linkquality":72}'),
        said: `interlock room_window: ${DEVICE}: field contact is "banana", neither on (false) nor off (true)`,
        recover: closed,
      },
      {
        name: 'device offline',
        inject: () => client.publish(AVAILABILITY, '{"state":"offline"}', { qos: 1, retain: true }),
        said: new RegExp(
          `^interlock room_window: device offline for \\d+ s \\(availability ${AVAILABILITY}\\)$`,
        ),
        // Back online, the state from before the outage no longer counts: a new one is needed.
        recover: async () => {
          await client.publish(AVAILABILITY, '{"state":"online"}', { qos: 1, retain: true });
          await closed();
        },
      },
    ];
    const outcomes: string[] = [];
    let worstSafeMs: number | undefined = 0;
    for (const fault of faults) {
      const injectedAtMs = Date.now();
      await fault.inject();
      const off = await daemon.run
        .waitForLine((l: LogLine) => /^room_heater → OFF/.test(l.msg) && l.time >= injectedAtMs, 10_000)
        .catch(() => undefined);
      const safeMs = off ? off.time - injectedAtMs : undefined;
      worstSafeMs =
        safeMs === undefined || worstSafeMs === undefined ? undefined : Math.max(worstSafeMs, safeMs);
      v.check(`${fault.name}: room heater off within ${SAFE_BOUND_MS} ms`, () =>
        assert.ok(safeMs !== undefined && safeMs <= SAFE_BOUND_MS, `${safeMs ?? 'never'}`),
      );
      let message: string | undefined;
      await v.checkAsync(`${fault.name}: Interlocked True, saying why`, async () => {
        const { state } = await client.state(
          stateTopic('room'),
          (s) => condition(s, 'Interlocked')?.status === 'True',
          { sinceMs: injectedAtMs, timeoutMs: 5_000, what: 'room Interlocked True' },
        );
        message = condition(state, 'Interlocked')?.message;
        const reason = message?.replace(/^paused, actuators safe: /, '');
        if (typeof fault.said === 'string') assert.equal(reason, fault.said);
        else assert.match(reason ?? '', fault.said);
      });
      await fault.recover();
      await v.checkAsync(`${fault.name}: heating again once the contact is good`, () =>
        daemon.run.waitForLine(
          (l: LogLine) => /^room_heater → ON/.test(l.msg) && l.time >= injectedAtMs,
          15_000,
        ),
      );
      outcomes.push(
        `${fault.name}: heater off after ${safeMs ?? 'never'} ms, "${message ?? 'no Interlocked message'}"`,
      );
    }
    v.check('the daemon runs', () => assert.equal(daemon.run.exitStatus, undefined));
    reportFigures(t, {
      scenario: 'contact garbage, offline',
      timeToSafeMs: worstSafeMs,
      ...measured(),
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      rowsWritten: lastEventId(dbPath) - eventsBefore,
      notes: outcomes.join('; '),
    });
    v.settle();
  });
});
