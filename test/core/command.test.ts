import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type CommandDecision,
  type CommandMemory,
  decideCommand,
  levelsEqual,
  retryDelayMs,
} from '../../src/core/command.js';
import type { ActuatorLevel } from '../../src/core/types.js';
import { at, s } from './fixtures.js';

const timing = { keepAliveMs: s(600), retryInitialMs: s(10) };
const regulate = { reason: 'regulate', detail: 'output 100 %' } as const;

function decide(
  wanted: number,
  observed: ActuatorLevel,
  last: CommandMemory | undefined,
  atS: number,
  why: { reason: 'regulate' | 'safe-state'; detail: string } = regulate,
): CommandDecision {
  return decideCommand('heater', wanted, observed, last, at(s(atS)), timing, why);
}

/** Memory of a command for `level` sent at `atS` seconds. */
function sent(level: number, atS: number, attempts: number, confirmed: boolean): CommandMemory {
  return { level, atMs: at(s(atS)), attempts, confirmed };
}

describe('decideCommand: one decision', () => {
  const table: Array<
    [
      given: string,
      wanted: number,
      observed: ActuatorLevel,
      last: CommandMemory | undefined,
      reason: string | undefined,
    ]
  > = [
    ['observed = wanted, never asked', 1, 1, undefined, undefined],
    ['observed = wanted, asked and unconfirmed', 1, 1, sent(1, 0, 1, false), undefined],
    ['observed within 0.005 of wanted', 0.5, 0.503, undefined, undefined],
    ['observed differs, never asked', 1, 0, undefined, 'regulate'],
    ['observed 0.01 off a continuous level', 0.5, 0.51, undefined, 'regulate'],
    ['observed unknown, never asked', 0, undefined, undefined, 'regulate'],
    ['observed unknown after a confirmed command', 1, undefined, sent(1, 0, 0, true), 'drift'],
    ['wanted changed since the last command', 1, 0, sent(0, 0, 0, true), 'regulate'],
    ['asked 5 s ago, unconfirmed', 1, 0, sent(1, 55, 1, false), undefined],
    ['asked 10 s ago, unconfirmed', 1, 0, sent(1, 50, 1, false), 'retry'],
    ['confirmed, then changed by hand', 1, 0, sent(1, 0, 0, true), 'drift'],
  ];
  for (const [given, wanted, observed, last, reason] of table) {
    test(`${given} → ${reason ?? 'no command'}`, () => {
      const decision = decide(wanted, observed, last, 60);
      assert.equal(decision.command?.reason, reason);
      if (decision.command) {
        assert.deepEqual(decision.command, {
          actuatorId: 'heater',
          level: wanted,
          reason,
          detail: regulate.detail,
        });
        assert.equal(decision.memory.atMs, at(s(60)), 'the send time is remembered');
      }
      assert.equal(decision.confirmed, levelsEqual(observed, wanted));
      assert.ok(decision.nextWakeMs > at(s(60)), 'the next wake-up is in the future');
    });
  }

  test('the reason for a first command is the caller’s: safe-state', () => {
    const decision = decide(0, 1, sent(1, 0, 0, true), 60, { reason: 'safe-state', detail: 'sensor Stale' });
    assert.equal(decision.command?.reason, 'safe-state');
    assert.equal(decision.command?.detail, 'sensor Stale');
  });
});

describe('decideCommand: over time', () => {
  /** Calls decideCommand every second with a fixed observed level; returns the sends. */
  function every1s(
    untilS: number,
    wanted: number,
    observedAt: (atS: number) => ActuatorLevel,
  ): Array<[atS: number, reason: string]> {
    const sends: Array<[number, string]> = [];
    let memory: CommandMemory | undefined;
    let wakeS = 0;
    for (let t = 0; t <= untilS; t++) {
      const decision = decide(wanted, observedAt(t), memory, t);
      if (decision.command) {
        sends.push([t, decision.command.reason]);
        // Only news (a changed observation) may bring a send forward.
        const news = t > 0 && !Object.is(observedAt(t), observedAt(t - 1));
        assert.ok(news || t >= wakeS, `sent at ${t} s before the announced wake-up ${wakeS} s`);
      }
      wakeS = (decision.nextWakeMs - at(0)) / 1000;
      memory = decision.memory;
    }
    return sends;
  }

  test('an actuator that never confirms: retries 10, 20, 40 … s apart, capped at keep-alive (600 s)', () => {
    const sends = every1s(2_000, 1, () => 0);
    assert.deepEqual(sends, [
      [0, 'regulate'],
      [10, 'retry'],
      [30, 'retry'],
      [70, 'retry'],
      [150, 'retry'],
      [310, 'retry'],
      [630, 'retry'],
      [1_230, 'retry'], // 640 s would exceed the keep-alive: 600 s
      [1_830, 'retry'],
    ]);
  });

  test('an actuator of unknown state is treated like an unconfirmed one', () => {
    const sends = every1s(100, 0, () => undefined);
    assert.deepEqual(
      sends.map(([t]) => t),
      [0, 10, 30, 70],
    );
  });

  test('confirmed: silent until the keep-alive, then re-asserted every keepAliveMs', () => {
    // Sent at 0 s, seen at the wanted level from 3 s on.
    const sends = every1s(1_900, 1, (t) => (t >= 3 ? 1 : 0));
    assert.deepEqual(sends, [
      [0, 'regulate'],
      [600, 'keep-alive'],
      [1_200, 'keep-alive'],
      [1_800, 'keep-alive'],
    ]);
  });

  test('confirmed, then switched by hand: a drift command at once, then retries if it persists', () => {
    const sends = every1s(200, 1, (t) => (t >= 3 && t < 100 ? 1 : 0));
    assert.deepEqual(sends, [
      [0, 'regulate'],
      [100, 'drift'],
      [110, 'retry'],
      [130, 'retry'],
      [170, 'retry'],
    ]);
  });

  test('nextWakeMs says when the next retry or keep-alive is due', () => {
    const first = decide(1, 0, undefined, 0);
    assert.equal(first.nextWakeMs, at(s(10)));
    const waiting = decide(1, 0, first.memory, 4);
    assert.equal(waiting.command, undefined);
    assert.equal(waiting.nextWakeMs, at(s(10)));
    const confirmed = decide(1, 1, first.memory, 5);
    assert.equal(confirmed.nextWakeMs, at(s(600)));
    assert.deepEqual(confirmed.memory, sent(1, 0, 0, true));
  });
});

describe('retryDelayMs and levelsEqual', () => {
  test('backoff: initial, doubling, capped at keep-alive', () => {
    const table: Array<[attempts: number, delayS: number]> = [
      [0, 10],
      [1, 10],
      [2, 20],
      [3, 40],
      [6, 320],
      [7, 600],
      [1_000, 600],
    ];
    for (const [attempts, delayS] of table)
      assert.equal(retryDelayMs(attempts, timing), s(delayS), `${attempts}`);
  });

  test('levels: equal within 0.005; unknown equals nothing', () => {
    const table: Array<[a: ActuatorLevel, b: ActuatorLevel, equal: boolean]> = [
      [1, 1, true],
      [0.5, 0.504, true],
      [0.5, 0.51, false],
      [0, 1, false],
      [undefined, 0, false],
      [undefined, undefined, false],
    ];
    for (const [a, b, equal] of table) assert.equal(levelsEqual(a, b), equal, `${a} vs ${b}`);
  });
});
