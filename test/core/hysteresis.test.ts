import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hysteresisStep } from '../../src/core/hysteresis.js';

// The rule of Home Assistant's generic_thermostat (test_climate.py): a heater turns on at
// setpoint − cold_tolerance or below, off at setpoint + hot_tolerance or above, and keeps its
// state in between; a cooler (ac_mode) mirrors it.
const tolerances = { coldTolerance: 0.3, hotTolerance: 0.3 };

describe('hysteresisStep (generic_thermostat rule, tolerances 0.3)', () => {
  const table: Array<
    [wasOn: boolean, setpoint: number, measured: number, direction: 'raise' | 'lower', on: boolean]
  > = [
    // Heater, off: turns on only when at least 0.3 below the setpoint.
    [false, 20, 20, 'raise', false],
    [false, 20, 19.8, 'raise', false], // within tolerance
    [false, 20, 19.7, 'raise', true], // exactly cold tolerance
    [false, 20, 19, 'raise', true],
    [false, 20, 21, 'raise', false],
    // Heater, on: turns off only when at least 0.3 above the setpoint.
    [true, 20, 19, 'raise', true],
    [true, 20, 20, 'raise', true],
    [true, 20, 20.2, 'raise', true], // within tolerance
    [true, 20, 20.3, 'raise', false], // exactly hot tolerance
    [true, 20, 21, 'raise', false],
    // Cooler, off: turns on only when at least 0.3 above the setpoint.
    [false, 25, 25, 'lower', false],
    [false, 25, 25.2, 'lower', false],
    [false, 25, 25.3, 'lower', true],
    [false, 25, 27, 'lower', true],
    [false, 25, 24, 'lower', false],
    // Cooler, on: turns off only when at least 0.3 below the setpoint.
    [true, 25, 27, 'lower', true],
    [true, 25, 25, 'lower', true],
    [true, 25, 24.8, 'lower', true],
    [true, 25, 24.7, 'lower', false],
    [true, 25, 24, 'lower', false],
  ];
  for (const [wasOn, setpoint, measured, direction, on] of table) {
    const actuator = direction === 'raise' ? 'heater' : 'cooler';
    test(`${actuator} ${wasOn ? 'on' : 'off'}, setpoint ${setpoint}, measured ${measured} → ${on ? 'on' : 'off'}`, () => {
      assert.equal(hysteresisStep(tolerances, wasOn, setpoint, measured, direction), on);
    });
  }

  test('direction defaults to raise (a heater)', () => {
    assert.equal(hysteresisStep(tolerances, false, 20, 19.5), true);
    assert.equal(hysteresisStep(tolerances, true, 20, 20.5), false);
  });

  test('asymmetric tolerances: on at setpoint − cold, off at setpoint + hot', () => {
    const asymmetric = { coldTolerance: 0.5, hotTolerance: 0.1 };
    const table: Array<[wasOn: boolean, measured: number, on: boolean]> = [
      [false, 19.6, false],
      [false, 19.5, true],
      [true, 20, true],
      [true, 20.1, false],
    ];
    for (const [wasOn, measured, on] of table) {
      assert.equal(
        hysteresisStep(asymmetric, wasOn, 20, measured),
        on,
        `${wasOn ? 'on' : 'off'} at ${measured}`,
      );
    }
  });

  test('a temperature swinging 19..21 switches the heater twice per swing, at the thresholds', () => {
    let on = false;
    const switches: Array<[measured: number, on: boolean]> = [];
    for (let period = 0; period < 3; period++) {
      for (let i = 0; i <= 40; i++) {
        // Triangle wave 21 → 19 → 21 in 0.1 °C steps (rounded to avoid accumulated float error).
        const measured = Math.round((i <= 20 ? 21 - i * 0.1 : 19 + (i - 20) * 0.1) * 10) / 10;
        const next = hysteresisStep(tolerances, on, 20, measured);
        if (next !== on) switches.push([measured, next]);
        on = next;
      }
    }
    assert.deepEqual(switches, [
      [19.7, true],
      [20.3, false],
      [19.7, true],
      [20.3, false],
      [19.7, true],
      [20.3, false],
    ]);
  });
});
