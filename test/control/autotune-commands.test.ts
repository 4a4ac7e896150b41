/**
 * The autotune and tuning commands on the shared command path (DesiredCommands), as a
 * specification: a real in-memory store, a fake daemon that records the cycles it is asked for,
 * and a change limit of 3 at once (1 per minute after). Loops:
 * - `room`: PID, heater only (modes off, heat; desired heat);
 * - `chamber`: PID, heater and cooler (desired heat_cool);
 * - `plain`: hysteresis, heater only.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { CommandKind } from '../../src/control/commands.js';
import type { CommandAnswer, CommandSource } from '../../src/control/desired-commands.js';
import { applyConfig } from '../../src/daemon/store.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { commandPath } from '../support/commands.js';
import { validConfig } from '../support/config.js';
import { type MemoryStore, memoryStore } from '../support/store.js';

const TEXT = `
version: 1
node: { id: pi }
simulation:
  plants:
    p: { ambient: 10, timeConstantS: 600 }
    q: { ambient: 10, timeConstantS: 600 }
    r: { ambient: 10, timeConstantS: 600 }
sensors:
  t: { kind: simulated, plant: p }
  u: { kind: simulated, plant: q }
  v: { kind: simulated, plant: r }
actuators:
  heater: { kind: simulated_relay, plant: p, gain: 20 }
  heater2: { kind: simulated_relay, plant: q, gain: 20 }
  cooler: { kind: simulated_relay, plant: q, gain: -20 }
  heater3: { kind: simulated_relay, plant: r, gain: 20 }
loops:
  room:
    sensor: t
    raise: heater
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: pid, kp: 0.2 }
  chamber:
    sensor: u
    raise: heater2
    lower: cooler
    setpoint: 18
    limits: { min: 0, max: 30 }
    controller: { type: pid, kp: 0.5 }
  plain:
    sensor: v
    raise: heater3
    setpoint: 20
    limits: { min: 5, max: 30 }
    controller: { type: hysteresis }
`;
const LIMIT = { burst: 3, perMinute: 1 };
const GAINS = (kp: number) => ({ gains: { kp, tiS: 600, tdS: 0 } });

const open: MemoryStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

function given(opts: { failing?: string[] } = {}) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const config = validConfig(TEXT);
  const store = memoryStore(clock);
  open.push(store);
  applyConfig(store, config, TEXT);
  const path = commandPath({
    config,
    desired: store.desired,
    clock,
    changeLimit: LIMIT,
    defaultSource: 'http',
    ...opts,
  });
  const send = (kind: CommandKind, payload: string, loop = 'room', source: CommandSource = 'http') =>
    path.send(kind, payload, loop, source);
  const row = (loop = 'room') => path.row(loop);
  const events = (kind: string) => store.desired.events().filter((e) => e.kind === kind);
  return { clock, store, ...path, send, row, events };
}

function reasonOf(answer: CommandAnswer): string {
  return answer.outcome.accepted ? '' : answer.outcome.reason;
}

describe('autotune: start', () => {
  test('given a PID loop in heat, when mqtt sends start, then the request is stored with the next generation before the answer, and the loop is woken', () => {
    const h = given();
    const before = h.row().generation;
    const answer = h.send('autotune', 'start', 'room', 'mqtt');

    assert.deepEqual(answer.outcome, { accepted: true, change: { autotune: { action: 'start' } } });
    assert.equal(answer.refusal, undefined);
    assert.ok(answer.generation! > before);
    assert.deepEqual(h.row().autotuneRequest, {
      action: 'start',
      atMs: h.clock.nowMs(),
      generation: answer.generation,
      options: {},
    });
    assert.equal(h.row().generation, answer.generation, 'stored before the answer');
    const requested = h.events('autotune-requested');
    assert.deepEqual(
      requested.map((e) => [e.loop, e.source]),
      [['room', 'mqtt']],
    );
    assert.deepEqual(h.triggers, [{ loop: 'room', reason: 'mqtt autotune' }]);
  });

  test('given options over http, then they are stored as sent (side, closedLoopS, maxDurationS) with the requestId on the event', () => {
    const h = given();
    const answer = h.send(
      'autotune',
      '{"action":"start","side":"raise","closedLoopS":90,"maxDurationS":21600,"requestId":"r-1"}',
    );
    assert.equal(answer.outcome.accepted, true);
    assert.equal(answer.outcome.requestId, 'r-1');
    assert.deepEqual(h.row().autotuneRequest?.options, {
      side: 'raise',
      closedLoopS: 90,
      maxDurationS: 21_600,
    });
    const event = h.events('autotune-requested')[0];
    assert.equal(event?.source, 'http');
    assert.equal((event?.data as { requestId?: string } | undefined)?.requestId, 'r-1');
  });

  test('given a two-sided loop in heat_cool, when a side is given, then it is accepted', () => {
    const h = given();
    const answer = h.send('autotune', '{"side":"lower"}', 'chamber');
    assert.equal(answer.outcome.accepted, true);
    assert.deepEqual(h.row('chamber').autotuneRequest?.options, { side: 'lower' });
  });

  const refusals: {
    name: string;
    loop?: string;
    payload: string;
    /** Desired state changed first (a mode). */
    before?: [loop: string, mode: string];
    refusal: NonNullable<CommandAnswer['refusal']>;
    reason: RegExp;
  }[] = [
    {
      name: 'a hysteresis loop',
      loop: 'plain',
      payload: 'start',
      refusal: 'invalid',
      reason: /^autotune needs a pid controller: this loop's controller is hysteresis/,
    },
    {
      name: 'a loop whose desired mode is off',
      payload: 'start',
      before: ['room', 'off'],
      refusal: 'invalid',
      reason: /^the loop is off: set the mode/,
    },
    {
      name: 'heat_cool without a side',
      loop: 'chamber',
      payload: '{}',
      refusal: 'invalid',
      reason: /^mode heat_cool has two sides: say which one to tune \(side "raise" or "lower"\)$/,
    },
    {
      name: 'a side the loop has no actuator for',
      payload: '{"side":"lower"}',
      refusal: 'invalid',
      reason: /^the loop has no actuator to lower the value \(side "lower"\): it has "raise"$/,
    },
    {
      name: 'a side the desired mode does not let act (chamber in heat, side lower)',
      loop: 'chamber',
      payload: '{"side":"lower"}',
      before: ['chamber', 'heat'],
      refusal: 'invalid',
      reason: /^mode heat does not let the lower side act: switch the mode, or tune side "raise"$/,
    },
    {
      name: 'a bad value (never clamped)',
      payload: '{"maxDurationS":-1}',
      refusal: 'invalid',
      reason: /maxDurationS must be a number of seconds above 0/,
    },
    {
      name: 'an unknown loop',
      loop: 'attic',
      payload: 'start',
      refusal: 'unknown-loop',
      reason: /^unknown loop "attic"$/,
    },
  ];
  for (const c of refusals) {
    test(`given ${c.name}, then it is refused with why, nothing is stored, the loop is not woken, and the refusal is noted`, () => {
      const h = given();
      const loop = c.loop ?? 'room';
      if (c.before) h.send('mode', c.before[1], c.before[0]);
      h.triggers.length = 0;
      const before = h.store.desired.desired(loop);
      const answer = h.send('autotune', c.payload, loop);

      assert.equal(answer.outcome.accepted, false);
      assert.match(reasonOf(answer), c.reason);
      assert.equal(answer.refusal, c.refusal);
      assert.equal(answer.generation, before?.generation);
      assert.deepEqual(h.store.desired.desired(loop), before, 'nothing stored');
      assert.deepEqual(h.events('autotune-requested'), []);
      assert.deepEqual(h.triggers, []);
      const rejected = h.events('command-rejected');
      assert.equal(rejected.length, 1);
      assert.equal(rejected[0]?.loop, before === undefined ? undefined : loop);
      if (before) assert.match(rejected[0]?.message ?? '', /^autotune rejected: /);
    });
  }

  test('given the store does not take the request, then it is refused as not stored (503 over http), not noted', () => {
    const h = given({ failing: ['requestAutotune'] });
    const answer = h.send('autotune', 'start');
    assert.equal(answer.refusal, 'not-stored');
    assert.match(reasonOf(answer), /^not stored: database or disk is full/);
    assert.equal(h.row().autotuneRequest, undefined);
    assert.deepEqual(h.events('command-rejected'), []);
    assert.deepEqual(h.triggers, []);
  });
});

