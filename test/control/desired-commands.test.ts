import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { CommandKind } from '../../src/control/commands.js';
import { type FaultResetOutcome, NOTHING_LATCHED_REASON } from '../../src/control/commands.js';
import type { CommandAnswer, CommandRequest, CommandSource } from '../../src/control/desired-commands.js';
import { DesiredCommands } from '../../src/control/desired-commands.js';
import type { LoopControl } from '../../src/control/loop-control.js';
import { applyConfig } from '../../src/daemon/store.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import type { DesiredStore } from '../../src/store/desired-store.js';
import { minimalSimConfigText, validConfig } from '../support/config.js';
import { recordingLogger } from '../support/logger.js';
import { type MemoryStore, memoryStore } from '../support/store.js';

/**
 * The command path shared by MQTT and HTTP, as a specification: loop `room` (setpoint 20,
 * limits 5..30, mode heat) in a real in-memory store, a fake daemon that records the cycles
 * and fault resets it is asked for, and a change limit of 3 at once (1 per minute after).
 */

const TEXT = minimalSimConfigText();
const LIMIT = { burst: 3, perMinute: 1 };
const open: MemoryStore[] = [];
afterEach(() => {
  for (const store of open.splice(0)) store.close();
});

interface Options {
  /** Store methods that throw like a full disk. */
  failing?: string[];
  /** What the daemon answers a fault reset. */
  reset?: FaultResetOutcome;
  /** The guards' own clock (real time under a scaled daemon clock). */
  guardClock?: ManualClock;
}

function given(opts: Options = {}) {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const config = validConfig(TEXT);
  const store = memoryStore(clock);
  open.push(store);
  applyConfig(store, config, TEXT);
  const failing = new Set(opts.failing ?? []);
  const desired = new Proxy(store.desired, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (failing.has(String(prop))) throw new Error('database or disk is full');
        return value.apply(target, args);
      };
    },
  }) as DesiredStore;
  const triggers: { loop: string; reason: string }[] = [];
  const resets: { loop: string; source: string; atMs: number }[] = [];
  const control: LoopControl = {
    currentConfig: () => config,
    statuses: () => [],
    triggerLoop: (loop, reason) => void triggers.push({ loop, reason }),
    requestFaultReset: (loop, source, atMs) => {
      resets.push({ loop, source, atMs });
      return opts.reset ?? { accepted: true, generation: 99 };
    },
  };
  const log = recordingLogger();
  const commands = new DesiredCommands({
    control,
    desired,
    clock,
    ...(opts.guardClock ? { guardClock: opts.guardClock } : {}),
    logger: log.logger,
    changeLimit: LIMIT,
  });
  const send = (kind: CommandKind, payload: string, source: CommandSource = 'http', loop = 'room') =>
    commands.submit({ loop, kind, payload: Buffer.from(payload), source, receivedAtMs: clock.nowMs() });
  const generation = () => store.desired.desired('room')?.generation;
  const events = (kind?: string) =>
    store.desired.events().filter((e) => kind === undefined || e.kind === kind);
  return { clock, store, commands, send, triggers, resets, generation, events, log };
}

