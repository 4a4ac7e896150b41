import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  nominalOvershoot,
  SETPOINT_OVERSHOOT,
  setpointWeightFor,
  simcGains,
} from '../../../src/core/tuning/simc.js';

/** kp = τ / (|K|·(τc + θ)), tiS = min(τ, 4·(τc + θ)), tdS = θ/3 (PID), computed by hand. */
const TABLE = [
  // what, K, τ, θ, options, kp, tiS, tdS
  ['room, τc = θ, PI', 20, 600, 60, {}, 0.25, 480, 0],
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

  test('a cooler and a heater of the same size get the same setpoint weight', () => {
    const heater = simcGains({ gain: 20, timeConstantS: 600, deadTimeS: 60 });
    const cooler = simcGains({ gain: -20, timeConstantS: 600, deadTimeS: 60 });
    assert.equal(cooler.setpointWeight, heater.setpointWeight);
  });
});

/**
 * Setpoint weight b: the largest b (steps of 0.05) whose nominal unit step overshoots ≤ 2 %, or,
 * where even b = 0 cannot (dead time dominates), within 0.25 % of b = 0's overshoot. The b values
 * are the ones the bench measured (test/bench/autotune.ts, notes/autotune-bench-report-2.txt).
 */
const WEIGHTS = [
  // plant (the five benchmark plants; true models), model, b
  ['room: ti = 8θ < τ, the PI zero overshoots', { gain: 20, timeConstantS: 600, deadTimeS: 60 }, 0.9],
  ['slow greenhouse', { gain: 15, timeConstantS: 3600, deadTimeS: 120 }, 0.75],
  ['large water mass', { gain: 30, timeConstantS: 14400, deadTimeS: 300 }, 0.7],
  ['second-order, as its half-rule FOPDT', { gain: 20, timeConstantS: 675, deadTimeS: 105 }, 0.95],
  [
    'second-order with its second lag (SIMC PID)',
    { gain: 20, timeConstantS: 675, deadTimeS: 105, secondLagS: 150 },
    0.8,
  ],
  ['kettle (θ > τ): b = 0 still overshoots 2.1 %', { gain: 80, timeConstantS: 90, deadTimeS: 120 }, 0.45],
] as const;

describe('setpoint weight from the model', () => {
  for (const [what, model, b] of WEIGHTS) {
    test(`${what}: b ${b}`, () => {
      assert.equal(simcGains(model).setpointWeight, b);
    });
  }

  test('the chosen b meets the nominal overshoot, and the next larger one does not', () => {
    for (const [what, model, b] of WEIGHTS.slice(0, 3)) {
      const gains = simcGains(model);
      assert.ok(nominalOvershoot(model, gains, b) <= SETPOINT_OVERSHOOT, what);
      assert.ok(nominalOvershoot(model, gains, b + 0.05) > SETPOINT_OVERSHOOT, what);
    }
  });

  test('b = 1 overshoots the nominal room loop by 4–20 % (why the weight is needed)', () => {
    const model = { gain: 20, timeConstantS: 600, deadTimeS: 60 };
    const overshoot = nominalOvershoot(model, simcGains(model), 1);
    assert.ok(overshoot > 0.04 && overshoot < 0.2, `overshoot ${overshoot}`);
  });

  test('a loop that does not overshoot keeps b = 1 (τc = 3θ on a lag-dominated plant)', () => {
    const model = { gain: 20, timeConstantS: 600, deadTimeS: 60 };
    const gains = { kp: 600 / (20 * 240), tiS: 600, tdS: 0 };
    assert.ok(nominalOvershoot(model, gains, 1) <= SETPOINT_OVERSHOOT);
    assert.equal(setpointWeightFor(model, gains), 1);
  });
});