describe('autotune: cancel', () => {
  test('given no run was requested, then a cancel is accepted and changes nothing (same generation, no event, no cycle)', () => {
    const h = given();
    const before = h.row().generation;
    const answer = h.send('autotune', 'cancel', 'room', 'mqtt');
    assert.deepEqual(answer.outcome, { accepted: true, change: { autotune: { action: 'cancel' } } });
    assert.equal(answer.generation, before);
    assert.equal(h.row().autotuneRequest, undefined);
    assert.deepEqual(h.events('autotune-cancel-requested'), []);
    assert.deepEqual(h.triggers, []);
  });

  test('given a start was requested, then a cancel is stored with its own generation and event and wakes the loop; a second cancel changes nothing', () => {
    const h = given();
    const started = h.send('autotune', 'start');
    const cancelled = h.send('autotune', 'cancel', 'room', 'mqtt');
    assert.equal(cancelled.outcome.accepted, true);
    assert.ok(cancelled.generation! > started.generation!);
    assert.equal(h.row().autotuneRequest?.action, 'cancel');
    assert.deepEqual(
      h.events('autotune-cancel-requested').map((e) => e.source),
      ['mqtt'],
    );
    assert.deepEqual(h.triggers.at(-1), { loop: 'room', reason: 'mqtt autotune' });

    const again = h.send('autotune', '{"action":"cancel"}');
    assert.equal(again.outcome.accepted, true);
    assert.equal(again.generation, cancelled.generation);
    assert.equal(h.events('autotune-cancel-requested').length, 1);
  });

  test('given a loop that could not start one now (mode off, hysteresis), then a cancel is still no refusal', () => {
    const h = given();
    h.send('autotune', 'start');
    h.send('mode', 'off');
    assert.equal(h.send('autotune', 'cancel').outcome.accepted, true);
    assert.equal(h.row().autotuneRequest?.action, 'cancel');
    assert.equal(h.send('autotune', 'cancel', 'plain').outcome.accepted, true);
  });
});