describe('DesiredCommands: a command from any source', () => {
  test('given a valid setpoint over http, then it is stored with source http and the answer carries the new generation', () => {
    const h = given();
    const before = h.generation();
    const answer = h.send('json', '{"setpoint":21.5,"requestId":"r1"}');

    assert.equal(answer.known, true);
    assert.equal(answer.outcome.accepted, true);
    assert.equal(answer.outcome.requestId, 'r1');
    assert.equal(answer.refusal, undefined);
    const row = h.store.desired.desired('room');
    assert.equal(row?.setpoint, 21.5);
    assert.equal(row?.setpointSource, 'http');
    assert.ok(before !== undefined && answer.generation !== undefined && answer.generation > before);
    assert.equal(answer.generation, row?.generation, 'stored before the answer');
    const changed = h.events('setpoint-changed');
    assert.equal(changed.length, 1);
    assert.equal(changed[0]?.source, 'http');
    assert.deepEqual(h.triggers, [{ loop: 'room', reason: 'http set' }]);
  });

  const refusals: {
    name: string;
    options?: Options;
    kind: CommandKind;
    payload: string;
    loop?: string;
    refusal: NonNullable<CommandAnswer['refusal']>;
    reason: RegExp;
    known: boolean;
    /** A rejection event is written (a store that refuses writes cannot record one). */
    noted: boolean;
  }[] = [
    {
      name: 'a setpoint outside the limits is refused (never clamped)',
      kind: 'setpoint',
      payload: '99',
      refusal: 'invalid',
      reason: /outside the limits/,
      known: true,
      noted: true,
    },
    {
      name: 'a mode the loop does not allow is refused',
      kind: 'mode',
      payload: 'cool',
      refusal: 'invalid',
      reason: /mode/,
      known: true,
      noted: true,
    },
    {
      name: 'a loop that is not in the config is unknown',
      kind: 'setpoint',
      payload: '21',
      loop: 'attic',
      refusal: 'unknown-loop',
      reason: /unknown loop "attic"/,
      known: false,
      noted: true,
    },
    {
      name: '"__proto__" is an unknown loop (own keys only)',
      kind: 'json',
      payload: '{"setpoint":21}',
      loop: '__proto__',
      refusal: 'unknown-loop',
      reason: /unknown loop "__proto__"/,
      known: false,
      noted: true,
    },
    {
      name: 'a setpoint the store does not take is refused as not stored',
      options: { failing: ['setDesired'] },
      kind: 'setpoint',
      payload: '22',
      refusal: 'not-stored',
      reason: /not stored: database or disk is full/,
      known: true,
      noted: false,
    },
    {
      name: 'a fault reset with nothing latched is refused',
      options: { reset: { accepted: false, reason: NOTHING_LATCHED_REASON, generation: 1 } },
      kind: 'faultReset',
      payload: '',
      refusal: 'nothing-latched',
      reason: /nothing to reset/,
      known: true,
      noted: true,
    },
  ];
  for (const c of refusals) {
    test(`given ${c.name}, then the answer says why, nothing is stored and the loop is not woken`, () => {
      const h = given(c.options);
      const before = h.store.desired.desired('room');
      const answer = h.send(c.kind, c.payload, 'http', c.loop);

      assert.equal(answer.outcome.accepted, false);
      assert.match(answer.outcome.accepted ? '' : answer.outcome.reason, c.reason);
      assert.equal(answer.refusal, c.refusal);
      assert.equal(answer.known, c.known);
      assert.equal(answer.generation, c.known ? before?.generation : undefined, 'unchanged generation');
      assert.deepEqual(h.store.desired.desired('room'), before, 'nothing stored');
      assert.deepEqual(h.triggers, []);
      const rejected = h.events('command-rejected');
      assert.equal(rejected.length, c.noted ? 1 : 0);
      if (c.noted) {
        assert.equal(rejected[0]?.source, 'http');
        assert.equal(rejected[0]?.loop, c.known ? 'room' : undefined);
      }
    });
  }

  test('given the invalid JSON command carries a requestId, then the refusal keeps it', () => {
    const h = given();
    const answer = h.send('json', '{"setpoint":99,"requestId":"abc"}');
    assert.equal(answer.refusal, 'invalid');
    assert.equal(answer.outcome.requestId, 'abc');
  });

  test('given an mqtt burst spent the change budget, then an http change of the same loop is refused as rate-limited', () => {
    const h = given();
    for (const setpoint of ['21', '22', '23']) {
      assert.equal(h.send('setpoint', setpoint, 'mqtt').outcome.accepted, true, `mqtt ${setpoint}`);
    }
    const stored = h.generation();
    const answer = h.send('json', '{"setpoint":24,"requestId":"late"}', 'http');

    assert.equal(answer.refusal, 'rate-limited');
    assert.match(
      answer.outcome.accepted ? '' : answer.outcome.reason,
      /too many changes: loop room accepts 3/,
    );
    assert.equal(answer.outcome.requestId, 'late');
    assert.equal(answer.generation, stored);
    assert.equal(h.store.desired.desired('room')?.setpoint, 23);
    const rejected = h.events('command-rejected');
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]?.source, 'http');
  });

  test('given the change budget is spent, then mode off is still accepted (stopping a loop is never rate-limited)', () => {
    const h = given();
    for (const setpoint of ['21', '22', '23']) h.send('setpoint', setpoint, 'mqtt');
    assert.equal(h.send('setpoint', '24', 'http').refusal, 'rate-limited');

    const answer = h.send('mode', 'off', 'http');
    assert.equal(answer.outcome.accepted, true);
    assert.equal(h.store.desired.desired('room')?.mode, 'off');
    assert.equal(h.store.desired.desired('room')?.modeSource, 'http');
  });

  test('given the current desired state is asked for again, then it is accepted with the same generation, no event and no cycle', () => {
    const h = given();
    const first = h.send('setpoint', '21');
    const eventsBefore = h.events().length;
    const again = h.send('json', '{"setpoint":21,"mode":"heat"}');

    assert.equal(again.outcome.accepted, true);
    assert.equal(again.generation, first.generation);
    assert.equal(h.events().length, eventsBefore);
    assert.equal(h.triggers.length, 1, 'only the first woke the loop');
  });

  test('given a latched fault, when a reset arrives over http, then the daemon is asked with source http and receipt time, and the answer carries its generation', () => {
    const h = given({ reset: { accepted: true, generation: 42 } });
    const answer = h.send('faultReset', '');

    assert.deepEqual(h.resets, [{ loop: 'room', source: 'http', atMs: h.clock.nowMs() }]);
    assert.equal(answer.outcome.accepted, true);
    assert.equal(answer.generation, 42);
    assert.deepEqual(h.triggers, [{ loop: 'room', reason: 'http fault reset' }]);
  });

  test('given a transport refusal (an MQTT retained command), then it is noted with its source and answered', () => {
    const h = given();
    const request: CommandRequest = {
      loop: 'room',
      kind: 'setpoint',
      payload: Buffer.from('21'),
      source: 'mqtt',
      receivedAtMs: h.clock.nowMs(),
    };
    const answer = h.commands.refuse(request, 'retained command refused');

    assert.equal(answer.outcome.accepted, false);
    assert.equal(answer.generation, h.generation());
    const rejected = h.events('command-rejected');
    assert.equal(rejected[0]?.source, 'mqtt');
    assert.equal(rejected[0]?.message, 'setpoint rejected: retained command refused');
  });

  test('given an onAnswer listener, then it hears every answer until it unsubscribes, and a throwing listener changes nothing', () => {
    const h = given();
    const heard: { source: string; accepted: boolean }[] = [];
    const unsubscribe = h.commands.onAnswer((request, answer) =>
      heard.push({ source: request.source, accepted: answer.outcome.accepted }),
    );
    h.commands.onAnswer(() => {
      throw new Error('broken metrics');
    });
    h.send('setpoint', '21', 'mqtt');
    h.send('setpoint', '99', 'http');
    unsubscribe();
    const last = h.send('setpoint', '22', 'http');

    assert.deepEqual(heard, [
      { source: 'mqtt', accepted: true },
      { source: 'http', accepted: false },
    ]);
    assert.equal(last.outcome.accepted, true);
    assert.ok(h.log.messages().includes('command answer listener failed'));
  });

  test('given a daemon that throws on a cycle request, then the stored change is still accepted', () => {
    const h = given();
    const throwing = new DesiredCommands({
      control: {
        currentConfig: () => validConfig(TEXT),
        statuses: () => [],
        triggerLoop: () => {
          throw new Error('runner gone');
        },
        requestFaultReset: () => ({ accepted: false, reason: NOTHING_LATCHED_REASON }),
      },
      desired: h.store.desired,
      clock: h.clock,
      logger: h.log.logger,
    });
    const answer = throwing.submit({
      loop: 'room',
      kind: 'setpoint',
      payload: Buffer.from('25'),
      source: 'http',
      receivedAtMs: h.clock.nowMs(),
    });
    assert.equal(answer.outcome.accepted, true);
    assert.equal(h.store.desired.desired('room')?.setpoint, 25);
    throwing.stop();
  });
});

