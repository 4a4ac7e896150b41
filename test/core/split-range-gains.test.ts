import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ControllerResult, controllerOutput, sideActing } from '../../src/core/controller-output.js';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import type { LoopMemory } from '../../src/core/loop-state.js';
import { pidInitialMemory } from '../../src/core/pid.js';
import type { Direction, Mode } from '../../src/core/types.js';
import { at, desired, s, splitRangeLoop } from './fixtures.js';

/**
 * Split range with per-side gains (ControllerSpec 'pid'.lowerPid): the PID runs with the gains
 * of the side acting, and the switch between them is bumpless.
 */

const SETPOINT = 20;
const HEATER_GAINS = { kp: 0.1, tiS: 600, tdS: 0 };
const COOLER_GAINS = { kp: 1, tiS: 600, tdS: 0 };

/** Continuous heater and cooler, no deadband: the gains alone decide how the output moves. */
function loop(
  controller: LoopSpec['controller'] = { type: 'pid', pid: HEATER_GAINS, lowerPid: COOLER_GAINS },
): LoopSpec {
  const base = splitRangeLoop({
    raise: { id: 'mat', kind: 'continuous', safeLevel: 0 },
    lower: { id: 'fridge', kind: 'continuous', safeLevel: 0 },
    deadband: 0,
    changeoverMs: 0,
  });
  return { ...base, controller };
}

const sharedGains: LoopSpec['controller'] = { type: 'pid', pid: HEATER_GAINS };

type Memory = Pick<LoopMemory, 'regulating' | 'pid' | 'hysteresisOn'>;
const idle: Memory = {
  regulating: false,
  pid: pidInitialMemory(),
  hysteresisOn: { raise: false, lower: false },
};

function step(spec: LoopSpec, mode: Mode, measured: number, atMs: number, memory: Memory): ControllerResult {
  return controllerOutput(
    spec,
    desired(mode, SETPOINT),
    { reading: { value: measured, atMs }, actuators: { mat: 0, fridge: 0 } },
    measured,
    memory,
  );
}

describe('split range with per-side gains: the side acting picks the gains', () => {
  const both = { raise: true, lower: true };
  const table: Array<
    [
      name: string,
      directions: Record<Direction, boolean>,
      lastOutput: number,
      measured: number,
      side: Direction,
    ]
  > = [
    ['only the lower side enabled (cool)', { raise: false, lower: true }, 0.5, 18, 'lower'],
    ['only the raise side enabled (heat)', { raise: true, lower: false }, -0.5, 22, 'raise'],
    ['both, last output below 0', both, -0.01, 19, 'lower'],
    ['both, last output above 0', both, 0.01, 21, 'raise'],
    ['both, last output 0, measured above the setpoint', both, 0, 20.5, 'lower'],
    ['both, last output 0, measured below the setpoint', both, 0, 19.5, 'raise'],
    ['both, last output 0, at the setpoint', both, 0, 20, 'raise'],
  ];
  for (const [name, directions, lastOutput, measured, side] of table) {
    test(`${name} → ${side}`, () => {
      const memory = { regulating: true, pid: { ...pidInitialMemory(), lastOutput } };
      const observed = { reading: { value: measured, atMs: at(0) }, actuators: {} };
      assert.equal(sideActing(loop(), directions, { setpoint: SETPOINT }, observed, measured, memory), side);
    });
  }

  test('resuming (not regulating): the side of what the actuators really do', () => {
    const memory = { regulating: false, pid: { ...pidInitialMemory(), lastOutput: 0.7 } };
    const observed = { reading: { value: 19, atMs: at(0) }, actuators: { mat: 0, fridge: 0.4 } };
    assert.equal(sideActing(loop(), both, { setpoint: SETPOINT }, observed, 19, memory), 'lower');
  });

  test('a first step on each side moves the output by that side’s kp × error', () => {
    // Given idle actuators (integral 0, b 1), the first output is kp · (r − y).
    assert.equal(step(loop(), 'cool', 22, at(0), idle).output, -1, 'kp 1 × 2 °C: clamped at full cooling');
    assert.ok(Math.abs(step(loop(), 'cool', 20.5, at(0), idle).output - -COOLER_GAINS.kp * 0.5) < 1e-12);
    assert.ok(Math.abs(step(loop(), 'heat', 18, at(0), idle).output - HEATER_GAINS.kp * 2) < 1e-12);
    assert.ok(Math.abs(step(loop(), 'heat_cool', 20.5, at(0), idle).output - -COOLER_GAINS.kp * 0.5) < 1e-12);
    // Without lowerPid, the raise side's gains serve the lower side (as before).
    const shared = loop(sharedGains);
    assert.ok(Math.abs(step(shared, 'cool', 20.5, at(0), idle).output - -HEATER_GAINS.kp * 0.5) < 1e-12);
  });

  test('the switch from heater to cooler gains is bumpless: only the new P and I terms move the output', () => {
    // Given a loop regulating on the heater side with a small positive output …
    const spec = loop();
    let memory: Memory = idle;
    memory = { ...memory, ...step(spec, 'heat_cool', 19.99, at(0), memory), regulating: true };
    const before = memory.pid.lastOutput;
    assert.ok(before > 0, `heater side acting: ${before}`);
    // … when the measurement passes the setpoint the output crosses 0 with the heater's kp …
    const crossed = step(spec, 'heat_cool', 20.3, at(s(10)), memory);
    assert.ok(crossed.output < 0, `output crossed 0: ${crossed.output}`);
    const expectedCross =
      before - HEATER_GAINS.kp * 0.31 + ((HEATER_GAINS.kp * 10) / HEATER_GAINS.tiS) * -0.3;
    assert.ok(Math.abs(crossed.output - expectedCross) < 1e-12, `${crossed.output} vs ${expectedCross}`);
    memory = { ...memory, pid: crossed.pid };
    // … and the next step runs with the cooler's gains, continuing from the last output: the
    // jump is exactly the cooler's P on the error's change plus its integral over the step.
    const next = step(spec, 'heat_cool', 20.35, at(s(20)), memory);
    const expected =
      crossed.output - COOLER_GAINS.kp * 0.05 + ((COOLER_GAINS.kp * 10) / COOLER_GAINS.tiS) * -0.35;
    assert.ok(Math.abs(next.output - expected) < 1e-12, `${next.output} vs ${expected}`);
    assert.equal(next.pid.lastKp, COOLER_GAINS.kp);
    // A reading that did not move costs nothing at the switch: no step from the gain change alone.
    const still = step(spec, 'heat_cool', 20.3, at(s(20)), memory);
    const integralOnly = crossed.output + ((COOLER_GAINS.kp * 10) / COOLER_GAINS.tiS) * -0.3;
    assert.ok(Math.abs(still.output - integralOnly) < 1e-12, `${still.output} vs ${integralOnly}`);
  });
});

