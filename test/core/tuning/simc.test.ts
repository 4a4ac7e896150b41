import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { simcGains } from '../../../src/core/tuning/simc.js';

/** kp = τ / (|K|·(τc + θ)), tiS = min(τ, 4·(τc + θ)), tdS = θ/3 (PID), computed by hand. */
const TABLE = [
  // what, K, τ, θ, options, kp, tiS, tdS
  ['room (issue 12), τc = θ, PI', 20, 600, 60, {}, 0.25, 480, 0],
  ['room, PID', 20, 600, 60, { derivative: true }, 0.25, 480, 20],
  ['demo room (config/demo.yaml), PID', 20, 3600, 120, { derivative: true }, 0.75, 960, 40],
  ['demo fermenter, τc = 2θ', 20, 3600, 60, { closedLoopS: 120 }, 1.0, 720, 0],
  ['demo greenhouse fogger, τc = 3θ', 40, 900, 30, { closedLoopS: 90 }, 0.1875, 480, 0],
  ['cooler (negative gain): same kp as a heater', -20, 3600, 60, { closedLoopS: 120 }, 1.0, 720, 0],
  ['lag-free plant with τc 10 s', 10, 100, 0, { closedLoopS: 10 }, 1.0, 40, 0],
  ['dead-time dominated: tiS = τ', 10, 200, 300, {}, 200 / (10 * 600), 200, 0],
] as const;

describe('simcGains', () => {
  for (const [what, gain, timeConstantS, deadTimeS, options, kp, tiS, tdS] of TABLE) {
    test(what, () => {
      const gains = simcGains({ gain, timeConstantS, deadTimeS }, options);
      assert.ok(Math.abs(gains.kp - kp) < 1e-12, `kp ${gains.kp} ≠ ${kp}`);
      assert.equal(gains.tiS, tiS);
      assert.equal(gains.tdS, tdS);
    });
  }

  test('a model without dead time needs a closed-loop time constant (no infinite gain)', () => {
    assert.throws(() => simcGains({ gain: 10, timeConstantS: 100, deadTimeS: 0 }), RangeError);
  });

  test('a model without gain has no tuning', () => {
    assert.throws(() => simcGains({ gain: 0, timeConstantS: 100, deadTimeS: 10 }), RangeError);
  });
});
