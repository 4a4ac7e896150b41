/**
 * Interlocks (Raspberry Pi issue): a window or door switch, a float switch, pauses a loop.
 * Given/when/then on reconcile with a heater relay loop and a window switch (1 = open).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { trippedInterlock } from '../../src/core/interlock.js';
import { reconcile } from '../../src/core/reconcile.js';
import { at, condition, desired, Harness, heaterRelayLoop, min, reading, s } from './fixtures.js';

const WINDOW = { sensorId: 'window', pauseWhen: 1, staleAfterMs: s(30) };
const spec = heaterRelayLoop({ interlocks: [WINDOW] });

describe('trippedInterlock', () => {
  const table: [string, ReturnType<typeof reading> | undefined, boolean][] = [
    ['window closed (0): clear', reading(0, at(0)), false],
    ['window open (1): tripped', reading(1, at(0)), true],
    ['no reading yet: tripped (a broken switch pauses too)', undefined, true],
    ['a reading older than staleAfter: tripped', reading(0, at(-s(31))), true],
    ['NaN: tripped', reading(Number.NaN, at(0)), true],
  ];
  for (const [name, r, tripped] of table) {
    test(name, () => {
      assert.equal(trippedInterlock({ interlocks: [WINDOW] }, { window: r }, at(0)) !== undefined, tripped);
    });
  }
  test('a loop without interlocks is never paused', () => {
    assert.equal(trippedInterlock({}, undefined, at(0)), undefined);
  });
});

describe('reconcile with an interlock', () => {
  test('given a cold room with the heater on, when the window opens, then the heater is off at once and Interlocked=True', () => {
    const h = new Harness(spec, desired('heat', 20));
    const observe = (windowValue: number, atMs: number) =>
      reconcile(
        h.spec,
        h.want,
        {
          reading: reading(15, atMs),
          actuators: h.actuators,
          interlocks: { window: reading(windowValue, atMs) },
        },
        h.memory,
        atMs,
      );
    let result = observe(0, at(0));
    h.memory = result.memory;
    h.actuators = { ...h.actuators, ...result.wanted };
    assert.equal(result.wanted.heater, 1, 'heating with the window closed');
    assert.equal(condition(result, 'Interlocked').status, 'False');

    result = observe(1, at(s(10)));
    h.memory = result.memory;
    h.actuators = { ...h.actuators, ...result.wanted };
    assert.equal(result.wanted.heater, 0);
    assert.deepEqual(
      result.commands.map((c) => [c.actuatorId, c.level, c.reason, c.detail]),
      [['heater', 0, 'safe-state', 'interlock window reads 1']],
    );
    assert.equal(condition(result, 'Interlocked').status, 'True');
    assert.equal(condition(result, 'Faulted').status, 'False', 'an open window is not a fault');
    assert.equal(result.status.action, 'idle');

    // When the window closes again, regulation resumes.
    result = observe(0, at(min(2)));
    assert.equal(result.wanted.heater, 1);
    assert.equal(condition(result, 'Interlocked').status, 'False');
  });

  test('loops without interlocks carry no Interlocked condition', () => {
    const h = new Harness(heaterRelayLoop(), desired('heat', 20));
    const result = h.cycle(at(0), 15);
    assert.equal(
      result.status.conditions.some((c) => c.type === 'Interlocked'),
      false,
    );
  });
});
