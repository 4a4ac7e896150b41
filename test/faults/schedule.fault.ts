import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CliProcess, sleep, withReadOnlyDb } from '../integration/helpers.js';
import { BASE, faultConfigText, nextRequestId, resultTopic, stateTopic } from './support/config.js';
import { type ProbedDaemon, rssOf, startProbedDaemon, stepClock } from './support/daemon.js';
import { integrity, movedAside } from './support/db.js';
import { reportFigures } from './support/figures.js';
import { apiBase, postJson } from './support/http.js';
import { parseJson, type Received, type StatePayload, type TestMqtt } from './support/mqtt.js';
import { openScenario, type Resources, type ScenarioPlace } from './support/scenario.js';

/**
 * "restart-mid-profile with the crash test": presets and profiles are desired state,
 * stored before the answer, and a profile's progress is wall-clock time since its start minus
 * its pauses, so
 * - a daemon killed (SIGKILL) in the middle of a ramp and restarted on the same database is at
 *   the step and setpoint the wall clock says, and its heater was never left on beyond the
 *   "When homeostat itself dies" guarantees (the plug's own timer armed before every ON,
 *   `homeostat safe` switching it off after the kill);
 * - a preset or profile command killed right after its answer is there after the restart;
 * - a wall-clock step while a profile runs neither skips nor repeats any of a step.
 * All at --speed 1: a profile is timed by the wall clock, and a scaled clock starts again from
 * real time at every start, so only real time makes "resumes at the right point" meaningful.
 * The fermenter of the demo with its chamber cold (ambient 10 °C) and its heater a Tasmota plug
 * (the test answers for the plug), a short profile and two presets.
 */

const LOOP = 'fermenter';
const PLUG = 'fault_heat_plug';
const HOLD_MS = 10_000;
const RAMP_MS = 40_000;
const FROM_C = 18;
const TO_C = 21;
/** The clock-step profile: a hold long enough for four steps of the clock, then the next hold. */
const CLOCK_HOLD_MS = 30_000;
/** Bound on the timing of a step change seen in the state: cycles every 1 s, publishing included. */
const STEP_SLACK_MS = 2_500;

const presetTopic = (loop: string) => `${BASE}/${loop}/preset/set`;
const profileTopic = (loop: string) => `${BASE}/${loop}/profile/set`;

function scheduleConfig(brokerUrl: string): string {
  return faultConfigText({
    brokerUrl,
    edit: (doc) => {
      // Cold: the heater is wanted on all along (setpoints 15–21 °C)
      doc.setIn(['simulation', 'plants', 'chamber', 'ambient'], 10);
      // A reading and a cycle every second: the state follows a ramp closely
      doc.setIn(['sensors', 'chamber_temp', 'periodS'], 1);
      doc.setIn(['actuators', 'chamber_heater'], {
        kind: 'mqtt_switch',
        preset: 'tasmota',
        device: PLUG,
        deadManS: 600,
        windowS: 300,
        minOnS: 0,
        minOffS: 0,
      });
      doc.setIn(['loops', LOOP, 'presets'], { eco: { setpoint: 15 }, comfort: { setpoint: 20 } });
      doc.setIn(['loops', LOOP, 'profiles'], {
        fault: {
          steps: [
            { holdS: HOLD_MS / 1000, setpoint: FROM_C },
            { rampS: RAMP_MS / 1000, to: TO_C },
            { holdS: 3600, setpoint: TO_C },
          ],
        },
        clock: {
          steps: [
            { holdS: CLOCK_HOLD_MS / 1000, setpoint: 18 },
            { holdS: 3600, setpoint: 19 },
          ],
        },
      });
    },
  });
}

/** The `schedule` part of the loop's state (docs/schedules.md). */
interface ScheduleStatus {
  source: 'manual' | 'preset' | 'schedule' | 'profile';
  preset: string | null;
  heldUntil?: string;
  profile?: {
    name: string;
    state: 'running' | 'paused' | 'finished';
    stepIndex: number;
    stepCount: number;
    stepKind: 'hold' | 'ramp';
    stepRemainingS: number;
    totalRemainingS: number;
  };
}
type ScheduleState = StatePayload & { schedule?: ScheduleStatus };

