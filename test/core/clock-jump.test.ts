/**
 * The clock going back — NTP correcting a Raspberry Pi that booted without a real-time clock,
 * or a restart whose clock is behind the stored memory — must never switch a heater on or
 * hold it on for the size of the jump.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { resumeLoopMemory } from '../../src/core/loop-state.js';
import { judgeReading } from '../../src/core/sensor-health.js';
import { holdForMinimumTimes, timeProportion } from '../../src/core/time-proportioning.js';
import {
  at,
  condition,
  desired,
  Harness,
  heaterRelayLoop,
  min,
  reading,
  relay,
  s,
  splitRangeLoop,
} from './fixtures.js';

const HOUR = min(60);

describe('time-proportioning when the clock went back', () => {
  const params = { windowMs: min(10), minOnMs: 0, minOffMs: 0 };
  test('given a window that starts in the future, when the duty is 0, then the relay stays off', () => {
    const memory = { windowStartMs: at(HOUR), isOn: false, pulseEnded: false };
    const result = timeProportion(0, memory, at(0), params);
    assert.equal(result.on, false);
    assert.equal(result.memory.windowStartMs, at(0), 'a new window starts now');
  });
  test('given a window that starts in the future, when the duty is 0.3, then a normal pulse starts now', () => {
    const memory = { windowStartMs: at(HOUR), isOn: false, pulseEnded: true };
    const result = timeProportion(0.3, memory, at(0), params);
    assert.equal(result.on, true);
    assert.equal(result.nextChangeMs, at(s(180)));
  });
});

describe('minimum times when the clock went back', () => {
  test('a last switch an hour in the future holds the relay for the minimum only', () => {
    const held = holdForMinimumTimes(false, true, at(HOUR), at(0), { minOnMs: s(120), minOffMs: 0 });
    assert.deepEqual(held, { on: true, untilMs: at(s(120)) });
  });
});

describe('readings stamped in the future', () => {
  const limits = { staleAfterMs: min(5), plausibleMin: -40, plausibleMax: 85 };
  for (const [name, offsetMs, ok] of [
    ['half a second ahead (scheduling jitter): fresh', 500, true],
    ['an hour ahead (the clock went back): not trusted', HOUR, false],
  ] as const) {
    test(name, () => {
      assert.equal(judgeReading(reading(20, at(offsetMs)), at(0), limits).ok, ok);
    });
  }
});

describe('reconcile after a restart whose clock is behind the stored memory', () => {
  test('given memory saved an hour "later", when the loop resumes cooling, then the heater stays off', () => {
    // Given a fermenter that was cooling, its memory stamped an hour ahead of the new clock …
    const ahead = new Harness(splitRangeLoop(), desired('heat_cool', 18));
    for (let t = 0; t < 30; t++) ahead.cycle(at(HOUR + min(t)), 23);
    assert.equal(ahead.actuators.compressor, 1, 'it was cooling');
    // … when the daemon restarts with the clock an hour behind and the actuators all off …
    const restarted = new Harness(splitRangeLoop(), desired('heat_cool', 18));
    restarted.memory = resumeLoopMemory(
      ahead.memory,
      ['heater', 'compressor'],
      { heater: 0, compressor: 0 },
      at(0),
    );
    restarted.actuators = { heater: 0, compressor: 0 };
    // … then over the next half hour of warm readings the heater is never switched on.
    for (let t = 0; t <= 30; t++) {
      const result = restarted.cycle(at(min(t)), 23);
      assert.equal(result.wanted.heater, 0, `heater off at ${t} min`);
    }
    assert.equal(restarted.actuators.compressor, 1, 'cooling resumes');
    assert.equal(condition(restarted.last!, 'Faulted').status, 'False');
  });

  test('given a heater relay that switched on "in the future", when it must go off, then it goes off within minOn', () => {
    const spec = heaterRelayLoop({ raise: relay('heater', { minOnMs: s(60) }) });
    const h = new Harness(spec, desired('heat', 20));
    h.cycle(at(HOUR), 15);
    assert.equal(h.actuators.heater, 1);
    // The clock jumps back an hour and the room is now far too warm.
    let offAt: number | undefined;
    for (let t = 0; t <= 300; t += 10) {
      if (h.cycle(at(s(t)), 25).wanted.heater === 0) {
        offAt = t;
        break;
      }
    }
    assert.ok(offAt !== undefined && offAt <= 60, `off after ${offAt} s`);
  });
});

describe('a latched fault stamped in the future (stored under a clock that was ahead)', () => {
  test('given a latch at +1 h, when a cycle runs now, then it counts as latched now and a reset sent now clears it', async () => {
    const { resetLatchedFault, initialLoopMemory } = await import('../../src/core/loop-state.js');
    const { clampMemoryToNow } = await import('../../src/core/clock-step.js');
    const memory = {
      ...initialLoopMemory(),
      latchedFault: { reason: 'HeatingIneffective' as const, message: 'x', atMs: at(HOUR) },
    };
    const clamped = clampMemoryToNow(memory, at(0));
    assert.equal(clamped.latchedFault?.atMs, at(0));
    assert.equal(resetLatchedFault(clamped, at(s(5))).latchedFault, undefined, 'the reset is not refused');
  });
});