describe('autotune and the change budget (3 at once here)', () => {
  test('given the budget is spent by setpoints, then a start is refused as rate-limited and a cancel is still accepted', () => {
    const h = given();
    assert.equal(h.send('autotune', 'start').outcome.accepted, true);
    for (const setpoint of ['21', '22']) assert.equal(h.send('setpoint', setpoint).outcome.accepted, true);
    const limited = h.send('autotune', 'start', 'room', 'mqtt');
    assert.equal(limited.refusal, 'rate-limited');
    assert.match(reasonOf(limited), /too many changes: loop room accepts 3/);
    assert.equal(h.events('autotune-requested').length, 1);

    const cancelled = h.send('autotune', 'cancel');
    assert.equal(cancelled.outcome.accepted, true);
    assert.equal(h.row().autotuneRequest?.action, 'cancel');
  });

  test('given starts spent the budget, then a setpoint is refused too (one budget per loop, every command)', () => {
    const h = given();
    for (let i = 0; i < 3; i++)
      assert.equal(h.send('autotune', 'start').outcome.accepted, true, `start ${i}`);
    assert.equal(h.send('setpoint', '21').refusal, 'rate-limited');
  });
});

describe('tuning: apply a stored version, accept the latest, or go back to the file', () => {
  function withTunings() {
    const h = given();
    h.store.desired.recordTuning('room', GAINS(0.3), { apply: false, source: 'autotune' });
    h.store.desired.recordTuning('room', GAINS(0.4), { apply: false, source: 'autotune' });
    return h;
  }

  test('given two proposals, when "latest" arrives over mqtt, then version 2 is put in force (answer names it), stored before the answer, the loop woken', () => {
    const h = withTunings();
    const before = h.row().generation;
    const answer = h.send('tuning', 'latest', 'room', 'mqtt');
    assert.deepEqual(answer.outcome, { accepted: true, change: { tuning: 2 } });
    assert.equal(answer.changed, true);
    assert.ok(answer.generation! > before);
    assert.equal(h.row().tuning?.version, 2);
    assert.equal(h.row().generation, answer.generation);
    const applied = h.events('tuning-applied');
    assert.deepEqual(
      applied.map((e) => [e.source, (e.data as { to: unknown }).to]),
      [['mqtt', 2]],
    );
    assert.deepEqual(h.triggers, [{ loop: 'room', reason: 'mqtt tuning' }]);
  });

  test('given version 2 in force, when it is asked for again, then accepted unchanged: same generation, no event, no cycle, no budget', () => {
    const h = withTunings();
    const first = h.send('tuning', '2');
    for (let i = 0; i < 5; i++) {
      const again = h.send('tuning', i % 2 === 0 ? 'latest' : '{"version":2}');
      assert.deepEqual(
        [again.outcome.accepted, again.changed, again.generation],
        [true, false, first.generation],
      );
    }
    assert.equal(h.events('tuning-applied').length, 1);
    assert.equal(h.triggers.length, 1);
    assert.equal(h.send('setpoint', '21').outcome.accepted, true, 'the budget was not spent');
  });

  test('given version 2 in force, then version 1 is restorable, and "config" goes back to the file gains', () => {
    const h = withTunings();
    h.send('tuning', 'latest');
    const restored = h.send('tuning', '{"version":1,"requestId":"back"}');
    assert.deepEqual(
      [restored.outcome.accepted, restored.changed, restored.outcome.requestId],
      [true, true, 'back'],
    );
    assert.equal(h.row().tuning?.version, 1);
    const file = h.send('tuning', 'config');
    assert.deepEqual(file.outcome, { accepted: true, change: { tuning: 'config' } });
    assert.equal(file.changed, true);
    assert.equal(h.row().tuning, undefined);
  });

  const refusals: [name: string, loop: string, payload: string, reason: RegExp, tunings: boolean][] = [
    ['an unknown version (the store’s message)', 'room', '9', /^loop "room" has no tuning version 9$/, true],
    [
      '"latest" with no stored tuning',
      'room',
      'latest',
      /^no stored tuning to accept: run an autotune first \(homeostat autotune room\)$/,
      false,
    ],
    [
      'a hysteresis loop',
      'plain',
      'config',
      /^tunings are pid gains: this loop's controller is hysteresis/,
      false,
    ],
    ['a malformed version', 'room', '{"version":0}', /whole number from 1/, true],
  ];
  for (const [name, loop, payload, reason, tunings] of refusals) {
    test(`given ${name}, then it is refused as invalid (422), nothing changes, and the refusal is noted`, () => {
      const h = tunings ? withTunings() : given();
      const before = h.store.desired.desired(loop);
      const answer = h.send('tuning', payload, loop);
      assert.equal(answer.outcome.accepted, false);
      assert.match(reasonOf(answer), reason);
      assert.equal(answer.refusal, 'invalid');
      assert.equal(answer.generation, before?.generation);
      assert.deepEqual(h.store.desired.desired(loop), before);
      assert.deepEqual(h.events('tuning-applied'), []);
      assert.deepEqual(h.triggers, []);
      assert.match(h.events('command-rejected')[0]?.message ?? '', /^tuning rejected: /);
      assert.deepEqual(
        h.log.messages().filter((m) => /storage write failed/.test(m)),
        [],
        'not a storage failure',
      );
    });
  }

  test('given the change budget is spent, then a change of tuning is refused as rate-limited', () => {
    const h = withTunings();
    for (const setpoint of ['21', '22', '23']) h.send('setpoint', setpoint);
    const answer = h.send('tuning', 'latest');
    assert.equal(answer.refusal, 'rate-limited');
    assert.equal(h.row().tuning, undefined);
  });

  test('given the store cannot list the tunings, then "latest" is refused as not stored', () => {
    const h = given({ failing: ['tunings'] });
    const answer = h.send('tuning', 'latest');
    assert.equal(answer.refusal, 'not-stored');
    assert.match(reasonOf(answer), /^not stored: database or disk is full/);
  });
});