/** The stored desired row, read from outside with plain SQL (schema 7 columns). */
interface StoredRow {
  setpoint: number;
  generation: number;
  preset: string | null;
  profile: string | null;
  profile_started_at_ms: number | null;
  profile_paused_at_ms: number | null;
  profile_paused_total_ms: number | null;
}

function storedRow(dbPath: string): StoredRow | undefined {
  return withReadOnlyDb(dbPath, (db) =>
    db
      .prepare<[string], StoredRow>(
        `SELECT setpoint, generation, preset, profile, profile_started_at_ms, profile_paused_at_ms,
                profile_paused_total_ms FROM loop_desired WHERE loop = ?`,
      )
      .get(LOOP),
  );
}

function eventsOfKind(dbPath: string, kind: string): number {
  return withReadOnlyDb(
    dbPath,
    (db) =>
      db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM events WHERE kind = ?').get(kind)!.n,
  );
}

/** The fault profile's setpoint `elapsedMs` into its run: the test's own arithmetic, not the core's. */
function faultProfileAt(elapsedMs: number): { stepIndex: number; setpoint: number } {
  if (elapsedMs < HOLD_MS) return { stepIndex: 0, setpoint: FROM_C };
  if (elapsedMs < HOLD_MS + RAMP_MS)
    return { stepIndex: 1, setpoint: FROM_C + ((TO_C - FROM_C) * (elapsedMs - HOLD_MS)) / RAMP_MS };
  return { stepIndex: 2, setpoint: TO_C };
}

/**
 * Plays the Tasmota plug: confirms every POWER command on its stat topic, as the device does.
 * The commands themselves stay in the observer's `received` (cmnd/<plug>/#).
 */
function playPlug(client: TestMqtt): void {
  client.client.on('message', (topic, payload) => {
    if (topic === `cmnd/${PLUG}/POWER`) {
      void client.publish(`stat/${PLUG}/POWER`, payload.toString(), { qos: 0 }).catch(() => undefined);
    }
  });
}

const plugCommands = (client: TestMqtt, fromMs = 0, toMs = Number.POSITIVE_INFINITY) =>
  client.received.filter((m) => m.topic.startsWith(`cmnd/${PLUG}/`) && m.atMs >= fromMs && m.atMs <= toMs);
const isPower = (m: Received, value: 'ON' | 'OFF') =>
  m.topic === `cmnd/${PLUG}/POWER` && m.payload.toString() === value;
const isPulseTime = (m: Received) => /^cmnd\/[^/]+\/PulseTime\d*$/.test(m.topic);

/** Starts a daemon on the place (speed 1) and waits for it to regulate; `sinceMs`: its start. */
async function startOn(
  res: Resources,
  place: ScenarioPlace,
  name: string,
  steppableClock = false,
): Promise<{ daemon: ProbedDaemon; sinceMs: number; base: string }> {
  const sinceMs = Date.now();
  const daemon = startProbedDaemon({
    configPath: place.configPath,
    dbPath: place.dbPath,
    speed: 1,
    dir: place.dir,
    name,
    ...(steppableClock ? { steppableClock: true } : {}),
  });
  res.daemon(daemon.run);
  await daemon.run.waitForLine(/^homeostat regulating/, 30_000);
  const { base } = await apiBase(daemon.run);
  return { daemon, sinceMs, base };
}

/** The next state of the loop published after `sinceMs` that passes `test`. */
async function stateAfter(
  client: TestMqtt,
  sinceMs: number,
  test: (s: ScheduleState) => boolean = () => true,
  timeoutMs = 15_000,
  what = `${LOOP} state`,
): Promise<{ state: ScheduleState; atMs: number }> {
  const found = await client.state(stateTopic(LOOP), (s) => test(s as ScheduleState), {
    sinceMs,
    timeoutMs,
    what,
  });
  return { state: found.state as ScheduleState, atMs: found.atMs };
}

