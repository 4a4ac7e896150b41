/**
 * A wall-clock step during an autotune (NTP correcting a Raspberry Pi without a real-time clock,
 * a person setting the date): the run's record has a hole or an overlap of the step's size, so
 * the run ends — whichever way the clock went — like every other abort: every actuator safe in
 * that cycle, the reason in the status, the PID regulating again from the next cycle.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLOCK_STEP_ABORT, shiftLoopMemory } from '../../src/core/clock-step.js';
import { type LoopMemory, startLoopAutotune } from '../../src/core/reconcile.js';
import { desired, heaterRelayLoop, min, relay, s, T0 } from './fixtures.js';
import { PlantLoop } from './tuning/plant-loop.js';

const running = (memory: LoopMemory) =>
  memory.autotune?.phase === 'noise' || memory.autotune?.phase === 'relay';

/** The room plant's heater relay, regulated for an hour, then autotuned into its relay phase. */
function inRelayPhase(): PlantLoop {
  const spec = heaterRelayLoop({
    raise: relay('heater', { windowMs: s(120), minOnMs: s(30), minOffMs: s(30) }),
  });
  const loop = new PlantLoop(
    spec,
    desired('heat', 20),
    {
      ambient: 10,
      timeConstantS: 600,
      deadTimeS: 60,
      gains: { heater: 20 },
      initial: 20,
      levels: { heater: 0.5 },
    },
    T0,
  );
  loop.run(T0 + min(60));
  const started = startLoopAutotune(
    loop.spec,
    loop.desired,
    { reading: { value: loop.plant.valueAt(loop.nowMs), atMs: loop.nowMs }, actuators: loop.actuators },
    loop.memory,
    {},
    loop.nowMs,
  );
  assert.ok(started.ok);
  loop.memory = started.memory;
  // Into the relay, with the heater on (a step that left it on would be the worst case).
  loop.run(
    loop.nowMs + min(30),
    (c) => c.result.memory.autotune?.phase === 'relay' && c.result.wanted.heater === 1,
  );
  assert.ok(running(loop.memory) && loop.actuators.heater === 1);
  return loop;
}

describe('a clock step during an autotune aborts it, safe in that cycle', () => {
  for (const [what, deltaMs] of [
    ['forward 2 h', 2 * 3_600_000],
    ['forward 90 s', 90_000],
    ['back 2 h', -2 * 3_600_000],
    ['back 90 s', -90_000],
  ] as const) {
    test(`the clock steps ${what}: aborted "${CLOCK_STEP_ABORT}", every actuator safe, then the PID`, () => {
      const loop = inRelayPhase();
      // The runtime notices the step: readings are stamped with the new clock, memory is shifted.
      loop.clockOffsetMs += deltaMs;
      loop.memory = shiftLoopMemory(loop.memory, deltaMs);
      const stepped = loop.cycle();
      const autotune = stepped.result.memory.autotune!;
      assert.equal(autotune.phase, 'aborted');
      assert.equal(autotune.abortReason, CLOCK_STEP_ABORT);
      assert.deepEqual(stepped.result.wanted, { heater: 0 }, 'safe in that cycle');
      assert.ok(stepped.result.commands.some((c) => c.reason === 'safe-state'));
      assert.equal(stepped.result.status.autotune?.abortReason, CLOCK_STEP_ABORT);
      const condition = stepped.result.status.conditions.find((c) => c.type === 'Autotuning')!;
      assert.equal(condition.reason, 'Aborted');
      assert.match(condition.message, /the clock was stepped/);
      const after = loop.run(loop.nowMs + min(1), (c) => c.result.memory.regulating).at(-1)!;
      assert.ok(after.result.memory.regulating, 'the PID regulates again');
      assert.equal(after.result.memory.autotune?.abortReason, CLOCK_STEP_ABORT, 'the reason stays');
    });
  }

  test('a step with no autotune running changes nothing of it (a finished run stays as it ended)', () => {
    const loop = inRelayPhase();
    const cancelled = { ...loop.memory, autotune: { ...loop.memory.autotune!, phase: 'done' as const } };
    assert.deepEqual(shiftLoopMemory(cancelled, 3_600_000).autotune, cancelled.autotune);
  });
});
