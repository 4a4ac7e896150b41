/**
 * shiftLoopMemory moves every absolute time a loop remembers by the size of a wall-clock step,
 * and nothing else. The field list is checked against a memory with every field set, so a time
 * added to LoopMemory later without being added to the shift fails here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RECORD_TIMES, SHIFTED_MEMORY_TIMES, shiftLoopMemory } from '../src/core/clock-step.js';
import type { LoopMemory } from '../src/core/loop-state.js';

const T = Date.UTC(2026, 0, 1, 12);
const STEP_MS = 7_200_000;

/** A memory with every optional field present. */
function fullMemory(): LoopMemory {
  return {
    regulating: true,
    pid: {
      integral: 0.4,
      derivativePerS: 0.001,
      lastMeasured: 18.5,
      lastAtMs: T - 5_000,
      lastSetpoint: 20,
      lastFeedforward: 0,
      lastOutput: 0.7,
      lastKp: 0.8,
      lastTdS: 0,
      lastSetpointWeight: 1,
    },
    hysteresisOn: { raise: true, lower: false },
    relays: {
      heater: { isOn: true, pulseEnded: false, windowStartMs: T - 60_000, lastSwitchMs: T - 30_000 },
      fridge: { isOn: false, pulseEnded: true, lastSwitchMs: T - 600_000 },
    },
    commands: {
      heater: { level: 1, atMs: T - 30_000, attempts: 0, confirmed: true },
      fridge: { level: 0, atMs: T - 600_000, attempts: 0, confirmed: true },
    },
    lastActiveMs: { raise: T, lower: T - 600_000 },
    output: 0.7,
    effectWatch: { direction: 1, sinceMs: T - 120_000, fromValue: 18 },
    latchedFault: { reason: 'HeatingIneffective', message: 'x', atMs: T - 1_000 },
    safety: {
      stuck: {
        raise: { offSinceMs: T - 300_000, extreme: 18 },
        lower: { offSinceMs: T - 200_000, extreme: 21 },
      },
      runaway: { setpoint: 20, outsideSinceMs: T - 100_000 },
      onSinceMs: { heater: T - 40_000 },
      startsMs: { fridge: [T - 3_000_000, T - 600_000] },
    },
    conditions: [
      {
        type: 'SensorHealthy',
        status: 'True',
        reason: 'Fresh',
        message: 'ok',
        lastTransitionMs: T - 900_000,
        observedGeneration: 1,
      },
    ],
  };
}

/** Every numeric leaf whose key ends in `Ms`, as a path with `*` for map keys and list indices. */
function timePaths(value: unknown, path: string[] = []): Map<string, number[]> {
  const found = new Map<string, number[]>();
  const walk = (v: unknown, p: string[]) => {
    if (Array.isArray(v)) {
      for (const item of v) walk(item, [...p, '*']);
    } else if (typeof v === 'object' && v !== null) {
      const isMap =
        (p.length === 1 && (p[0] === 'relays' || p[0] === 'commands')) ||
        (p.length === 2 && p[0] === 'safety' && p[1] !== 'runaway');
      for (const [key, item] of Object.entries(v)) walk(item, [...p, isMap ? '*' : key]);
    } else if (typeof v === 'number' && p.some((part) => /Ms$/.test(part))) {
      const key = p.join('.');
      found.set(key, [...(found.get(key) ?? []), v]);
    }
  };
  walk(value, path);
  return found;
}

describe('shiftLoopMemory', () => {
  test('every time field of LoopMemory is either shifted or listed as a record', () => {
    const known = new Set<string>([...SHIFTED_MEMORY_TIMES, ...RECORD_TIMES]);
    const unknown = [...timePaths(fullMemory()).keys()].filter((p) => !known.has(p));
    assert.deepEqual(unknown, [], 'a new absolute time in LoopMemory must be added to shiftLoopMemory');
  });

  for (const deltaMs of [STEP_MS, -STEP_MS]) {
    test(`a step of ${deltaMs / 3_600_000} h moves exactly the listed fields by it`, () => {
      const before = fullMemory();
      const after = shiftLoopMemory(before, deltaMs);
      const timesBefore = timePaths(before);
      const timesAfter = timePaths(after);
      const shifted = new Set<string>(SHIFTED_MEMORY_TIMES);
      for (const [path, values] of timesBefore) {
        const expected = shifted.has(path) ? values.map((v) => v + deltaMs) : values;
        assert.deepEqual(timesAfter.get(path), expected, path);
      }
      const {
        relays: _r,
        commands: _c,
        pid,
        lastActiveMs: _l,
        effectWatch,
        latchedFault,
        safety: _s,
        ...rest
      } = after;
      const {
        relays: _r0,
        commands: _c0,
        pid: pid0,
        lastActiveMs: _l0,
        effectWatch: e0,
        latchedFault: f0,
        safety: _s0,
        ...rest0
      } = before;
      assert.deepEqual(rest, rest0, 'nothing else changes');
      assert.equal(pid.integral, pid0.integral);
      assert.equal(effectWatch?.fromValue, e0?.fromValue);
      assert.equal(latchedFault?.reason, f0?.reason);
      assert.deepEqual(before, fullMemory(), 'the input is not mutated');
    });
  }

  test('absent optional times stay absent; a zero step returns the memory itself', () => {
    const memory: LoopMemory = {
      regulating: false,
      pid: { integral: 0, derivativePerS: 0, lastFeedforward: 0, lastOutput: 0 },
      hysteresisOn: { raise: false, lower: false },
      relays: { heater: { isOn: false, pulseEnded: false } },
      commands: {},
      lastActiveMs: {},
      output: 0,
      conditions: [],
    };
    assert.deepEqual(shiftLoopMemory(memory, STEP_MS), memory);
    assert.equal(shiftLoopMemory(memory, 0), memory);
  });
});
