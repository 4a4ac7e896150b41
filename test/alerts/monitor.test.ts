/**
 * The monitor between loop statuses and the outbox: which channels an alert goes to, the cap
 * (never on MQTT), and the journal's story of each fault (at once at warning, at info when it
 * clears; a loop's first "no reading yet" only once it lasted 30 s).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { AlertDispatcher } from '../../src/alerts/dispatcher.js';
import { AlertMonitor, MQTT_CHANNEL } from '../../src/alerts/monitor.js';
import { AlertOutbox } from '../../src/alerts/outbox.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { AlertOutboxTable } from '../../src/store/alert-outbox.js';
import { closeStore, openStore } from '../../src/store/database.js';
import { minimalSimConfigText, validConfig } from '../support/config.js';
import { LogLevel, recordingLogger, silentLogger } from '../support/logger.js';
import { type HasAfter, tempDir } from '../support/tmp.js';
import { profileStatus, type Shown, statusOf } from './statuses.js';

const CHANNELS = `
alerts:
  channels:
    phone: { type: ntfy, topic: t1 }
    hook: { type: webhook, url: "http://127.0.0.1:1/x" }
  capPerHour: 2
  rules: { faultedForS: 0 }
`;

/** A clock whose monotonic time runs 0.1 % fast against wall time, in fractions of a ms (as a real one may). */
function driftingClock(base: ManualClock) {
  return {
    nowMs: () => base.nowMs(),
    monotonicMs: () => base.monotonicMs() * 1.001 + 0.5,
    setTimer: (fn: () => void, delayMs: number) => base.setTimer(fn, delayMs),
    clearTimer: (handle: Parameters<ManualClock['clearTimer']>[0]) => base.clearTimer(handle),
  };
}

/** A clock whose timers of more than 1 ms fire 1 ms early (as setTimeout may, against performance.now()). */
function earlyTimers(base: ManualClock) {
  return {
    nowMs: () => base.nowMs(),
    monotonicMs: () => base.monotonicMs(),
    setTimer: (fn: () => void, delayMs: number) => base.setTimer(fn, delayMs > 1 ? delayMs - 1 : delayMs),
    clearTimer: (handle: Parameters<ManualClock['clearTimer']>[0]) => base.clearTimer(handle),
  };
}

function setUp(t: HasAfter, loopExtra = '', clockKind: 'manual' | 'drifting' | 'early' = 'manual') {
  const config = validConfig(minimalSimConfigText({ extra: CHANNELS, loopExtra }));
  const db = openStore({ path: path.join(tempDir(t), 'h.db'), logger: silentLogger, nowMs: () => 0 }).db;
  t.after(() => closeStore(db));
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const log = recordingLogger();
  const outbox = new AlertOutbox(new AlertOutboxTable(() => db), 100, silentLogger);
  const dispatcher = new AlertDispatcher({ outbox, channels: new Map(), clock, logger: silentLogger });
  const channels = ['phone', 'hook', MQTT_CHANNEL];
  const monitorClock =
    clockKind === 'drifting' ? driftingClock(clock) : clockKind === 'early' ? earlyTimers(clock) : clock;
  const monitor = new AlertMonitor({
    config,
    clock: monitorClock,
    logger: log.logger,
    outbox,
    dispatcher,
    channels,
  });
  t.after(() => monitor.stop());
  return { clock, log, outbox, monitor };
}

const status = (faulted: Shown['Faulted']) =>
  statusOf({ Faulted: faulted }, { measured: undefined, action: 'idle', output: 0 });
const OK = status({ status: 'False', reason: 'NoFault', message: 'no fault' });
const NAN = status({ status: 'True', reason: 'SensorNotFinite', message: 'actuators safe: reading is NaN' });
const NO_READING = status({
  status: 'True',
  reason: 'SensorMissing',
  message: 'actuators safe: no reading yet',
});

const warnings = (log: ReturnType<typeof recordingLogger>) => log.atLevel(LogLevel.warn).map((r) => r.msg);

test('a fault: a warning at once and an info line when it clears, once per streak', async (t) => {
  const { clock, log, monitor } = setUp(t);
  monitor.onStatus(NAN);
  await clock.advance(10_000);
  monitor.onStatus(NAN);
  assert.deepEqual(warnings(log), ['room: fault: actuators safe: reading is NaN']);
  await clock.advance(50_000);
  monitor.onStatus(OK);
  assert.ok(log.messages(LogLevel.info).includes('room: fault cleared after 60 s'));
});

