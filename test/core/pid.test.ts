import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type PidMemory,
  type PidParams,
  type PidResult,
  pidInitialMemory,
  pidStep,
} from '../../src/core/pid.js';
import { at, s } from './fixtures.js';

/** Heater and cooler sharing one loop: the full signed range. */
const splitRange = { outputMin: -1, outputMax: 1 };
const heaterOnly = { outputMin: 0, outputMax: 1 };

interface Step {
  /** Seconds after T0 the reading was taken. */
  atS: number;
  measured: number;
  setpoint?: number;
  feedforward?: number;
}

/** Feeds readings to a fresh controller; returns every result (the last carries the memory). */
function run(params: PidParams, steps: Step[], memory: PidMemory = pidInitialMemory()): PidResult[] {
  const results: PidResult[] = [];
  for (const step of steps) {
    const result = pidStep(params, memory, {
      setpoint: step.setpoint ?? 20,
      measured: step.measured,
      atMs: at(s(step.atS)),
      ...(step.feedforward === undefined ? {} : { feedforward: step.feedforward }),
    });
    results.push(result);
    memory = result.memory;
  }
  return results;
}

function last<T>(list: T[]): T {
  const item = list[list.length - 1];
  if (item === undefined) throw new Error('empty list');
  return item;
}

/** Readings every `everyS` seconds from `fromS` to `toS` inclusive, all at `measured`. */
function steady(
  fromS: number,
  toS: number,
  everyS: number,
  measured: number,
  extra: Partial<Step> = {},
): Step[] {
  const steps: Step[] = [];
  for (let t = fromS; t <= toS; t += everyS) steps.push({ atS: t, measured, ...extra });
  return steps;
}

