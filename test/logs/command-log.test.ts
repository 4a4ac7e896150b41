/**
 * Every command leaves a line a person can read: source, loop, old → new when accepted (info),
 * the reason when rejected (warn), and a flood of rejections coalesced, not one line each.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { pino } from 'pino';
import type { CommandKind } from '../../src/control/commands.js';
import { type CommandSource, DesiredCommands, describeChange } from '../../src/control/desired-commands.js';
import type { LoopControl } from '../../src/control/loop-control.js';
import { applyConfig } from '../../src/daemon/store.js';
import { journalStream } from '../../src/logger.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { minimalSimConfigText, validConfig } from '../support/config.js';
import { type MemoryStore, memoryStore } from '../support/store.js';

const TEXT = minimalSimConfigText();
const open: MemoryStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

/** Loop `room` (setpoint 20, limits 5..30, mode heat) and the journal lines its commands write. */
function given(level: pino.LevelWithSilent = 'info') {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const config = validConfig(TEXT);
  const store = memoryStore(clock);
  open.push(store);
  applyConfig(store, config, TEXT);
  const control: LoopControl = {
    currentConfig: () => config,
    statuses: () => [],
    triggerLoop: () => {},
    requestFaultReset: () => ({ accepted: true, generation: 7 }),
  };
  const lines: string[] = [];
  const logger = pino({ level }, journalStream({ write: (text: string) => lines.push(text) }));
  const commands = new DesiredCommands({
    control,
    desired: store.desired,
    clock,
    logger: logger.child({ component: 'mqtt' }),
  });
  const send = (kind: CommandKind, payload: string, source: CommandSource = 'mqtt', loop = 'room') =>
    commands.submit({ loop, kind, payload: Buffer.from(payload), source, receivedAtMs: clock.nowMs() });
  return { clock, commands, send, lines, generation: () => store.desired.desired('room')?.generation };
}

describe('accepted commands: one info line each, old → new', () => {
  test('given setpoint 20, when mqtt sets 21.5, then `room: mqtt command: setpoint 20 → 21.5 (generation N)`', () => {
    const h = given();
    h.send('setpoint', '21.5');
    assert.deepEqual(h.lines, [`<6>room: mqtt command: setpoint 20 → 21.5 (generation ${h.generation()})\n`]);
  });

  test('given mode heat, when http sends mode off and a setpoint, then both changes on one line', () => {
    const h = given();
    h.send('json', '{"setpoint":18,"mode":"off"}', 'http');
    assert.deepEqual(h.lines, [
      `<6>room: http command: setpoint 20 → 18, mode heat → off (generation ${h.generation()})\n`,
    ]);
  });

  test('given a fault reset accepted, then `room: mqtt command: fault reset (generation 7)`', () => {
    const h = given();
    h.send('faultReset', 'reset');
    assert.deepEqual(h.lines, ['<6>room: mqtt command: fault reset (generation 7)\n']);
  });

  test('given the setpoint already desired (a QoS 1 duplicate), then no info line, a debug one', () => {
    const quiet = given();
    quiet.send('setpoint', '20');
    assert.deepEqual(quiet.lines, []);
    const verbose = given('debug');
    verbose.send('setpoint', '20');
    assert.deepEqual(verbose.lines, [`<7>room: mqtt command: setpoint 20 → 20 (unchanged)\n`]);
  });

  const changes: Array<
    [before: { setpoint: number; mode: string } | undefined, change: object, text: string]
  > = [
    [{ setpoint: 20, mode: 'heat' }, { setpoint: 21.5 }, 'setpoint 20 → 21.5'],
    [{ setpoint: 20, mode: 'heat' }, { mode: 'off' }, 'mode heat → off'],
    [{ setpoint: 20, mode: 'heat' }, { setpoint: 5, mode: 'off' }, 'setpoint 20 → 5, mode heat → off'],
    [undefined, { setpoint: 21 }, 'setpoint ? → 21'],
  ];
  for (const [before, change, text] of changes) {
    test(`describeChange: ${text}`, () => {
      assert.equal(describeChange(before, change), text);
    });
  }
});

describe('rejected commands: a warning with the reason, coalesced', () => {
  test('given a setpoint outside the limits, then one warning naming source, loop and reason', () => {
    const h = given();
    h.send('setpoint', '99');
    assert.equal(h.lines.length, 1);
    assert.match(h.lines[0]!, /^<4>room: mqtt setpoint rejected: .*99.*5\.\.30/);
  });

  test('given an unknown loop, then a warning without a loop prefix', () => {
    const h = given();
    h.send('setpoint', '21', 'mqtt', 'attic');
    assert.deepEqual(h.lines, ['<4>mqtt command rejected: unknown loop "attic"\n']);
  });

  test('given 10,000 bad setpoints in a minute, then two warnings: the first, and a count at the end of the window', async () => {
    const h = given();
    for (let i = 0; i < 10_000; i++) h.send('setpoint', String(100 + i));
    assert.equal(h.lines.length, 1, 'the first at once');
    await h.clock.advance(60_000);
    assert.equal(h.lines.length, 2);
    assert.match(
      h.lines[1]!,
      /^<4>room: mqtt 9999 more commands rejected like this in the last 60 s, the last: setpoint rejected: /,
    );
    h.commands.stop();
  });

  test('given a different mistake in the same window, then it gets its own warning at once', () => {
    const h = given();
    h.send('setpoint', '99');
    h.send('mode', 'cool');
    assert.equal(h.lines.length, 2);
    assert.match(h.lines[1]!, /^<4>room: mqtt mode rejected: /);
  });
});