describe('DesiredCommands: the guards run on real time, whatever the daemon clock (--speed)', () => {
  for (const [label, withGuardClock, accepted] of [
    ['with a guard clock that stands still (a flood within one real second)', true, LIMIT.burst],
    ['without one, on the daemon clock (tests, speed 1)', false, 12],
  ] as const) {
    test(`given the daemon clock running a simulated minute between changes, ${label}: ${accepted} of 12 accepted`, async () => {
      const guardClock = new ManualClock(Date.UTC(2026, 0, 1));
      const h = given(withGuardClock ? { guardClock } : {});
      let accepts = 0;
      for (let i = 0; i < 12; i++) {
        await h.clock.advance(60_000); // ×60: a real second is a simulated minute
        if (h.send('setpoint', String(10 + i)).outcome.accepted) accepts++;
      }
      assert.equal(accepts, accepted);
    });
  }

  for (const [label, withGuardClock, expectedEvents] of [
    ['with a guard clock: the first event, then one count for the other 59', true, 2],
    ['without one: a window closes every simulated minute', false, 60],
  ] as const) {
    test(`given 60 refused commands a simulated minute apart within a real second, ${label}`, async () => {
      const guardClock = new ManualClock(Date.UTC(2026, 0, 1));
      const h = given(withGuardClock ? { guardClock } : {});
      for (let i = 0; i < 60; i++) {
        await h.clock.advance(60_000);
        h.send('setpoint', '99');
      }
      h.commands.stop();
      const rejected = h.events().filter((e) => /rejected/.test(e.message));
      assert.equal(rejected.length, expectedEvents, JSON.stringify(rejected.map((e) => e.message)));
    });
  }
});