test('"no reading yet" for the first seconds of a start is not logged; for 30 s it is, once', async (t) => {
  const { clock, log, monitor } = setUp(t, '    alerts: { faultedForS: false }');
  monitor.onStatus(NO_READING);
  await clock.advance(5_000);
  monitor.onStatus(OK);
  assert.deepEqual(warnings(log), []);
  assert.ok(!log.messages().some((m) => /fault cleared/.test(m)), 'nothing to clear in the journal');
  monitor.onStatus(NO_READING);
  await clock.advance(29_000);
  monitor.onStatus(NO_READING);
  assert.deepEqual(warnings(log), []);
  await clock.advance(1_000);
  monitor.onStatus(NO_READING);
  monitor.onStatus(NO_READING);
  assert.deepEqual(warnings(log), ['room: fault: actuators safe: no reading yet']);
});

test("a loop's channels: its alerts go to those and to MQTT only", (t) => {
  const { outbox, monitor } = setUp(t, '    alerts: { channels: [phone] }');
  monitor.onStatus(NAN);
  assert.deepEqual(outbox.backlog(), { phone: 1, mqtt: 1 });
});

test('the hourly cap holds back the third alert on each capped channel, never on MQTT', (t) => {
  const { outbox, monitor } = setUp(t);
  for (let i = 0; i < 3; i++) {
    monitor.onStatus(NAN);
    monitor.onStatus(OK);
  }
  // phone and hook: 2 alerts and their 2 resolutions; MQTT: all 3 and their resolutions.
  assert.deepEqual(outbox.backlog(), { phone: 4, hook: 4, mqtt: 6 });
});

test('an alert and its resolution carry the same streakId however the monotonic clock drifts from wall time', async (t) => {
  const { clock, outbox, monitor } = setUp(t, '', 'drifting');
  monitor.onStatus(NAN);
  await clock.advance(3_600_000);
  monitor.onStatus(OK);
  const raised = outbox.head('phone');
  assert.ok(raised);
  outbox.delivered(raised, clock.nowMs());
  const resolved = outbox.head('phone');
  assert.equal(resolved?.notice.phase, 'resolved');
  assert.equal(resolved?.notice.streakId, raised.notice.streakId);
  assert.equal(resolved?.notice.id, `${raised.notice.streakId}/resolved`);
});

test('"no reading yet" raised within its grace (faultedForS 0): the journal hears of it with the alert', (t) => {
  const { log, monitor } = setUp(t);
  monitor.onStatus(NO_READING);
  assert.deepEqual(warnings(log), ['room: fault: actuators safe: no reading yet']);
});

test('a reload with a longer faultedForS: the waiting streak is raised at the new delay, not the old one', async (t) => {
  const { clock, outbox, monitor } = setUp(t, '    alerts: { faultedForS: 60 }');
  monitor.onStatus(NAN);
  monitor.applyConfig(
    validConfig(minimalSimConfigText({ extra: CHANNELS, loopExtra: '    alerts: { faultedForS: 300 }' })),
  );
  await clock.advance(60_000);
  assert.deepEqual(outbox.backlog(), {}, 'not at the old 60 s');
  await clock.advance(240_000);
  assert.deepEqual(
    outbox.backlog(),
    { phone: 1, hook: 1, mqtt: 1 },
    'at 300 s, by the timer, without a status',
  );
});

test('a raise timer that fires a little early: the streak is raised at its due time all the same, without a status', async (t) => {
  const { clock, outbox, monitor } = setUp(t, '    alerts: { faultedForS: 60 }', 'early');
  monitor.onStatus(NAN);
  await clock.advance(59_999);
  assert.deepEqual(outbox.backlog(), {});
  await clock.advance(1);
  assert.deepEqual(outbox.backlog(), { phone: 1, hook: 1, mqtt: 1 });
});

test('a profile that finished: one notice on every channel, its name in the title', (t) => {
  const { outbox, monitor } = setUp(t);
  const withProfile = (state: 'running' | 'finished') =>
    profileStatus('lager', state, { stepCount: 2, setpoint: 2 });
  monitor.onStatus(withProfile('running'));
  monitor.onStatus(withProfile('finished'));
  monitor.onStatus(withProfile('finished'));
  assert.deepEqual(outbox.backlog(), { phone: 1, hook: 1, mqtt: 1 });
  const notice = outbox.head('phone')?.notice;
  assert.equal(notice?.title, 'room: profile "lager" finished');
  assert.equal(notice?.kind, 'profile');
  assert.equal(notice?.phase, 'event');
  assert.equal(notice?.message, 'all 2 steps done; it holds its last setpoint, 2, until it is stopped');
});
