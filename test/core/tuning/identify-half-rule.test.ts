import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { identifyFopdt } from '../../../src/core/tuning/identify-fopdt.js';
import { identifyHalfRule } from '../../../src/core/tuning/identify-half-rule.js';
import { estimateNoise } from '../../../src/core/tuning/noise.js';
import { analyseRelayOscillation } from '../../../src/core/tuning/relay-analysis.js';
import { Random } from '../../../src/drivers/sim/random.js';
import { TUNING_PLANTS } from './plants.js';
import { driveRelay } from './relay-driver.js';

const off = (actual: number, expected: number) => Math.abs(actual - expected) / Math.abs(expected);

describe('identifyHalfRule: a second-order fit reduced by the half rule', () => {
  const secondOrder = TUNING_PLANTS[3]!;
  for (const seed of [1, 2, 3]) {
    test(`second-order plant, 2 cycles (seed ${seed}): within 5 % where the FOPDT fit's θ is 20 % off`, () => {
      const experiment = driveRelay(secondOrder, { seed, cycles: 2 });
      const analysis = analyseRelayOscillation(experiment, { cycles: 2 });
      const half = identifyHalfRule(experiment, analysis);
      const fopdt = identifyFopdt(experiment, analysis);
      assert.ok(
        off(half.model.timeConstantS, secondOrder.trueTimeConstantS) < 0.05,
        JSON.stringify(half.model),
      );
      assert.ok(off(half.model.deadTimeS, secondOrder.trueDeadTimeS) < 0.05, JSON.stringify(half.model));
      assert.ok(off(fopdt.model.deadTimeS, secondOrder.trueDeadTimeS) > 0.15, JSON.stringify(fopdt.model));
      assert.ok(Math.abs(half.secondLagS - 150) < 30, `second lag ${half.secondLagS}`);
    });
  }

  test('a first-order plant without noise: no second lag, the FOPDT within 1 %', () => {
    const room = TUNING_PLANTS[0]!;
    const experiment = driveRelay(room, { noise: 0, quantization: 0, cycles: 3 });
    const half = identifyHalfRule(experiment, analyseRelayOscillation(experiment, { cycles: 2 }));
    assert.ok(half.secondLagS < 2, `second lag ${half.secondLagS}`);
    assert.ok(off(half.model.timeConstantS, 600) < 0.01 && off(half.model.deadTimeS, 60) < 0.01);
  });
});

describe('estimateNoise', () => {
  const TABLE = [
    // what, trend (value at t s), σ, quantum
    ['steady', () => 20, 0.05, 0.0625],
    ['a plant falling 1 °C in a minute', (t: number) => 20 - t / 60, 0.05, 0.0625],
    ['a plant turning (dead time ending)', (t: number) => (t < 40 ? 20 : 20 - ((t - 40) / 20) ** 2), 0.05, 0],
  ] as const;
  for (const [what, trend, sigma, quantum] of TABLE) {
    test(`${what}: σ within 40 % over 24 readings, the quantum found`, () => {
      const random = new Random(7);
      const samples = Array.from({ length: 24 }, (_, i) => {
        const exact = trend(i * 5) + sigma * random.gaussian();
        return { tMs: i * 5000, value: quantum > 0 ? Math.round(exact / quantum) * quantum : exact };
      });
      const noise = estimateNoise(samples);
      assert.ok(off(noise.sigma, sigma) < 0.4, `σ ${noise.sigma}`);
      if (quantum > 0) assert.equal(noise.quantum, quantum);
    });
  }
});
