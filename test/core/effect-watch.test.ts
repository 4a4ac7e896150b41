/**
 * Effect watch and latched faults: full output that does not move the value latches a fault
 * that holds every actuator safe until a person resets it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { watchEffect } from '../../src/core/effect-watch.js';
import { resetLatchedFault } from '../../src/core/loop-state.js';
import { at, condition, desired, Harness, heaterRelayLoop, min, relay, splitRangeLoop } from './fixtures.js';

const WATCH = { periodMs: min(15), minChange: 1 };

describe('watchEffect', () => {
  const table: [string, number, number, boolean][] = [
    // [when, output, value after 15 min (from 10, setpoint 20), latches]
    ['full heating raised it 2 °C: fine', 1, 12, false],
    ['full heating raised it 0.5 °C: latched', 1, 10.5, true],
    ['full heating, the value fell: latched', 1, 9, true],
    ['not full output: nothing watched', 0.8, 10, false],
  ];
  for (const [when, output, after, latches] of table) {
    test(when, () => {
      const start = watchEffect(WATCH, undefined, output, 10, 20, at(0), 'temperature');
      const end = watchEffect(WATCH, start.watch, output, after, 20, at(min(15)), 'temperature');
      assert.equal(end.fault !== undefined, latches, JSON.stringify(end));
      if (latches) assert.equal(end.fault?.reason, 'HeatingIneffective');
    });
  }
  test('within minChange of the setpoint nothing is watched (the approach slows down there)', () => {
    assert.equal(watchEffect(WATCH, undefined, 1, 19.5, 20, at(0), 'temperature').watch, undefined);
  });
  test('cooling at full output without effect latches CoolingIneffective', () => {
    const start = watchEffect(WATCH, undefined, -1, 25, 18, at(0), 'temperature');
    const end = watchEffect(WATCH, start.watch, -1, 24.8, 18, at(min(15)), 'temperature');
    assert.equal(end.fault?.reason, 'CoolingIneffective');
  });
});

describe('reconcile with an effect watch', () => {
  test('given a heater on at full whose room does not warm, when the period passes, then the fault latches, the heater goes off and stays off until reset', () => {
    const h = new Harness(heaterRelayLoop({ effectWatch: WATCH }), desired('heat', 20));
    for (let t = 0; t < 15; t++)
      assert.equal(h.cycle(at(min(t)), 10).wanted.heater, 1, `heating at ${t} min`);
    const latched = h.cycle(at(min(15)), 10.2);
    assert.equal(latched.wanted.heater, 0, 'off in the cycle that latched');
    assert.equal(latched.commands[0]?.detail, 'latched fault HeatingIneffective');
    assert.equal(condition(latched, 'Faulted').status, 'True');
    assert.equal(condition(latched, 'Faulted').reason, 'LatchedHeatingIneffective');
    // A good reading later does not clear it: only a reset does.
    assert.equal(h.cycle(at(min(30)), 10.2).wanted.heater, 0);
    assert.ok(h.memory.latchedFault, 'kept in memory (persisted, so it survives a restart)');
    // A reset sent before the fault latched (a late, queued message) does not clear it …
    assert.equal(resetLatchedFault(h.memory, at(min(14))), h.memory, 'a reset older than the fault');
    // … one sent after it does.
    h.memory = resetLatchedFault(h.memory, at(min(30)));
    assert.equal(h.memory.latchedFault, undefined);
    const resumed = h.cycle(at(min(31)), 10.2);
    assert.equal(resumed.wanted.heater, 1);
    assert.equal(condition(resumed, 'Faulted').status, 'False');
  });

  test('a heater that warms the room never latches', () => {
    const h = new Harness(heaterRelayLoop({ effectWatch: WATCH }), desired('heat', 20));
    for (let t = 0; t <= 60; t++) {
      const result = h.cycle(at(min(t)), Math.min(19.9, 10 + t * 0.2));
      assert.equal(condition(result, 'Faulted').status, 'False', `at ${t} min`);
    }
  });

  test('split range: a compressor that does not cool latches CoolingIneffective; the heater stays off too', () => {
    const spec = splitRangeLoop({ effectWatch: WATCH, lower: relay('compressor') });
    const h = new Harness(spec, desired('heat_cool', 18));
    for (let t = 0; t <= 15; t++) h.cycle(at(min(t)), 25);
    assert.equal(h.memory.latchedFault?.reason, 'CoolingIneffective');
    const after = h.cycle(at(min(20)), 10);
    assert.deepEqual([after.wanted.heater, after.wanted.compressor], [0, 0], 'everything safe while latched');
  });
});
