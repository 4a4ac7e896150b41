/**
 * A restart restarts the watches: time the daemon was down is not time the loop watched. An
 * effect watch carried across a restart would count the downtime as "full output without
 * effect" and latch a false fault at the first cycle.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import { resumeLoopMemory } from '../../src/core/loop-state.js';
import { initialLoopMemory, type LoopMemory, reconcile } from '../../src/core/reconcile.js';
import {
  at,
  condition,
  desired,
  Harness,
  heaterRelayLoop,
  hysteresisHeaterLoop,
  min,
  observed,
  reading,
} from './fixtures.js';

const WATCH = { periodMs: min(15), minChange: 1 };

/** The loop heating to 20 °C, run once a minute from 0 to `untilMin` on a steady reading. */
function ranUntil(spec: LoopSpec, untilMin: number, valueC: number): Harness {
  const h = new Harness(spec, desired('heat', 20));
  for (let t = 0; t <= untilMin; t++) h.cycle(at(min(t)), valueC);
  return h;
}

/** The first cycle after the restart at `now`: a reading of `valueC`, the heater observed at `heater`. */
function firstCycle(spec: LoopSpec, resumed: LoopMemory, valueC: number, heater: number, now: number) {
  return reconcile(spec, desired('heat', 20), observed(reading(valueC, now), { heater }), resumed, now);
}

describe('resumeLoopMemory restarts the watches', () => {
  test('given an effect watch running at full heating, when the daemon is down 2 h and resumes, then no fault latches and the heater heats', () => {
    const spec = heaterRelayLoop({ effectWatch: WATCH });
    const h = ranUntil(spec, 5, 10);
    assert.ok(h.memory.effectWatch, 'given: a watch in progress');
    // Down from 5 min to 125 min (the relay kept its level); the room barely warmed.
    const resumed = resumeLoopMemory(h.memory, ['heater'], { heater: 1 }, at(min(125)));
    assert.equal(resumed.effectWatch, undefined, 'the watch restarts');
    const now = at(min(125));
    const result = firstCycle(spec, resumed, 10.1, 1, now);
    assert.equal(condition(result, 'Faulted').status, 'False');
    assert.equal(result.wanted.heater, 1, 'heating resumes');
    assert.equal(result.memory.effectWatch?.sinceMs, at(min(125)), 'watched from the restart');
  });

  test('a latched fault survives the restart (only the running windows restart)', () => {
    const spec = heaterRelayLoop({ effectWatch: WATCH });
    const h = ranUntil(spec, 15, 10);
    assert.ok(h.memory.latchedFault, 'given: latched');
    const resumed = resumeLoopMemory(h.memory, ['heater'], { heater: 0 }, at(min(60)));
    assert.deepEqual(resumed.latchedFault, h.memory.latchedFault);
  });

  test('the stuck and runaway windows restart; an on-time is kept only for an actuator still on; starts stay counted', () => {
    const stored = {
      ...initialLoopMemory(),
      safety: {
        stuck: { raise: { offSinceMs: at(0), extreme: 20 } },
        runaway: { setpoint: 20, outsideSinceMs: at(min(1)) },
        onSinceMs: { heater: at(0), pump: at(0) },
        startsMs: { heater: [at(0)] },
      },
    };
    const resumed = resumeLoopMemory(stored, ['heater', 'pump'], { heater: 1, pump: 0 }, at(min(30)));
    assert.deepEqual(resumed.safety, { onSinceMs: { heater: at(0) }, startsMs: { heater: [at(0)] } });
  });

  test('given a stuck window from before a 2 h stop, when the loop resumes, then no StuckOn latches', () => {
    const spec = hysteresisHeaterLoop({ stuckWatch: { periodMs: min(30), minChange: 2 } });
    const h = ranUntil(spec, 10, 20.5);
    assert.ok(h.memory.safety?.stuck?.raise, 'given: a stuck window');
    // Back 2 h later, the sun has warmed the room: the old window must not count the stop.
    const now = at(min(130));
    const resumed = resumeLoopMemory(h.memory, ['heater'], { heater: 0 }, now);
    const result = firstCycle(spec, resumed, 23, 0, now);
    assert.equal(result.memory.latchedFault, undefined);
  });
});