interface Answer {
  accepted: boolean;
  generation?: number;
  reason?: string;
}

/** A command over MQTT (JSON with a request id), resolving with its result, or over HTTP. */
async function command(
  via: 'mqtt' | 'http',
  client: TestMqtt,
  base: string,
  kind: 'preset' | 'profile',
  body: Record<string, unknown>,
): Promise<Answer | undefined> {
  if (via === 'mqtt') {
    const requestId = nextRequestId(`sched-${kind}`);
    const topic = kind === 'preset' ? presetTopic(LOOP) : profileTopic(LOOP);
    return client.command(topic, JSON.stringify({ ...body, requestId }), resultTopic(LOOP), {
      requestId,
      timeoutMs: 5_000,
    });
  }
  const answer = await postJson(base, `/api/loops/${LOOP}/${kind}`, body);
  const text = answer.head.slice(answer.head.indexOf('\r\n\r\n') + 4);
  return parseJson<Answer>(Buffer.from(text));
}

describe('presets, schedules and profiles across kills and clock steps', () => {
  test('killed mid-ramp and restarted: the profile resumes at the step and setpoint the wall clock says, the heater plug safe meanwhile', {
    timeout: 150_000,
  }, async (t) => {
    const place = await openScenario(t, 'homeostat-fault-profile-', [`cmnd/${PLUG}/#`]);
    const { res, v, client, configPath, dbPath } = place;
    writeFileSync(configPath, scheduleConfig(place.broker.url));
    playPlug(client);
    const first = await startOn(res, place, 'before');
    await stateAfter(client, first.sinceMs);
    const rssBeforeBytes = rssOf(first.daemon.run.child.pid);

    // Given the fault profile started over the HTTP API: hold 10 s at 18 °C, ramp 40 s to 21 °C
    const sentAtMs = Date.now();
    const started = await command('http', client, first.base, 'profile', { action: 'start', name: 'fault' });
    const answeredAtMs = Date.now();
    assert.equal(started?.accepted, true, JSON.stringify(started));
    const run = storedRow(dbPath);
    const startedAtMs = run?.profile_started_at_ms ?? Number.NaN;
    v.check('the start is stored with its moment, between the request and the answer', () => {
      assert.equal(run?.profile, 'fault');
      assert.ok(
        startedAtMs >= sentAtMs - 50 && startedAtMs <= answeredAtMs + 50,
        `${startedAtMs - sentAtMs} ms`,
      );
    });
    // The heater plug is on (cold chamber), its own timer armed first
    await client.first((m) => isPower(m, 'ON'), 20_000, 'heater plug ON').catch(() => undefined);

    // When the daemon is killed 15 s into the ramp
    await sleep(Math.max(0, startedAtMs + HOLD_MS + 15_000 - Date.now()));
    const beforeKill = await stateAfter(client, Date.now() - 1_500);
    const killedAtMs = Date.now();
    const exit = await first.daemon.run.kill('SIGKILL');
    v.check('killed by the SIGKILL', () => assert.equal(exit.signal, 'SIGKILL'));
    v.check('it was in the ramp when killed', () =>
      assert.equal(
        beforeKill.state.schedule?.profile?.stepIndex,
        1,
        JSON.stringify(beforeKill.state.schedule),
      ),
    );

    // Then: the plug was never on without its own timer armed before the ON
    const commandsBefore = plugCommands(client, 0, killedAtMs + 100);
    const lastOnIdx = commandsBefore.findLastIndex((m) => isPower(m, 'ON'));
    v.check('the heater plug was on, its PulseTime sent before every ON', () => {
      assert.ok(lastOnIdx >= 0, `no ON: ${commandsBefore.map((m) => `${m.topic} ${m.payload}`).join(', ')}`);
      commandsBefore.forEach((m, i) => {
        if (isPower(m, 'ON'))
          assert.ok(commandsBefore.slice(0, i).some(isPulseTime), `ON #${i} without a PulseTime before it`);
      });
    });
    // systemd's ExecStopPost after the kill: `homeostat safe` sends the plug OFF
    const safe = new CliProcess(['safe', '--config', configPath]);
    res.daemon(safe);
    const offSeen = client
      .next((m) => isPower(m, 'OFF'), 15_000, 'plug OFF from homeostat safe')
      .then(
        (m) => m.atMs,
        () => undefined,
      );
    const safeExit = await safe.exited;
    const offAtMs = await offSeen;
    v.check('homeostat safe: exit 0, the plug sent OFF', () => {
      assert.deepEqual(safeExit, { code: 0, signal: null }, safe.output);
      assert.ok(offAtMs !== undefined, 'no OFF');
    });

    // When it starts again on the same database
    const second = await startOn(res, place, 'after');
    const resumed = await stateAfter(client, second.sinceMs, (s) => s.schedule !== undefined);
    const restartMs = resumed.atMs - killedAtMs;
    const updatedAtMs = Date.parse(resumed.state.updatedAt);
    const want = faultProfileAt(updatedAtMs - startedAtMs);
    // The setpoint may have been computed up to one cycle before the state's stamp
    const lowest = faultProfileAt(updatedAtMs - startedAtMs - 1_500).setpoint;
    v.check('resumed: the profile running, at the step the wall clock says', () => {
      assert.equal(resumed.state.schedule?.source, 'profile', JSON.stringify(resumed.state.schedule));
      assert.equal(resumed.state.schedule?.profile?.name, 'fault');
      assert.equal(resumed.state.schedule?.profile?.state, 'running');
      assert.equal(resumed.state.schedule?.profile?.stepIndex, want.stepIndex);
      assert.equal(resumed.state.schedule?.profile?.stepKind, 'ramp');
    });
    v.check('resumed: the setpoint in force is the ramp at the wall-clock time since the start', () =>
      assert.ok(
        resumed.state.setpoint >= lowest - 0.06 && resumed.state.setpoint <= want.setpoint + 0.06,
        `setpoint ${resumed.state.setpoint}, wanted ${lowest.toFixed(3)}–${want.setpoint.toFixed(3)} at ${(updatedAtMs - startedAtMs) / 1000} s`,
      ),
    );
    const loopView = await fetch(`${second.base}/api/loops/${LOOP}`).then(
      (r) => r.json() as Promise<unknown>,
    );
    v.check('the HTTP loop view shows the same progress', () => {
      const schedule = (loopView as { schedule?: ScheduleStatus }).schedule;
      assert.equal(schedule?.profile?.name, 'fault', JSON.stringify(loopView).slice(0, 400));
      assert.equal(schedule?.profile?.stepIndex, 1);
    });
    // The heater comes back on only through the restarted daemon, timer armed first
    const heaterBack = await client
      .next((m) => isPower(m, 'ON'), 15_000, 'plug ON after the restart')
      .then((m) => m.atMs)
      .catch(() => undefined);
    const commandsAfter = plugCommands(client, killedAtMs + 100);
    v.check('after the kill: OFF until the restarted daemon switched it on again, PulseTime first', () => {
      const firstOn = commandsAfter.findIndex((m) => isPower(m, 'ON'));
      assert.ok(firstOn > 0, 'no ON after the restart');
      assert.ok(commandsAfter[firstOn]!.atMs >= second.sinceMs, 'an ON before the restart');
      assert.ok(commandsAfter.slice(0, firstOn).some(isPulseTime), 'no PulseTime before the ON');
    });

    // Then the ramp ends when the wall clock says (start + 50 s), not a restart later
    const rampEnd = await stateAfter(
      client,
      second.sinceMs,
      (s) => (s.schedule?.profile?.stepIndex ?? 0) >= 2,
      HOLD_MS + RAMP_MS + 10_000,
      'the hold after the ramp',
    ).catch(() => undefined);
    const rampEndLateMs = rampEnd ? rampEnd.atMs - (startedAtMs + HOLD_MS + RAMP_MS) : undefined;
    v.check(
      `the ramp ended at start + ${(HOLD_MS + RAMP_MS) / 1000} s (±${STEP_SLACK_MS} ms), at ${TO_C} °C`,
      () => {
        assert.ok(
          rampEndLateMs !== undefined && Math.abs(rampEndLateMs) <= STEP_SLACK_MS,
          `${rampEndLateMs} ms late`,
        );
        assert.equal(rampEnd?.state.setpoint, TO_C);
      },
    );
    v.check('the cooler never ran (a cold chamber)', () =>
      assert.equal(
        [first.daemon, second.daemon].flatMap((d) => d.run.filter(/^chamber_cooler → ON/)).length,
        0,
      ),
    );
    v.check('integrity ok, nothing moved aside', () => {
      assert.deepEqual(integrity(dbPath), ['ok']);
      assert.deepEqual(movedAside(dbPath), []);
    });
    reportFigures(t, {
      scenario: 'SIGKILL mid-ramp, restart: profile resumed',
      timeToSafeMs: offAtMs === undefined ? undefined : offAtMs - killedAtMs,
      rssBeforeBytes,
      rssAfterBytes: rssOf(second.daemon.run.child.pid),
      notes:
        `killed ${((killedAtMs - startedAtMs) / 1000).toFixed(1)} s into the profile, first state after ${restartMs} ms: ` +
        `step ${resumed.state.schedule?.profile?.stepIndex} at ${resumed.state.setpoint} °C (wall clock: ${want.setpoint.toFixed(2)}); ` +
        `ramp end ${rampEndLateMs ?? '–'} ms off; plug OFF by homeostat safe, ON again ${heaterBack === undefined ? 'never' : `${heaterBack - second.sinceMs} ms after the restart`} (time to safe: kill → OFF, tsx start-up included)`,
    });
    v.settle();
  });

  test('killed right after each preset and profile command was answered: every change is there after the restart', {
    timeout: 180_000,
  }, async (t) => {
    const place = await openScenario(t, 'homeostat-fault-preset-');
    const { res, v, client, configPath, dbPath } = place;
    writeFileSync(configPath, scheduleConfig(place.broker.url));
    playPlug(client);
    // Each command, then a SIGKILL as soon as its answer is in, then what the row and the state must say
    const rounds: {
      label: string;
      via: 'mqtt' | 'http';
      kind: 'preset' | 'profile';
      body: Record<string, unknown>;
      stored: (row: StoredRow) => void;
      shown: (s: ScheduleState) => void;
    }[] = [
      {
        label: 'preset eco (MQTT)',
        via: 'mqtt',
        kind: 'preset',
        body: { preset: 'eco' },
        stored: (row) => assert.deepEqual([row.preset, row.setpoint], ['eco', 15]),
        shown: (s) =>
          assert.deepEqual([s.schedule?.source, s.schedule?.preset, s.setpoint], ['preset', 'eco', 15]),
      },
      {
        label: 'profile start (HTTP)',
        via: 'http',
        kind: 'profile',
        body: { action: 'start', name: 'fault' },
        stored: (row) => assert.equal(row.profile, 'fault'),
        shown: (s) =>
          assert.deepEqual([s.schedule?.source, s.schedule?.profile?.state], ['profile', 'running']),
      },
      {
        label: 'profile pause (MQTT)',
        via: 'mqtt',
        kind: 'profile',
        body: { action: 'pause' },
        stored: (row) => assert.notEqual(row.profile_paused_at_ms, null),
        shown: (s) => assert.equal(s.schedule?.profile?.state, 'paused'),
      },
      {
        label: 'preset comfort while paused (HTTP)',
        via: 'http',
        kind: 'preset',
        body: { preset: 'comfort' },
        stored: (row) => assert.deepEqual([row.preset, row.setpoint, row.profile], ['comfort', 20, 'fault']),
        shown: (s) =>
          assert.deepEqual(
            [s.schedule?.preset, s.setpoint, s.schedule?.profile?.state],
            ['comfort', 20, 'paused'],
          ),
      },
      {
        label: 'profile resume (MQTT)',
        via: 'mqtt',
        kind: 'profile',
        body: { action: 'resume' },
        stored: (row) => {
          assert.equal(row.profile_paused_at_ms, null);
          assert.ok((row.profile_paused_total_ms ?? 0) > 0, `paused total ${row.profile_paused_total_ms}`);
        },
        shown: (s) =>
          assert.deepEqual([s.schedule?.source, s.schedule?.profile?.state], ['profile', 'running']),
      },
      {
        label: 'profile stop (HTTP)',
        via: 'http',
        kind: 'profile',
        body: { action: 'stop' },
        stored: (row) => assert.equal(row.profile, null),
        shown: (s) => assert.equal(s.schedule?.profile, undefined, JSON.stringify(s.schedule)),
      },
      {
        label: 'preset none (MQTT)',
        via: 'mqtt',
        kind: 'preset',
        body: { preset: null },
        stored: (row) => assert.equal(row.preset, null),
        shown: (s) => assert.deepEqual([s.schedule?.source, s.schedule?.preset], ['manual', null]),
      },
    ];
    let current = await startOn(res, place, 'round-0');
    await stateAfter(client, current.sinceMs);
    const rssBeforeBytes = rssOf(current.daemon.run.child.pid);
    const answerToKillMs: number[] = [];
    const restartToStateMs: number[] = [];
    let accepted = 0;
    for (const [i, round] of rounds.entries()) {
      // Given a regulating daemon; when the command is answered, the daemon is killed at once
      const answer = await command(round.via, client, current.base, round.kind, round.body);
      const answeredAtMs = Date.now();
      const exit = await current.daemon.run.kill('SIGKILL');
      answerToKillMs.push(Date.now() - answeredAtMs);
      v.check(`${round.label}: accepted before the kill`, () => {
        assert.equal(answer?.accepted, true, JSON.stringify(answer));
        assert.equal(exit.signal, 'SIGKILL');
      });
      if (answer?.accepted) accepted += 1;
      // Then the database holds it (read with the daemon dead)
      const row = storedRow(dbPath);
      v.check(`${round.label}: in the database after the kill`, () => {
        assert.ok(row, 'no row');
        round.stored(row);
        assert.ok(
          row.generation >= (answer?.generation ?? 0),
          `generation ${row.generation} < ${answer?.generation}`,
        );
      });
      // And the restarted daemon regulates to it
      current = await startOn(res, place, `round-${i + 1}`);
      const after = await stateAfter(client, current.sinceMs, (s) => s.schedule !== undefined);
      restartToStateMs.push(after.atMs - current.sinceMs);
      v.check(`${round.label}: in force after the restart`, () => round.shown(after.state));
    }
    v.check('integrity ok, nothing moved aside', () => {
      assert.deepEqual(integrity(dbPath), ['ok']);
      assert.deepEqual(movedAside(dbPath), []);
    });
    reportFigures(t, {
      scenario: 'SIGKILL right after preset / profile answers',
      rssBeforeBytes,
      rssAfterBytes: rssOf(current.daemon.run.child.pid),
      notes:
        `${accepted}/${rounds.length} answered changes kept (preset, start, pause, preset while paused, resume, stop, none; MQTT and HTTP); ` +
        `answer → dead ≤ ${Math.max(...answerToKillMs)} ms; restart → first state median ${restartToStateMs.sort((a, b) => a - b)[Math.floor(restartToStateMs.length / 2)]} ms`,
    });
    v.settle();
  });

  test('wall clock stepped ±1 h while a profile runs: no step skipped or repeated', {
    timeout: 120_000,
  }, async (t) => {
    const place = await openScenario(t, 'homeostat-fault-profile-clock-');
    const { res, v, client, configPath, dbPath } = place;
    writeFileSync(configPath, scheduleConfig(place.broker.url));
    playPlug(client);
    const { daemon, sinceMs, base } = await startOn(res, place, 'clock', true);
    await stateAfter(client, sinceMs);
    const rssBeforeBytes = rssOf(daemon.run.child.pid);

    // Given the clock profile started: 30 s at 18 °C, then 19 °C
    const started = await command('mqtt', client, base, 'profile', { action: 'start', name: 'clock' });
    assert.equal(started?.accepted, true, JSON.stringify(started));
    const startedAtMs = storedRow(dbPath)?.profile_started_at_ms ?? Number.NaN;
    const steps = [
      { label: 'forward 1 h', offsetMs: 3_600_000 },
      { label: 'back 1 h (to real time)', offsetMs: 0 },
      { label: 'back 1 h (before real time)', offsetMs: -3_600_000 },
      { label: 'forward 1 h (to real time)', offsetMs: 0 },
    ];
    const outcomes: string[] = [];
    for (const step of steps) {
      // When the wall clock steps
      await sleep(1_000);
      await stepClock(daemon, step.offsetMs);
      await sleep(1_500);
      const { state } = await stateAfter(client, Date.now() - 1_200);
      const seenOffsetS = Math.round((Date.parse(state.updatedAt) - Date.now()) / 1000);
      const elapsedRealMs = Date.now() - startedAtMs;
      const remainingS = state.schedule?.profile?.stepRemainingS;
      outcomes.push(`${step.label}: step ${state.schedule?.profile?.stepIndex}, ${remainingS} s left`);
      // Then the profile is where real time says: the first hold, its time left counted in real time
      v.check(`${step.label}: the step reached the daemon`, () =>
        assert.ok(Math.abs(seenOffsetS * 1000 - step.offsetMs) < 10_000, `daemon clock ${seenOffsetS} s off`),
      );
      v.check(`${step.label}: still the first hold, at 18 °C`, () => {
        assert.equal(state.schedule?.profile?.stepIndex, 0, JSON.stringify(state.schedule));
        assert.equal(state.schedule?.profile?.state, 'running');
        assert.equal(state.setpoint, 18);
      });
      v.check(`${step.label}: time left in the hold follows real time (±3 s)`, () => {
        const wantS = (CLOCK_HOLD_MS - elapsedRealMs) / 1000;
        assert.ok(
          remainingS !== undefined && Math.abs(remainingS - wantS) <= 3,
          `${remainingS} s left, real time says ${wantS.toFixed(1)}`,
        );
      });
    }
    // And the next step comes when real time says (start + 30 s), neither an hour early nor late
    const next = await stateAfter(
      client,
      Date.now(),
      (s) => s.schedule?.profile?.stepIndex === 1,
      CLOCK_HOLD_MS + 10_000,
      'the second hold',
    ).catch(() => undefined);
    const lateMs = next ? next.atMs - (startedAtMs + CLOCK_HOLD_MS) : undefined;
    v.check(
      `the second step at start + ${CLOCK_HOLD_MS / 1000} s real time (±${STEP_SLACK_MS} ms), at 19 °C`,
      () => {
        assert.ok(lateMs !== undefined && Math.abs(lateMs) <= STEP_SLACK_MS, `${lateMs} ms late`);
        assert.equal(next?.state.setpoint, 19);
      },
    );
    const rebased = eventsOfKind(dbPath, 'profile-rebased');
    const storedStartMs = storedRow(dbPath)?.profile_started_at_ms ?? Number.NaN;
    v.check(
      'the stored start moved with every step and is back where it was (±2 s), one event per step',
      () => {
        assert.equal(rebased, steps.length);
        assert.ok(Math.abs(storedStartMs - startedAtMs) <= 2_000, `${storedStartMs - startedAtMs} ms`);
      },
    );
    v.check('the daemon runs', () => assert.equal(daemon.run.exitStatus, undefined));
    reportFigures(t, {
      scenario: 'wall clock stepped ±1 h mid-profile',
      rssBeforeBytes,
      rssAfterBytes: rssOf(daemon.run.child.pid),
      notes: `${outcomes.join('; ')}; next step ${lateMs ?? '–'} ms off real time; ${rebased} profile-rebased events`,
    });
    v.settle();
  });
});