/**
 * A plant that heats and cools with different gains: a heat mat raising the value by 20 °C at
 * full power, a fridge lowering it by 2 °C (10× less), first order, τ 600 s, no dead time. SIMC
 * with λ 300 s gives kp = τ / (K·λ): 0.1 for the heater, 1 for the cooler.
 */
function simulate(spec: LoopSpec, ambient: number, start: number): { iae: number; final: number } {
  const tauS = 600;
  const dtS = 10;
  let y = start;
  let memory: Memory = idle;
  let output = 0;
  let iae = 0;
  for (let k = 0; k < 360; k++) {
    const result = step(spec, 'heat_cool', y, at(s(k * dtS)), memory);
    memory = { regulating: true, pid: result.pid, hysteresisOn: result.hysteresisOn };
    output = result.output;
    const heat = Math.max(output, 0) * 20;
    const cool = Math.max(-output, 0) * 2;
    y += ((ambient - y + heat - cool) / tauS) * dtS;
    iae += Math.abs(SETPOINT - y) * dtS;
  }
  return { iae, final: y };
}

describe('split range with per-side gains on a plant whose sides differ 10× in gain', () => {
  test('each side regulates with its own gains: the cooler side as fast as the heater side', () => {
    // The plant at rest at its ambient, 1 °C below the setpoint (needs the mat) or 1 °C above
    // (needs the fridge).
    const heating = simulate(loop(), 19, 19);
    const cooling = simulate(loop(), 21, 21);
    const coolingShared = simulate(loop(sharedGains), 21, 21);
    const heatingShared = simulate(loop(sharedGains), 19, 19);
    assert.ok(Math.abs(heating.final - SETPOINT) < 0.05, `heating settles: ${heating.final}`);
    assert.ok(Math.abs(cooling.final - SETPOINT) < 0.05, `cooling settles: ${cooling.final}`);
    // The heater side is unchanged by the cooler's gains.
    assert.ok(Math.abs(heating.iae - heatingShared.iae) < 1e-6, `${heating.iae} vs ${heatingShared.iae}`);
    // With the heater's gains the fridge (10× weaker) responds 10× slower; its own gains fix it.
    assert.ok(cooling.iae < coolingShared.iae / 3, `IAE ${cooling.iae} vs shared ${coolingShared.iae}`);
    // Both sides now close the loop at λ 300 s: a 1 °C step's IAE ≈ λ · 1 °C on either side.
    for (const [side, { iae }] of Object.entries({ heating, cooling }))
      assert.ok(Math.abs(iae - 300) < 0.15 * 300, `${side}: IAE ${iae}`);
  });
});
