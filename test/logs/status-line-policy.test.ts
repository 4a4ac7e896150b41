/**
 * Status lines on change and hourly: the journal is on an SD card. A loop gets a line when it
 * changed meaningfully (mode, setpoint, action or a condition that held, the reading lost or
 * back, the distance from the setpoint moved by a step), and once an hour otherwise.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import type { LoopStatus } from '../../src/core/status.js';
import type { Condition, ConditionType } from '../../src/core/types.js';
import { DaemonTimers } from '../../src/daemon/timers.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { SETTLE_MS, statusLineChange, writtenStatusLine } from '../../src/status-line.js';
import { memoryStore } from '../support/store.js';

const T0 = Date.UTC(2026, 0, 1);
const MIN = 60_000;

function condition(
  type: ConditionType,
  status: Condition['status'],
  reason: string,
  sinceMs = T0,
): Condition {
  return { type, status, reason, message: '', lastTransitionMs: sinceMs, observedGeneration: 1 };
}

/** Loop `room` converged at 20 °C, heating at 40 %. */
function status(overrides: Partial<LoopStatus> = {}): LoopStatus {
  return {
    loop: 'room',
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 20,
    measured: 20.06,
    measuredAtMs: T0,
    output: 0.4,
    action: 'heating',
    generation: 1,
    observedGeneration: 1,
    actuators: {},
    conditions: [
      condition('SensorHealthy', 'True', 'Fresh'),
      condition('ActuatorConfirmed', 'True', 'Confirmed'),
      condition('Converged', 'True', 'WithinBand'),
      condition('Faulted', 'False', 'NoFault'),
    ],
    updatedAtMs: T0,
    ...overrides,
  };
}

function withCondition(base: LoopStatus, replacement: Condition): LoopStatus {
  return { ...base, conditions: base.conditions.map((c) => (c.type === replacement.type ? replacement : c)) };
}

describe('statusLineChange: what is worth a line', () => {
  const now = T0 + 30 * MIN;
  const last = writtenStatusLine(status(), T0);
  const cases: Array<[name: string, next: LoopStatus, actionSinceMs: number, why: string | undefined]> = [
    ['nothing changed', status(), T0, undefined],
    ['the output moved (40 % → 55 %)', status({ output: 0.55 }), T0, undefined],
    ['the reading wiggled by 0.3 °C', status({ measured: 19.76 }), T0, undefined],
    [
      'the reading swung to the other side of the setpoint (20.06 → 19.5)',
      status({ measured: 19.5 }),
      T0,
      undefined,
    ],
    ['the reading moved 1 °C away from the setpoint', status({ measured: 21.1 }), T0, 'measured'],
    ['the reading is lost', status({ measured: undefined }), T0, 'measured'],
    ['the mode changed', status({ mode: 'off', action: 'off' }), now, 'mode'],
    ['the setpoint changed', status({ setpoint: 21.5 }), T0, 'setpoint'],
    ['the action changed a minute ago (a wiggle)', status({ action: 'idle' }), now - MIN, undefined],
    ['the action changed and held 10 min', status({ action: 'idle' }), now - SETTLE_MS, 'action'],
    [
      'the sensor failed just now (never a wiggle)',
      withCondition(status(), condition('SensorHealthy', 'False', 'Stale', now)),
      T0,
      'SensorHealthy',
    ],
    [
      'a fault was latched just now',
      withCondition(status(), condition('Faulted', 'True', 'LatchedRunaway', now)),
      T0,
      'Faulted',
    ],
    [
      'Converged turned False a minute ago (noise at the band edge)',
      withCondition(status(), condition('Converged', 'False', 'BelowSetpoint', now - MIN)),
      T0,
      undefined,
    ],
    [
      'Converged False for 10 min',
      withCondition(status(), condition('Converged', 'False', 'BelowSetpoint', now - SETTLE_MS)),
      T0,
      'Converged',
    ],
    [
      'an actuator unconfirmed for a moment',
      withCondition(status(), condition('ActuatorConfirmed', 'False', 'Pending', now - 5_000)),
      T0,
      undefined,
    ],
  ];
  for (const [name, next, actionSinceMs, why] of cases) {
    test(`given ${name}, then ${why ?? 'no line'}`, () => {
      assert.equal(statusLineChange(last, next, now, actionSinceMs), why);
    });
  }

  test('given no line yet, then the first', () => {
    assert.equal(statusLineChange(undefined, status(), T0), 'first');
  });

  const steps: Array<
    [quantity: LoopStatus['quantity'], setpoint: number, measured: number, why: string | undefined]
  > = [
    ['humidity', 65, 67, undefined], // 2 %RH: sensor noise
    ['humidity', 65, 68.5, 'measured'],
    ['generic', 200, 208, undefined], // 5 % of 200 is 10
    ['generic', 200, 211, 'measured'],
  ];
  for (const [quantity, setpoint, measured, why] of steps) {
    test(`given a ${quantity} loop at ${setpoint}, when it reads ${measured}, then ${why ?? 'no line'}`, () => {
      const before = writtenStatusLine(status({ quantity, setpoint, measured: setpoint }), T0);
      assert.equal(statusLineChange(before, status({ quantity, setpoint, measured }), T0 + MIN, T0), why);
    });
  }
});