describe('second lag kept as derivative (SIMC PID, ISA form)', () => {
  test('τ2 150 s > θ0 30 s: series kp′ 0.25, ti′ 480 (τc 105 s), td′ 150 → ISA kp, ti, td', () => {
    // τ1 = 675 − 75 = 600, θ0 = 105 − 75 = 30; kp′ = 600/(20·(105+30)), ti′ = min(600, 4·135) = 540.
    const gains = simcGains({ gain: 20, timeConstantS: 675, deadTimeS: 105, secondLagS: 150 });
    const kpSeries = 600 / (20 * 135);
    assert.ok(Math.abs(gains.kp - kpSeries * (1 + 150 / 540)) < 1e-12, `kp ${gains.kp}`);
    assert.equal(gains.tiS, 690);
    assert.ok(Math.abs(gains.tdS - (540 * 150) / 690) < 1e-12, `tdS ${gains.tdS}`);
  });

  test('τ2 no longer than θ0: the half-rule PI stays', () => {
    const model = { gain: 20, timeConstantS: 650, deadTimeS: 100, secondLagS: 50 };
    const { kp, tiS, tdS } = simcGains(model);
    assert.deepEqual({ kp, tiS, tdS }, { kp: 650 / (20 * 200), tiS: 650, tdS: 0 });
  });

  test('no second lag (0): the same as without the field', () => {
    const model = { gain: 20, timeConstantS: 600, deadTimeS: 60 };
    assert.deepEqual(simcGains({ ...model, secondLagS: 0 }), simcGains(model));
  });
});

describe('extreme fits still give usable gains (the rule runs inside a loop cycle)', () => {
  const cases = [
    {
      name: 'a tiny dead time on a slow plant (θ 0.5 s, τ 20,000 s)',
      model: { gain: 20, timeConstantS: 20_000, deadTimeS: 0.5 },
    },
    {
      name: 'a second lag longer than twice the dead time',
      model: { gain: 20, timeConstantS: 600, deadTimeS: 60, secondLagS: 200 },
    },
  ];
  for (const { name, model } of cases) {
    test(`${name}: finite kp, Ti ≥ 0, b within 0..1`, () => {
      const gains = simcGains(model);
      assert.ok(Number.isFinite(gains.kp) && gains.kp > 0, `kp ${gains.kp}`);
      assert.ok(Number.isFinite(gains.tiS) && gains.tiS >= 0, `tiS ${gains.tiS}`);
      assert.ok(gains.setpointWeight >= 0 && gains.setpointWeight <= 1, `b ${gains.setpointWeight}`);
    });
  }
});

describe("setpoint weight with the loop's reading period", () => {
  // The review kettle as one regulating run identified it (K 74, τ 277 s, θ 20 s; true K 80,
  // τ 300 s) and its SIMC PI; the loop reads every 5 s and holds its output in between.
  const identified = { gain: 74, timeConstantS: 277, deadTimeS: 20 };
  const gains = { kp: 0.0937, tiS: 160, tdS: 0 };

  test('without the period: b 0.85, which overshoots 5 % once the 2.5 s hold is counted (6 % measured)', () => {
    const b = setpointWeightFor(identified, gains);
    assert.equal(b, 0.85);
    assert.ok(nominalOvershoot({ ...identified, deadTimeS: 22.5 }, gains, b) > 0.04);
  });

  test('with a 5 s period: b 0.8, within 1.5 % with the hold', () => {
    const b = setpointWeightFor(identified, gains, 5);
    assert.equal(b, 0.8);
    assert.ok(nominalOvershoot({ ...identified, deadTimeS: 22.5 }, gains, b) <= SETPOINT_OVERSHOOT);
  });

  test('simcGains passes the period on; 0 (the default) changes nothing', () => {
    const model = { gain: 80, timeConstantS: 300, deadTimeS: 20 };
    assert.equal(simcGains(model, { samplePeriodS: 5 }).setpointWeight, 0.75);
    assert.equal(simcGains(model, { samplePeriodS: 0 }).setpointWeight, simcGains(model).setpointWeight);
  });
});
