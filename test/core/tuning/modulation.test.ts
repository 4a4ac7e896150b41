import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BUDGET_WINDOW_S,
  MAX_SWITCHES_PER_HOUR,
  suggestModulation,
} from '../../../src/core/tuning/modulation.js';

/**
 * suggestModulation: a window W = max(240 s, min(θ, 4τ·band/|K|)) (at most 30 switches an
 * hour), recommended; its ripple at duty 0.5, |K|·tanh(W/(4τ)) peak to peak; and the duty band
 * kp · band as the alternative. Figures by hand.
 */
const TABLE = [
  // plant, K, τ, θ, kp, band, window s, ripple °C
  ['room: the budget (θ 60 s is shorter)', 20, 600, 60, 0.25, 0.16, 240, 20 * Math.tanh(0.1)],
  ['slow greenhouse: the budget (θ 120 s)', 15, 3600, 120, 1, 0.16, 240, 15 * Math.tanh(240 / 14400)],
  [
    'large water mass: θ 300 s (ripple allows 4·14400·0.15/30 = 288 s)',
    30,
    14400,
    300,
    0.8,
    0.15,
    288,
    30 * Math.tanh(288 / 57600),
  ],
  [
    'kettle: the budget swings it by 47 °C (a relay cannot hold it)',
    80,
    90,
    120,
    0.005,
    0.15,
    240,
    80 * Math.tanh(240 / 360),
  ],
] as const;

describe('suggestModulation', () => {
  for (const [what, gain, timeConstantS, deadTimeS, kp, band, windowS, ripple] of TABLE) {
    test(what, () => {
      const m = suggestModulation({ gain, timeConstantS, deadTimeS }, kp, band);
      assert.equal(m.recommended, 'window');
      assert.ok(Math.abs(m.windowS - windowS) < 1e-9, `window ${m.windowS}`);
      assert.ok(Math.abs(m.windowRipple - ripple) < 1e-9, `ripple ${m.windowRipple}`);
      assert.ok(m.windowSwitchesPerHour <= MAX_SWITCHES_PER_HOUR);
      assert.equal(m.band, band);
      assert.ok(Math.abs(m.halfBandDuty - Math.min(0.49, kp * band)) < 1e-12);
    });
  }

  test('the budget: 30 switches an hour is a 240 s window (two switches a window)', () => {
    assert.equal(BUDGET_WINDOW_S, 240);
  });

  test('the duty band in duty units is capped at 0.49 (both thresholds inside 0..1)', () => {
    assert.equal(
      suggestModulation({ gain: 1, timeConstantS: 600, deadTimeS: 60 }, 10, 0.16).halfBandDuty,
      0.49,
    );
  });

  test('a cooler (negative gain) gets the same suggestion as a heater', () => {
    const heater = suggestModulation({ gain: 15, timeConstantS: 3600, deadTimeS: 120 }, 1, 0.16);
    assert.deepEqual(suggestModulation({ gain: -15, timeConstantS: 3600, deadTimeS: 120 }, 1, 0.16), heater);
  });
});
