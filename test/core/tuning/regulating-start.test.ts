import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pidInitialMemory } from '../../../src/core/pid.js';
import { initialLoopMemory, startLoopAutotune } from '../../../src/core/reconcile.js';
import { type RegulatingStart, regulatingRun } from '../../bench/control/autotune-regulating.js';
import { continuousLoop, desired, T0 } from '../fixtures.js';
import { REVIEW_PLANTS, TUNING_PLANTS } from './plants.js';

/**
 * The autotune of a continuous actuator started while its PI regulates, through
 * reconcile (test/bench/control/autotune-regulating.ts). Before: the second-order plant gave
 * K 10⁶–10⁷ × the true one (a fit whose sum of squares cancelled to 0), a kettle K and τ 11 %
 * off with a standard error of 1 %, and overshoots of 5.4–7.5 % after a +2 °C step.
 */
const [KETTLE, SECOND_ORDER] = REVIEW_PLANTS as [
  (typeof REVIEW_PLANTS)[number],
  (typeof REVIEW_PLANTS)[number],
];
const CASES: [typeof KETTLE, RegulatingStart, number, string][] = [
  [SECOND_ORDER, 'cold', 1, 'was K +6.9·10⁶ %, overshoot 6.2 %'],
  [SECOND_ORDER, 'cold', 5, 'was K +2.3·10⁶ %, overshoot 7.5 %'],
  [KETTLE, 'cold', 1, 'was K +11 % with a standard error of 1.4 %'],
  [KETTLE, 'cold', 2, 'was overshoot 5.7 %'],
  [KETTLE, 'cold', 3, 'was overshoot 5.4 %'],
  [TUNING_PLANTS[3]!, 'settled', 2, 'K −8 % before: a guard for the benchmark plant'],
];

describe('autotune of a continuous actuator started while regulating', () => {
  for (const [plant, start, seed, before] of CASES) {
    test(`${plant.id}, ${start} start, seed ${seed} (${before}): K, τ, θ within 20 % and 3 standard errors, sound, overshoot ≤ 2.5 %`, () => {
      const run = regulatingRun(plant, start, seed);
      assert.equal(run.abortReason, undefined);
      const error = run.errorPct!;
      for (const [what, pct] of Object.entries(error)) assert.ok(Math.abs(pct) <= 20, `${what} ${pct} %`);
      const se = run.relativeSePct!;
      assert.ok(
        Math.abs(error.gain) <= 3 * se.gain,
        `K ${error.gain} % with a standard error of ${se.gain} %`,
      );
      assert.ok(
        Math.abs(error.timeConstantS) <= 3 * se.timeConstantS,
        `τ ${error.timeConstantS} % with a standard error of ${se.timeConstantS} %`,
      );
      assert.equal(run.reliable, true, run.reasons?.join('; '));
      assert.ok(run.overshootPct! <= 2.5, `overshoot ${run.overshootPct} %`);
    });
  }
});

describe('startLoopAutotune: a continuous actuator that was regulating starts from the output at rest', () => {
  const spec = continuousLoop({
    controller: { type: 'pid', pid: { kp: 0.2, tiS: 900, tdS: 0, setpointWeight: 0.8 } },
  });
  const reading = { value: 20.1, atMs: T0 };
  test("its PID's integral and setpoint-weight offset, not this cycle's output (which carries kp·noise)", () => {
    // Output 0.53 = at rest 0.5 (integral 0.9 + kp·(b − 1)·r = 0.2·(−0.2)·10 = −0.4) plus kp·e.
    const memory = { ...initialLoopMemory(), regulating: true, output: 0.53, pid: pidInitialMemory(0.9) };
    const started = startLoopAutotune(
      spec,
      desired('heat', 10),
      { reading, actuators: { mat: 0.53 } },
      memory,
      {},
      T0,
    );
    assert.ok(started.ok);
    const autotune = started.memory.autotune!;
    assert.ok(Math.abs(autotune.initialLevel - 0.5) < 1e-9, `initial level ${autotune.initialLevel}`);
    assert.ok(Math.abs(autotune.level - 0.5) < 1e-9, `held level ${autotune.level}`);
    assert.equal(autotune.startsAtRest, false);
    assert.equal(autotune.restCandidate, true);
  });

  test('a loop that was not regulating starts at rest with its output, as before', () => {
    const memory = { ...initialLoopMemory(), regulating: false, output: 0.3, pid: pidInitialMemory(0.9) };
    const started = startLoopAutotune(
      spec,
      desired('heat', 10),
      { reading, actuators: { mat: 0.3 } },
      memory,
      {},
      T0,
    );
    assert.ok(started.ok);
    assert.equal(started.memory.autotune!.initialLevel, 0.3);
    assert.equal(started.memory.autotune!.startsAtRest, true);
    assert.equal(started.memory.autotune!.restCandidate, undefined);
  });
});
