/**
 * The override rule on the command path: asking again for the stored manual setpoint,
 * mode or preset while a weekly schedule or a profile is in force over it is a manual change that
 * takes over (stamped, next generation), not a duplicate; asked while it is in force, it is a
 * duplicate (QoS 1) and changes nothing. Starting a finished profile again restarts it.
 * A real DesiredStore on a temporary SQLite file; the node's time zone is UTC.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { effectiveDesired } from '../../src/core/schedule/effective-desired.js';
import { applyConfig } from '../../src/daemon/store.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { commandPath, storeOnFile } from '../support/commands.js';
import { validConfig } from '../support/config.js';

const TEXT = `
version: 1
node: { id: pi, timeZone: UTC }
simulation:
  plants:
    p: { ambient: 10, timeConstantS: 600 }
    q: { ambient: 10, timeConstantS: 600 }
sensors:
  t: { kind: simulated, plant: p }
  u: { kind: simulated, plant: q }
actuators:
  heater: { kind: simulated_relay, plant: p, gain: 20 }
  heater2: { kind: simulated_relay, plant: q, gain: 20 }
loops:
  living:
    sensor: t
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.2 }
    presets: { eco: { setpoint: 17 } }
    schedule:
      weekly:
        - { days: [mon, tue, wed, thu, fri, sat, sun], at: "00:00", setpoint: 18 }
  fermenter:
    sensor: u
    raise: heater2
    setpoint: 18
    limits: { min: 0, max: 30 }
    controller: { type: pid, kp: 0.5 }
    profiles:
      short: { steps: [{ holdS: 3600, setpoint: 19 }] }
`;
const HOUR_MS = 3_600_000;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** Thursday 2026-01-01 12:00 UTC, the file just applied. */
function given() {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  const config = validConfig(TEXT);
  const store = storeOnFile(clock, cleanups);
  applyConfig(store, config, TEXT);
  const { commands, send, row } = commandPath({ config, desired: store.desired, clock });
  cleanups.push(() => commands.stop());
  const inForce = (loop: string) => effectiveDesired(row(loop), config.loops[loop]!, 'UTC', clock.nowMs());
  return { clock, send, row, inForce };
}

describe('asking again for the stored manual state while a schedule overrides it', () => {
  test('given the schedule in force after midnight, when the stored setpoint is set again, then it takes over', async () => {
    const { clock, send, row, inForce } = given();
    await clock.advance(13 * HOUR_MS); // Friday 01:00: the 00:00 point is past the manual change
    assert.equal(inForce('living').setpoint, 18, 'the schedule is in force');
    const before = row('living').generation;
    send('setpoint', '20', 'living');
    assert.ok(row('living').generation > before, 'a new generation');
    assert.equal(inForce('living').setpoint, 20);
    assert.equal(inForce('living').schedule?.source, 'manual');
    // A QoS 1 duplicate of the same message now changes nothing.
    const after = row('living').generation;
    send('setpoint', '20', 'living');
    assert.equal(row('living').generation, after);
  });

  test('given the schedule in force, when the mode in force is sent again (an HA automation), then nothing changes', async () => {
    const { clock, send, row, inForce } = given();
    send('setpoint', '25', 'living'); // a manual 25 from long ago …
    await clock.advance(13 * HOUR_MS); // … the schedule's 18 took over at midnight
    assert.equal(inForce('living').setpoint, 18);
    const before = row('living').generation;
    send('mode', 'heat', 'living');
    assert.equal(row('living').generation, before, 'not a take-over: the mode is the one in force');
    assert.equal(inForce('living').setpoint, 18, 'the old manual 25 does not come back');
  });

  test('given the manual setpoint in force, when it is set again, then nothing changes (a duplicate)', () => {
    const { send, row, inForce } = given();
    // A new loop with a schedule follows it from the start (Thursday's 00:00 point: 18) …
    assert.equal(inForce('living').setpoint, 18);
    // … so its stored setpoint asked for takes over once, and again is a duplicate.
    send('setpoint', '20', 'living');
    assert.equal(inForce('living').schedule?.source, 'manual');
    const before = row('living').generation;
    send('setpoint', '20', 'living');
    assert.equal(row('living').generation, before);
  });

  test('given preset eco chosen yesterday and the schedule in force now, when eco is chosen again, then it takes over', async () => {
    const { clock, send, row, inForce } = given();
    send('preset', 'eco', 'living');
    assert.equal(inForce('living').setpoint, 17);
    await clock.advance(13 * HOUR_MS);
    assert.equal(inForce('living').setpoint, 18, 'the schedule took over at midnight');
    const answer = send('preset', 'eco', 'living');
    assert.equal(answer.changed, true);
    assert.equal(inForce('living').setpoint, 17);
    assert.equal(send('preset', 'eco', 'living').changed, false, 'again: a duplicate');
    assert.equal(row('living').preset, 'eco');
  });
});

describe('starting the started profile again', () => {
  test('before it has finished: a duplicate; once finished: a restart from now', async () => {
    const { clock, send, row } = given();
    assert.equal(send('profile', 'start short', 'fermenter').changed, true);
    const startedAtMs = row('fermenter').profileRun?.startedAtMs;
    await clock.advance(HOUR_MS / 2);
    assert.equal(send('profile', 'start short', 'fermenter').changed, false);
    assert.equal(row('fermenter').profileRun?.startedAtMs, startedAtMs);
    await clock.advance(HOUR_MS);
    assert.equal(send('profile', 'start short', 'fermenter').changed, true);
    assert.equal(row('fermenter').profileRun?.startedAtMs, clock.nowMs());
  });
});
