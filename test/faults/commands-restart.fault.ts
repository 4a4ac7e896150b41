import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  BASE,
  faultConfigText,
  faultResetTopic,
  resultTopic,
  setpointTopic,
  stateTopic,
} from './support/config.js';
import { measureFrom, rssOf, startProbedDaemon } from './support/daemon.js';
import { desiredRows, eventsAfter, lastEventId } from './support/db.js';
import { reportFigures } from './support/figures.js';
import { condition, type TestMqtt } from './support/mqtt.js';
import { checkReplaysRefused, latchingRoom } from './support/retained.js';
import { bridgeReady, openScenario, startRegulating } from './support/scenario.js';

/**
 * "Commands that mean what they meant when sent", against the daemon as a child
 * process and a private Mosquitto: commands sent while no daemon ran (queued by the broker for
 * the old persistent session, and retained), and a kill -9 in the middle of an autotune. Real
 * time (speed 1): a scaled clock starts afresh at each run, which would put stored times in the
 * new run's future.
 */

const autotuneTopic = (loop: string) => `${BASE}/${loop}/autotune/set`;
/**
 * Waits until the daemon has published a state of `loop` stamped at least `forMs` after `fromMs`
 * (its own clock; real speed): an observation window measured in the daemon's progress, so a
 * busy machine makes it longer, never shorter.
 */
async function daemonRanFor(client: TestMqtt, loop: string, fromMs: number, forMs: number): Promise<void> {
  await client.state(stateTopic(loop), (s) => Date.parse(s.updatedAt) >= fromMs + forMs, {
    timeoutMs: 60_000,
    sinceMs: fromMs,
    what: `a ${loop} state ${forMs} ms on`,
  });
}

/** The state's autotune part (docs/home-assistant.md, MQTT topics: `autotune`). */
const autotuneOf = (state: unknown) =>
  (state as { autotune?: { phase?: string; abortReason?: string; elapsedMs?: number } } | undefined)
    ?.autotune;
const autotuneElapsedMs = (state: unknown) => {
  const autotune = autotuneOf(state);
  return autotune?.phase === 'noise' || autotune?.phase === 'relay' ? autotune.elapsedMs : undefined;
};

describe('commands sent while the daemon was down', () => {
  test('a fault/reset, an autotune start and a setpoint published (retained, QoS 1) while the daemon is killed: at restart none acts; the latch holds, the heater stays off', {
    timeout: 120_000,
  }, async (t) => {
    const scenario = await openScenario(t, 'homeostat-fault-queued-');
    const { res, v, broker, client, dir, configPath, dbPath } = scenario;
    writeFileSync(configPath, faultConfigText({ brokerUrl: broker.url, edit: latchingRoom }));
    let daemon = await startRegulating(res, scenario, { speed: 1, name: 'first' });
    await client.state(
      stateTopic('room'),
      (s) => condition(s, 'Faulted')?.reason === 'LatchedHeatingIneffective',
      { timeoutMs: 30_000, what: 'room latched HeatingIneffective' },
    );
    await daemon.run.kill('SIGKILL');
    const desiredBefore = desiredRows(dbPath);
    const eventsBefore = lastEventId(dbPath);

    // While no daemon runs: the broker keeps these for the daemon's session (and retained).
    await client.publish(faultResetTopic('room'), 'reset', { qos: 1, retain: true });
    await client.publish(autotuneTopic('room'), 'start', { qos: 1, retain: true });
    await client.publish(setpointTopic('room'), '25', { qos: 1, retain: true });

    const restartedAtMs = Date.now();
    daemon = startProbedDaemon({ configPath, dbPath, speed: 1, dir, name: 'second' });
    res.daemon(daemon.run);
    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    await bridgeReady(client, ['room']);
    const measured = await measureFrom(daemon);
    // Shorter than the effect watch: a cleared latch would not be back yet.
    await daemonRanFor(client, 'room', Date.now(), 2_000);

    const { results, heaterOn } = checkReplaysRefused(
      v,
      { client, run: daemon.run },
      { loops: ['room'], sinceMs: restartedAtMs, count: 3 },
    );
    const events = eventsAfter(dbPath, eventsBefore).filter((e) => e.loop === 'room');
    v.check('no reset, autotune or setpoint change recorded', () =>
      assert.deepEqual(
        events.filter((e) => /fault-reset|autotune|setpoint-changed/.test(e.kind)),
        [],
      ),
    );
    v.check('desired state unchanged', () => assert.deepEqual(desiredRows(dbPath), desiredBefore));
    reportFigures(t, {
      scenario: 'reset, autotune start, setpoint sent while down',
      ...measured(),
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: `${heaterOn.length} heater ON after restart; ${results.filter((r) => !r.accepted).length}/3 refused`,
    });
    v.settle();
  });
});

