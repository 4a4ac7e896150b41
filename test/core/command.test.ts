import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type CommandDecision,
  type CommandMemory,
  decideCommand,
  LEVEL_STEP,
  levelOnGrid,
  levelsEqual,
  retryDelayMs,
  SEND_RESOLUTION,
  sameCommand,
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
      confirmed: boolean,
    ]
  > = [
    ['observed = wanted, never asked', 1, 1, undefined, undefined, true],
    ['observed = wanted, asked and unconfirmed', 1, 1, sent(1, 0, 1, false), undefined, true],
    [
      'never asked, a rounding driver within 0.005: one write makes sure',
      0.5,
      0.503,
      undefined,
      'regulate',
      false,
    ],
    [
      'asked 0.5312, a rounding driver reports 0.53',
      0.5312,
      0.53,
      sent(0.5312, 50, 1, false),
      undefined,
      true,
    ],
    ['observed differs, never asked', 1, 0, undefined, 'regulate', false],
    ['observed 0.01 off a continuous level', 0.5, 0.51, undefined, 'regulate', false],
    ['observed unknown, never asked', 0, undefined, undefined, 'regulate', false],
    ['observed unknown after a confirmed command', 1, undefined, sent(1, 0, 0, true), 'drift', false],
    ['wanted changed, the actuator was at the last command', 1, 0, sent(0, 0, 0, true), 'regulate', true],
    ['wanted changed, the last command unconfirmed', 1, 0, sent(0.5, 55, 1, false), 'regulate', false],
    [
      'wanted moved 0.002 from the last command (old tolerance hid it)',
      0.502,
      0.5,
      sent(0.5, 0, 0, true),
      'regulate',
      true,
    ],
    [
      'wanted moved one grid step (0.0001) from the last command',
      0.5001,
      0.5,
      sent(0.5, 0, 0, true),
      'regulate',
      true,
    ],
    [
      'wanted moved 0.00002 (float noise, under half a step): the same command',
      0.50002,
      0.5,
      sent(0.5, 0, 0, true),
      undefined,
      true,
    ],
    ['asked 5 s ago, unconfirmed', 1, 0, sent(1, 55, 1, false), undefined, false],
    ['asked 10 s ago, unconfirmed', 1, 0, sent(1, 50, 1, false), 'retry', false],
    ['confirmed, then changed by hand', 1, 0, sent(1, 0, 0, true), 'drift', false],
    [
      'confirmed 0.5, then moved by hand by 0.004 (within tolerance)',
      0.5,
      0.504,
      sent(0.5, 0, 0, true),
      undefined,
      true,
    ],
    ['confirmed 0.5, then moved by hand by 0.01', 0.5, 0.51, sent(0.5, 0, 0, true), 'drift', false],
  ];
  for (const [given, wanted, observed, last, reason, confirmed] of table) {
    test(`${given} → ${reason ?? 'no command'}, ${confirmed ? 'confirmed' : 'unconfirmed'}`, () => {
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
        assert.equal(decision.memory.level, wanted, 'the level sent is remembered');
      }
      assert.equal(decision.confirmed, confirmed);
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

describe('decideCommand: a continuous output that moves', () => {
  /**
   * Drives decideCommand every 10 s with `wantedAt` on the level grid (as actuation.ts gives
   * it), the actuator holding what it is sent and reporting it through `report` (a driver that
   * may round); returns the sends and the cycles that were unconfirmed.
   */
  function follow(
    untilS: number,
    wantedAt: (atS: number) => number,
    report: (held: number) => number = (held) => held,
  ): { sends: number[]; levels: number[]; unconfirmedAtS: number[]; held: number } {
    let memory: CommandMemory | undefined;
    let held = 0;
    const sends: number[] = [];
    const levels: number[] = [];
    const unconfirmedAtS: number[] = [];
    for (let t = 0; t <= untilS; t += 10) {
      const decision = decide(levelOnGrid(wantedAt(t)), report(held), memory, t);
      if (decision.command) {
        sends.push(t);
        levels.push(decision.command.level);
        held = decision.command.level;
      }
      if (!decision.confirmed) unconfirmedAtS.push(t);
      memory = decision.memory;
    }
    return { sends, levels, unconfirmedAtS, held };
  }

  /** Σ|Δwanted| over the same 10 s cycles, from the first wanted level (on the grid). */
  function totalVariation(untilS: number, wantedAt: (atS: number) => number): number {
    let sum = 0;
    for (let t = 10; t <= untilS; t += 10) {
      sum += Math.abs(levelOnGrid(wantedAt(t)) - levelOnGrid(wantedAt(t - 10)));
    }
    return sum;
  }

  const shapes: Array<[shape: string, untilS: number, wantedAt: (atS: number) => number]> = [
    [
      'a slow ramp 0.5 → 0.52 over 20 min (0.00017 per cycle)',
      1_200,
      (t) => 0.5 + (0.02 * Math.min(t, 1_200)) / 1_200,
    ],
    ['a fast ramp 0 → 1 over 100 s', 200, (t) => Math.min(1, t / 100)],
    ['a decaying oscillation around 0.4', 3_000, (t) => 0.4 + 0.05 * Math.exp(-t / 600) * Math.sin(t / 60)],
    ['a creep of 0.0004 per cycle for 1 h', 3_600, (t) => 0.3 + 0.00004 * t],
  ];
  for (const [shape, untilS, wantedAt] of shapes) {
    test(`${shape}: writes ≤ 1 + total variation / ${LEVEL_STEP}, and the actuator ends within half a step`, () => {
      const { sends, held } = follow(untilS, wantedAt);
      const bound = 1 + totalVariation(untilS, wantedAt) / LEVEL_STEP;
      assert.ok(sends.length <= bound + 1e-9, `${sends.length} writes > ${bound.toFixed(1)}`);
      assert.ok(
        Math.abs(held - wantedAt(untilS)) <= LEVEL_STEP / 2 + 1e-12,
        `held ${held}, wanted ${wantedAt(untilS)}`,
      );
    });
  }

  test('a creep of 0.00004 per cycle is followed one grid step at a time (the 0.005 tolerance held it for 125 cycles)', () => {
    const { sends, levels } = follow(3_000, (t) => 0.3 + 0.000004 * t);
    // 0.3 first, then 0.0001 every 2–3 cycles: 0.012 in 120 steps.
    assert.ok(sends.length >= 119 && sends.length <= 121, `${sends.length} writes`);
    for (let i = 1; i < levels.length; i++) {
      assert.ok(Math.abs(levels[i]! - levels[i - 1]! - LEVEL_STEP) < 1e-9, `step ${i}: one grid step`);
    }
  });

  test('given an output that moves every cycle, ActuatorConfirmed does not flicker: confirmed after the first cycle', () => {
    const { sends, unconfirmedAtS } = follow(600, (t) => 0.2 + 0.001 * t);
    assert.equal(sends.length, 61, 'a write each cycle (moves of 0.01)');
    assert.deepEqual(unconfirmedAtS, [0], 'only before the first command was ever seen');
  });

  test('given a driver that rounds to whole percent, a steady level confirms and is not re-sent', () => {
    const { sends, levels, unconfirmedAtS } = follow(
      1_200,
      () => 0.5312,
      (held) => Math.round(held * 100) / 100,
    );
    assert.deepEqual(sends, [0, 600, 1_200], 'written once, then only the keep-alives');
    assert.deepEqual(levels, [0.5312, 0.5312, 0.5312]);
    assert.deepEqual(unconfirmedAtS, [0]);
  });

  test('given a steady wanted level, it is never re-sent before the keep-alive (no dither)', () => {
    const { sends } = follow(590, () => 0.4321);
    assert.deepEqual(sends, [0]);
  });

  test('given an actuator that stops following, the next cycle is unconfirmed, and stays so', () => {
    let memory: CommandMemory | undefined;
    const decisions: CommandDecision[] = [];
    // It follows until 30 s (held = last command), then sticks at 0.31.
    const heldAt = (t: number, last: number) => (t <= 30 ? last : 0.31);
    let last = 0;
    for (let t = 0; t <= 100; t += 10) {
      const d = decide(0.3 + t / 1_000, t === 0 ? 0 : heldAt(t, last), memory, t);
      if (d.command) last = d.command.level;
      decisions.push(d);
      memory = d.memory;
    }
    const confirmedAt = decisions.map((d, i) => [i * 10, d.confirmed]);
    assert.deepEqual(confirmedAt, [
      [0, false],
      [10, true],
      [20, true],
      [30, true],
      [40, false],
      [50, false],
      [60, false],
      [70, false],
      [80, false],
      [90, false],
      [100, false],
    ]);
  });
});

describe(`sameCommand (closer than ${SEND_RESOLUTION}) and levelOnGrid (steps of ${LEVEL_STEP})`, () => {
  const table: Array<[a: number, b: number, same: boolean]> = [
    [0.5, 0.5, true],
    [0.5, 0.50004, true],
    [0.5, 0.5001, false],
    [0.5, 0.504, false],
    [0, 1, false],
    // Neighbours on the grid are always different commands, whatever float rounding does.
    ...Array.from({ length: 9 }, (_, i): [number, number, boolean] => [
      levelOnGrid(0.1 * i + 0.0003),
      levelOnGrid(0.1 * i + 0.0004),
      false,
    ]),
  ];
  for (const [a, b, same] of table) {
    test(`${a} and ${b}: ${same ? 'the same command' : 'a new level'}`, () => {
      assert.equal(sameCommand(a, b), same);
    });
  }
});

test('levelOnGrid: every neighbouring pair of grid levels 0..1 is a new command (no float blind spot)', () => {
  for (let i = 0; i < 1 / LEVEL_STEP; i++) {
    assert.equal(sameCommand(levelOnGrid(i * LEVEL_STEP), levelOnGrid((i + 1) * LEVEL_STEP)), false, `${i}`);
  }
});