describe('DaemonTimers: status lines on change, hourly otherwise', () => {
  /** Timers looking every minute at one loop whose status the test sets. */
  function given() {
    const clock = new ManualClock(T0);
    // Records stamped with the test's clock (pino's own stamp is the real time).
    const records: Array<{ time: number; why: string; msg: string }> = [];
    const logger = pino(
      { level: 'info', timestamp: () => `,"time":${clock.nowMs()}` },
      { write: (line: string) => void records.push(JSON.parse(line)) },
    );
    let current: LoopStatus | undefined = status();
    const timers = new DaemonTimers({
      clock,
      logger,
      store: memoryStore(clock),
      flushEveryMs: () => 24 * 60 * MIN,
      statusEveryMs: MIN,
      statusLines: () => [{ status: current, unit: '°C' }],
    });
    const set = (next: LoopStatus | undefined) => {
      current = next;
    };
    /** The minutes (since T0) at which lines were written, with why. */
    const written = () => records.map((r) => `${(r.time - T0) / MIN}:${r.why}`);
    return { clock, records, timers, set, written };
  }

  test('given a steady loop for 3 hours, then a first line and one an hour: 4 lines, not 180', async () => {
    const h = given();
    h.timers.start();
    for (let i = 0; i < 181; i++) await h.clock.advance(MIN);
    h.timers.stop();
    assert.deepEqual(h.written(), ['1:first', '61:interval', '121:interval', '181:interval']);
    assert.match(
      h.records[0]!.msg,
      /^room {2}20\.06 °C → 20 °C {2}heat {2}output 40 % {2}heating {2}\[ok\]$/,
    );
  });

  test('given a setpoint change at minute 10, then its line at the next tick, and the hour counts from it', async () => {
    const h = given();
    h.timers.start();
    await h.clock.advance(10 * MIN);
    h.set(status({ setpoint: 21.5 }));
    for (let i = 0; i < 80; i++) await h.clock.advance(MIN);
    h.timers.stop();
    assert.deepEqual(h.written(), ['1:first', '11:setpoint', '71:interval']);
  });

  test('given an action that flips every 3 minutes, then no line for it; when it holds 10 min, one', async () => {
    const h = given();
    h.timers.start();
    await h.clock.advance(MIN);
    for (let i = 0; i < 10; i++) {
      h.set(status({ action: i % 2 === 0 ? 'idle' : 'heating' }));
      await h.clock.advance(3 * MIN);
    }
    // Idle from minute 31 on: first seen at the tick of minute 32, held 10 min at minute 42.
    h.set(status({ action: 'idle' }));
    for (let i = 0; i < 12; i++) await h.clock.advance(MIN);
    h.timers.stop();
    assert.deepEqual(h.written(), ['1:first', '42:action']);
  });

  test('given a loop removed and added again, then it starts with a first line', async () => {
    const h = given();
    h.timers.start();
    await h.clock.advance(MIN);
    h.set(undefined);
    await h.clock.advance(MIN);
    h.set(status());
    await h.clock.advance(MIN);
    h.timers.stop();
    assert.deepEqual(h.written(), ['1:first', '3:first']);
  });
});