function assertClose(actual: number, expected: number, message: string, tolerance = 1e-9): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${message}: got ${actual}, want ${expected} ± ${tolerance}`,
  );
}

describe('pidStep: proportional only (tiS 0, tdS 0)', () => {
  test('output = kp · (setpoint − measured), clamped to the output range', () => {
    const table: Array<[kp: number, setpoint: number, measured: number, output: number]> = [
      [0.5, 20, 20, 0],
      [0.5, 20, 19, 0.5],
      [0.5, 20, 21, -0.5],
      [0.2, 20, 19.5, 0.1],
      [2, 20, 19.75, 0.5],
      [0.5, 20, 17, 1], // 1.5 clamped to outputMax
      [0.5, 20, 23, -1], // −1.5 clamped to outputMin
    ];
    for (const [kp, setpoint, measured, output] of table) {
      const params = { kp, tiS: 0, tdS: 0, ...splitRange };
      // Given the same reading twice, 60 s apart: without integral action nothing accumulates.
      const results = run(params, [
        { atS: 0, measured, setpoint },
        { atS: 60, measured, setpoint },
      ]);
      for (const result of results) {
        assertClose(result.output, output, `kp ${kp}, setpoint ${setpoint}, measured ${measured}`);
        assert.equal(result.memory.integral, 0);
      }
    }
  });
});

describe('pidStep: integral action', () => {
  // Constant error 0.5 °C, kp 0.1, Ti 600 s: I(t) = kp/Ti · e · t, small enough never to saturate.
  const params = { kp: 0.1, tiS: 600, tdS: 0, ...heaterOnly };
  const error = 0.5;
  const measured = 20 - error;

  test('dt comes from the readings’ timestamps: any sampling gives ∫ e · kp/Ti dt', () => {
    const irregularS = [5, 55, 17, 31, 42, 8, 55, 23, 12, 49, 6, 37];
    const table: Array<[sampling: string, intervalsS: number[]]> = [
      ['every 10 s', Array(120).fill(10)],
      ['every 55 s', Array(20).fill(55)],
      ['irregular 5–55 s', [...irregularS, ...irregularS, ...irregularS]],
    ];
    for (const [sampling, intervalsS] of table) {
      let t = 0;
      const steps: Step[] = [{ atS: 0, measured }];
      for (const dtS of intervalsS) {
        t += dtS;
        steps.push({ atS: t, measured });
      }
      const result = last(run(params, steps));
      const analytic = (params.kp / params.tiS) * error * t;
      assertClose(result.memory.integral, analytic, `${sampling}: integral after ${t} s`, 1e-12);
      assertClose(result.output, params.kp * error + analytic, `${sampling}: output`, 1e-12);
    }
  });

  test('the same reading (same atMs) twice: same output and memory, nothing integrated twice', () => {
    const withAll = { kp: 0.3, tiS: 600, tdS: 60, ...splitRange };
    const first = last(run(withAll, [...steady(0, 300, 30, 19.5), { atS: 330, measured: 19.7 }]));
    const again = pidStep(withAll, first.memory, { setpoint: 20, measured: 19.7, atMs: at(s(330)) });
    assert.equal(again.output, first.output);
    assert.deepEqual(again.memory, first.memory);
  });

  test('a reading stamped before the last one (the clock went back) resumes instead of freezing', () => {
    const withAll = { kp: 0.3, tiS: 600, tdS: 60, ...splitRange };
    const first = last(run(withAll, [...steady(0, 300, 30, 19.5), { atS: 330, measured: 19.7 }]));
    // When the next reading is stamped an hour earlier …
    const back = pidStep(withAll, first.memory, { setpoint: 20, measured: 19, atMs: at(s(330 - 3600)) });
    // … then it is used: nothing integrated or differentiated across the jump, P follows it.
    assert.equal(back.memory.integral, first.memory.integral);
    assert.equal(back.memory.derivativePerS, 0);
    assertClose(back.output, first.memory.integral + 0.3 * (20 - 19), 'P + I', 1e-12);
    assert.equal(back.memory.lastAtMs, at(s(330 - 3600)));
    // And the next reading 30 s later integrates normally again.
    const next = pidStep(withAll, back.memory, { setpoint: 20, measured: 19, atMs: at(s(360 - 3600)) });
    assert.ok(next.memory.integral > back.memory.integral);
  });
});

describe('pidStep: derivative on the measurement', () => {
  test('a setpoint step gives no derivative kick: the output moves the same with tdS 0 and tdS 60', () => {
    // Given a steady measurement of 19 °C, when the setpoint steps 20 → 22 at t = 90 s …
    const steps: Step[] = [...steady(0, 60, 30, 19), { atS: 90, measured: 19, setpoint: 22 }];
    const jump = (tdS: number): number => {
      const results = run({ kp: 0.2, tiS: 600, tdS, ...splitRange }, steps);
      return last(results).output - results[results.length - 2]!.output;
    };
    // … then the output moves by kp · Δr (+ a little integral) whatever the derivative time.
    assert.ok(jump(0) > 0.39, `output rose by kp · 2 = 0.4 (got ${jump(0)})`);
    assertClose(jump(60), jump(0), 'tdS 60 vs tdS 0', 1e-12);
  });

  test('a 0.0625 °C quantization step is filtered (default filter Tf = tdS)', () => {
    const kp = 0.5;
    const tdS = 20;
    const stepC = 0.0625;
    /** Derivative contribution at the step, sampling every dtS: output with tdS minus without. */
    const contribution = (dtS: number): number => {
      const steps: Step[] = [...steady(0, 10 * dtS, dtS, 20), { atS: 11 * dtS, measured: 20 + stepC }];
      const output = (td: number) => last(run({ kp, tiS: 0, tdS: td, ...splitRange }, steps)).output;
      return output(tdS) - output(0);
    };
    // Given readings every second, the step's kick is far below the unfiltered kp · td · Δ / dt.
    const unfiltered = (kp * tdS * stepC) / 1;
    const kick = contribution(1);
    assert.ok(kick < 0, 'a rising measurement pushes the output down');
    assert.ok(Math.abs(kick) <= 0.1 * unfiltered, `|${kick}| ≤ 0.1 × unfiltered ${unfiltered}`);
    // Whatever the sampling, the kick never exceeds kp · (td / filter) · Δ = kp · Δ: the
    // derivative moves the output no more than the proportional term does for the same step.
    const bound = kp * stepC;
    for (const dtS of [0.5, 1, 5, 10, 30]) {
      const kickAt = contribution(dtS);
      assert.ok(Math.abs(kickAt) <= bound + 1e-12, `dt ${dtS} s: |${kickAt}| ≤ ${bound}`);
      assert.ok(Math.abs(kickAt) < (kp * tdS * stepC) / dtS, `dt ${dtS} s: below the unfiltered kick`);
    }
  });
});

describe('pidStep: anti-windup (back-calculation, Tt = Ti / 2)', () => {
  const params = { kp: 0.1, tiS: 600, tdS: 0, ...heaterOnly };
  const table: Array<[name: string, measured: number]> = [
    ['3 °C below (P 0.3 < 1)', 17],
    ['15 °C below (P 1.5 > 1)', 5],
  ];
  for (const [name, measured] of table) {
    test(`30 min saturated ${name}: integral stays in range, output leaves saturation at once`, () => {
      // Given 30 min at full output with a large error (from a running start at 80 %) …
      const saturated = run(params, steady(0, 1_800, 30, measured), pidInitialMemory(0.8));
      assert.ok(
        saturated.every((r) => r.output === 1),
        'saturated at outputMax',
      );
      const integral = last(saturated).memory.integral;
      assert.ok(integral >= 0 && integral <= 1, `integral ${integral} within [0, 1]`);
      // … when the measurement overshoots the setpoint, the output drops below 1 within two readings.
      const after = run(
        params,
        [
          { atS: 1_830, measured: 20.2 },
          { atS: 1_860, measured: 20.4 },
        ],
        last(saturated).memory,
      );
      assert.ok(
        after.some((r) => r.output < 1),
        `left saturation: ${after.map((r) => r.output).join(', ')}`,
      );
    });
  }

  test('while saturated, the integral tracks the value that holds the limit (no wind-up to the clamp)', () => {
    // Error 3, P = 0.3: the integral settles near 1 − P (plus Tt·kp·e/Ti = 0.15), not at 1.
    const integral = last(run(params, steady(0, 7_200, 30, 17))).memory.integral;
    assertClose(integral, 1 - 0.3 + (300 * 0.1 * 3) / 600, 'integral equilibrium', 0.01);
  });
});

describe('pidStep: output limits', () => {
  const ranges: Array<[name: string, range: { outputMin: number; outputMax: number }]> = [
    ['heater 0..1', heaterOnly],
    ['cooler −1..0', { outputMin: -1, outputMax: 0 }],
    ['split −1..1', splitRange],
  ];
  for (const [name, range] of ranges) {
    test(`${name}: every output within the range, through swings, a gap and feedforward`, () => {
      const measured = [10, 30, 20, 12, 28, 19.5, 35, 5, 20.1, 20];
      const steps: Step[] = measured.map((m, i) => ({ atS: i * 45 + (i > 5 ? 900 : 0), measured: m }));
      steps.push(
        { atS: 2_000, measured: 20, feedforward: 0.8 },
        { atS: 2_030, measured: 10, feedforward: -0.8 },
      );
      const results = run({ kp: 1, tiS: 300, tdS: 60, ...range }, steps);
      for (const [i, r] of results.entries()) {
        assert.ok(r.output >= range.outputMin && r.output <= range.outputMax, `step ${i}: ${r.output}`);
      }
      assert.ok(
        results.some((r) => r.output === range.outputMin) &&
          results.some((r) => r.output === range.outputMax),
        'both limits reached',
      );
    });
  }
});

describe('pidStep: bumpless tuning change', () => {
  // Given 5 min of steady regulation 0.5 °C below the setpoint …
  const before = { kp: 0.2, tiS: 600, tdS: 0, ...heaterOnly };
  const history = steady(0, 300, 30, 19.5);

  const table: Array<[change: string, after: PidParams]> = [
    ['kp 0.2 → 0.4', { ...before, kp: 0.4 }],
    ['kp 0.2 → 0.05', { ...before, kp: 0.05 }],
    ['setpoint weight 1 → 0.5', { ...before, setpointWeight: 0.5 }],
  ];
  for (const [change, after] of table) {
    test(`${change}: the output continues from where it was`, () => {
      const settled = last(run(before, history));
      // … when the tuning changes and the same reading is seen again, nothing moves;
      const same = pidStep(after, settled.memory, { setpoint: 20, measured: 19.5, atMs: at(s(300)) });
      assert.equal(same.output, settled.output);
      // and at the next identical reading the output moves only by the new gain's integral step.
      const next = pidStep(after, settled.memory, { setpoint: 20, measured: 19.5, atMs: at(s(330)) });
      const integralStep = ((after.kp * 30) / after.tiS) * 0.5;
      assertClose(next.output, settled.output + integralStep, change, 1e-12);
    });
  }
});

describe('pidStep: gap longer than maxGapS', () => {
  const params = { kp: 0.2, tiS: 600, tdS: 60, ...splitRange, maxGapS: 600 };
  const table: Array<[gapS: number, integrates: boolean]> = [
    [600, true],
    [601, false],
    [3_600, false],
  ];
  for (const [gapS, integrates] of table) {
    test(`a gap of ${gapS} s ${integrates ? 'integrates' : 'neither integrates nor differentiates'}`, () => {
      const before = last(run(params, steady(0, 120, 30, 19)));
      // The measurement moved 1 °C during the gap.
      const after = pidStep(params, before.memory, { setpoint: 20, measured: 18, atMs: at(s(120 + gapS)) });
      if (integrates) {
        assert.ok(after.memory.integral > before.memory.integral, 'integrated across the gap');
        assert.ok(after.memory.derivativePerS !== 0, 'differentiated across the gap');
      } else {
        assert.equal(after.memory.integral, before.memory.integral, 'integral unchanged');
        assert.equal(after.memory.derivativePerS, 0, 'no derivative across the gap');
        assertClose(after.output, 0.2 * 2 + before.memory.integral, 'output = P + I', 1e-12);
        // Regulation resumes: the next reading 30 s later integrates 30 s, not the gap.
        const next = pidStep(params, after.memory, { setpoint: 20, measured: 18, atMs: at(s(150 + gapS)) });
        assertClose(
          next.memory.integral - after.memory.integral,
          ((0.2 * 30) / 600) * 2,
          'integral step',
          1e-12,
        );
      }
    });
  }
});

describe('pidStep: feedforward', () => {
  test('feedforward adds to the output', () => {
    const params = { kp: 0.2, tiS: 600, tdS: 0, ...heaterOnly };
    const table: Array<[feedforward: number, output: number]> = [
      [0, 0.1],
      [0.3, 0.4],
      [0.85, 0.95],
      [0.95, 1], // clamped
    ];
    for (const [feedforward, output] of table) {
      const result = last(run(params, [{ atS: 0, measured: 19.5, feedforward }]));
      assertClose(result.output, output, `feedforward ${feedforward}`, 1e-12);
    }
  });

  test('the integral’s clamp range shifts by the feedforward: [min − ff, max − ff]', () => {
    const params = { kp: 0.1, tiS: 300, tdS: 0, ...heaterOnly };
    const table: Array<[feedforward: number, measured: number, integralMin: number, integralMax: number]> = [
      [0, 10, 0, 1],
      [0.4, 10, -0.4, 0.6],
      [0.4, 30, -0.4, 0.6],
      [-0.2, 10, 0.2, 1.2],
    ];
    for (const [feedforward, measured, integralMin, integralMax] of table) {
      const integral = last(run(params, steady(0, 7_200, 30, measured, { feedforward }))).memory.integral;
      assert.ok(
        integral >= integralMin - 1e-12 && integral <= integralMax + 1e-12,
        `ff ${feedforward}, measured ${measured}: integral ${integral} within [${integralMin}, ${integralMax}]`,
      );
    }
  });
});

describe('pidStep: error deadband', () => {
  // Band 1 °C wide around 20 °C: no push inside 19.5..20.5.
  const params = { kp: 0.4, tiS: 300, tdS: 0, ...splitRange, errorDeadband: 1 };
  const table: Array<[measured: number, proportional: number, integrates: boolean]> = [
    [20, 0, false],
    [19.6, 0, false],
    [20.4, 0, false],
    [19.5, 0, false],
    [20.5, 0, false],
    [19.4, 0.4 * 0.1, true],
    [21, 0.4 * -0.5, true],
  ];
  for (const [measured, proportional, integrates] of table) {
    test(`measured ${measured}: P ${proportional}, integral ${integrates ? 'moves' : 'still'}`, () => {
      const start = { ...pidInitialMemory(0.25) };
      const results = run(params, steady(0, 300, 30, measured), start);
      const first = results[0]!;
      assertClose(first.output - 0.25, proportional, 'P on the first reading', 1e-12);
      const moved = last(results).memory.integral !== 0.25;
      assert.equal(moved, integrates);
    });
  }
});

describe('pidStep: setpoint weight below 1', () => {
  test('b 0.5 still holds a 20 °C setpoint: the integral absorbs Kp · (b − 1) · r', () => {
    // Given a plant that needs 40 % to stay at 20 °C, reached and held …
    const params = { kp: 0.5, tiS: 600, tdS: 0, setpointWeight: 0.5, ...heaterOnly };
    const start = pidInitialMemory(0.4 - 0.5 * (0.5 - 1) * 20);
    const results = run(params, steady(0, 3_600, 30, 20), start);
    // … the controller keeps delivering 40 %, not 0 %.
    assertClose(last(results).output, 0.4, 'holding output at the setpoint', 1e-9);
  });
});
