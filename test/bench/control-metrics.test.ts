import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  integralAbsoluteError,
  overshoot,
  ratio,
  runMetrics,
  settlingTimeS,
  switchesPerHour,
  totalVariation,
} from './control/metrics.js';

describe('integralAbsoluteError (trapezoidal, unit·s)', () => {
  const cases: { name: string; values: number[]; setpoint: number; stepS: number; want: number }[] = [
    { name: 'on the setpoint throughout', values: [20, 20, 20], setpoint: 20, stepS: 1, want: 0 },
    { name: 'constant 1 below for 2 steps of 10 s', values: [19, 19, 19], setpoint: 20, stepS: 10, want: 20 },
    { name: 'a ramp from 2 below to the setpoint', values: [18, 19, 20], setpoint: 20, stepS: 1, want: 2 },
    { name: 'below and above count alike', values: [21, 21, 19, 19], setpoint: 20, stepS: 1, want: 3 },
    { name: 'a single sample spans no time', values: [10], setpoint: 20, stepS: 1, want: 0 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(integralAbsoluteError(c.values, c.setpoint, c.stepS), c.want);
    });
  }
});

describe('overshoot (max value − setpoint, never negative)', () => {
  const cases: { name: string; values: number[]; want: number }[] = [
    { name: 'never above the setpoint', values: [10, 15, 19.9], want: 0 },
    { name: 'peak 0.5 above', values: [19, 20.5, 20.2], want: 0.5 },
    { name: 'exactly on the setpoint', values: [19, 20], want: 0 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.ok(Math.abs(overshoot(c.values, 20) - c.want) < 1e-12);
    });
  }
});

describe('settlingTimeS (|e| stays within the band after it)', () => {
  const cases: { name: string; values: number[]; want: number | undefined }[] = [
    { name: 'within the band from the start', values: [20.1, 19.9, 20], want: 0 },
    { name: 'enters at the third sample and stays', values: [10, 19, 19.9, 20.1, 20], want: 2 },
    { name: 'leaves the band again: counts from the last exit', values: [19, 20, 20.5, 20, 20], want: 3 },
    { name: 'still outside at the end: not settled', values: [19, 20, 19], want: undefined },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(settlingTimeS(c.values, 20, 0.2, 1), c.want);
    });
  }

  test('given 10 s steps, when it enters at index 2, then it settles at 20 s', () => {
    assert.equal(settlingTimeS([15, 18, 20, 20], 20, 0.2, 10), 20);
  });
});

describe('totalVariation (Σ|Δu| from the level before)', () => {
  const cases: { name: string; levels: number[]; before: number; want: number }[] = [
    { name: 'constant at the level before', levels: [0.5, 0.5], before: 0.5, want: 0 },
    { name: 'the first step from the level before counts', levels: [1, 1], before: 0, want: 1 },
    { name: 'up and down', levels: [1, 0.5, 0.5, 0.75], before: 0, want: 1.75 },
    { name: 'relay on-off-on', levels: [1, 0, 1], before: 0, want: 3 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(totalVariation(c.levels, c.before), c.want);
    });
  }
});

describe('switchesPerHour (relay transitions per hour of trace)', () => {
  test('given one hour of 1 s steps with 4 switches, then 4 per hour', () => {
    const levels = Array.from({ length: 3600 }, (_, i) => (Math.floor(i / 900) % 2 === 0 ? 1 : 0));
    // on from the start (1 switch from off), off at 900, on at 1800, off at 2700
    assert.equal(switchesPerHour(levels, 0, 1), 4);
  });

  test('given the relay already on before, when it stays on, then no switch', () => {
    assert.equal(switchesPerHour([1, 1, 1], 1, 1200), 0);
  });

  test('given half an hour with 2 switches, then 4 per hour', () => {
    assert.equal(switchesPerHour([1, 0, 0], 0, 600), 4);
  });

  test('given an empty trace, then 0', () => {
    assert.equal(switchesPerHour([], 0, 1), 0);
  });
});

describe('ratio', () => {
  const cases: { value: number | null; reference: number | null; want: number | null }[] = [
    { value: 3, reference: 2, want: 1.5 },
    { value: 3, reference: 0, want: null },
    { value: 3, reference: 1e-12, want: null },
    { value: null, reference: 2, want: null },
    { value: 2, reference: null, want: null },
  ];
  for (const c of cases) {
    test(`${c.value} / ${c.reference} → ${c.want}`, () => {
      assert.equal(ratio(c.value, c.reference), c.want);
    });
  }
});

describe('runMetrics', () => {
  test('given a relay trace, then switches are counted', () => {
    const m = runMetrics([18, 19, 20, 20.5], [1, 1, 0], 0, 20, 0.2, 1, true);
    assert.deepEqual(m, {
      iae: 2.25,
      overshootC: 0.5,
      settlingS: null,
      totalVariation: 2,
      switchesPerHour: 2 / (3 / 3600),
    });
  });

  test('given a continuous actuator, then switches per hour is null', () => {
    assert.equal(runMetrics([20, 20], [0.5], 0.5, 20, 0.2, 1, false).switchesPerHour, null);
  });
});