describe('kill -9 during an autotune', () => {
  test('the restart does not start the run again: it ends as aborted "interrupted by a restart" (state, event), nothing switches for the autotune, the loop regulates', {
    timeout: 120_000,
  }, async (t) => {
    const scenario = await openScenario(t, 'homeostat-fault-autotune-kill-');
    const { res, v, broker, client, dir, configPath, dbPath } = scenario;
    writeFileSync(
      configPath,
      faultConfigText({
        brokerUrl: broker.url,
        edit: (doc) => doc.setIn(['sensors', 'room_temp', 'periodS'], 1),
      }),
    );
    let daemon = await startRegulating(res, scenario, { speed: 1, name: 'first' });
    const started = await client.command(autotuneTopic('room'), 'start', resultTopic('room'));
    assert.equal(started?.accepted, true, JSON.stringify(started));
    // Into the run: readings recorded, maybe the relay switched.
    await client.state(stateTopic('room'), (s) => (autotuneElapsedMs(s) ?? 0) >= 3_000, {
      timeoutMs: 60_000,
      what: 'the autotune 3 s into its run',
    });
    await daemon.run.kill('SIGKILL');
    const eventsBefore = lastEventId(dbPath);

    const restartedAtMs = Date.now();
    daemon = startProbedDaemon({ configPath, dbPath, speed: 1, dir, name: 'second' });
    res.daemon(daemon.run);
    await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
    const measured = await measureFrom(daemon);
    const aborted = await client.state(stateTopic('room'), (s) => autotuneOf(s)?.phase === 'aborted', {
      timeoutMs: 30_000,
      sinceMs: restartedAtMs,
      what: 'the run shown as aborted',
    });
    // A restarted run would switch the heater for the autotune within this.
    await daemonRanFor(client, 'room', aborted.atMs, 5_000);

    v.check('aborted, "interrupted by a restart"', () =>
      assert.equal(autotuneOf(aborted.state)?.abortReason, 'interrupted by a restart'),
    );
    const events = eventsAfter(dbPath, eventsBefore).filter((e) => e.loop === 'room');
    v.check('one autotune-aborted event, no request or start again', () => {
      assert.deepEqual(
        events.filter((e) => e.kind.startsWith('autotune')).map((e) => [e.kind, e.message]),
        [['autotune-aborted', 'autotune aborted: interrupted by a restart']],
      );
    });
    const autotuneWrites = daemon.run.filter((l) => /autotune/.test(l.msg) && /→/.test(l.msg));
    v.check('no actuator written for an autotune after the restart', () =>
      assert.deepEqual(
        autotuneWrites.map((l) => l.msg),
        [],
      ),
    );
    const latest = client.latestState(stateTopic('room'));
    v.check('regulating again', () => assert.notEqual(condition(latest, 'Faulted')?.status, 'True'));
    reportFigures(t, {
      scenario: 'kill -9 during an autotune',
      ...measured(),
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: `shown aborted ${aborted.atMs - restartedAtMs} ms after the restart (${autotuneOf(aborted.state)?.abortReason}); ${autotuneWrites.length} autotune writes after`,
    });
    v.settle();
  });
});
