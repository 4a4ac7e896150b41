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

  // The side follows the output at rest (integral, setpoint-weight offset, feedforward), not the
  // output: an output that crosses 0 on a noisy reading keeps its side's gains (the old rule,
  // switching on the output's sign, pumped the output towards one side on zero-mean noise).
  const regulatingOnHeater = (integral: number): Memory => ({
    regulating: true,
    hysteresisOn: { raise: false, lower: false },
    pid: {
      ...pidInitialMemory(integral),
      lastMeasured: SETPOINT,
      lastSetpoint: SETPOINT,
      lastAtMs: at(0),
      lastKp: HEATER_GAINS.kp,
      lastTdS: 0,
      lastSetpointWeight: 1,
      side: 'raise',
    },
  });

  test('a reading that swings the output below 0 keeps the heater’s gains while the output at rest is above 0', () => {
    const result = step(loop(), 'heat_cool', 21, at(s(10)), regulatingOnHeater(0.05));
    assert.ok(result.output < 0, `the output crossed 0: ${result.output}`);
    assert.equal(result.pid.side, 'raise');
    assert.equal(result.pid.lastKp, HEATER_GAINS.kp);
    const expected = 0.05 - HEATER_GAINS.kp * 1 + ((HEATER_GAINS.kp * 10) / HEATER_GAINS.tiS) * -1;
    assert.ok(Math.abs(result.output - expected) < 1e-12, `${result.output} vs ${expected}`);
  });

  test('once the output at rest is below 0 the cooler’s gains take over, the integral carried over as it was', () => {
    const memory = regulatingOnHeater(-0.001);
    const result = step(loop(), 'heat_cool', 20.3, at(s(10)), memory);
    assert.equal(result.pid.side, 'lower');
    assert.equal(result.pid.lastKp, COOLER_GAINS.kp);
    // Not re-based by (Δkp)·e: the integral only integrates, with the cooler's gains.
    const integral = -0.001 + ((COOLER_GAINS.kp * 10) / COOLER_GAINS.tiS) * -0.3;
    assert.ok(Math.abs(result.pid.integral - integral) < 1e-12, `${result.pid.integral} vs ${integral}`);
    assert.ok(Math.abs(result.output - (integral - COOLER_GAINS.kp * 0.3)) < 1e-12, `${result.output}`);
  });

  test('sides with different setpoint weights: the switch keeps the output at rest where it was', () => {
    // Raise side b 0.5: its rest offset kp·(b − 1)·r = 0.1 · −0.5 · 20 = −1, carried by the integral.
    const spec = loop({
      type: 'pid',
      pid: { ...HEATER_GAINS, setpointWeight: 0.5 },
      lowerPid: { ...COOLER_GAINS, setpointWeight: 1 },
    });
    const memory = regulatingOnHeater(1 - 0.002);
    memory.pid.lastSetpointWeight = 0.5;
    // A reading just above the setpoint: the error points to the cooler too.
    const result = step(spec, 'heat_cool', SETPOINT + 0.01, at(s(10)), memory);
    assert.equal(result.pid.side, 'lower', 'the output at rest, 0.998 − 1, is below 0');
    // Cooler b 1: no offset, so its integral starts from the output at rest, −0.002, and then
    // integrates this step's error with the cooler's gains.
    const integral = -0.002 + ((COOLER_GAINS.kp * 10) / COOLER_GAINS.tiS) * -0.01;
    assert.ok(Math.abs(result.pid.integral - integral) < 1e-12, `${result.pid.integral}`);
    assert.ok(Math.abs(result.output - (integral - COOLER_GAINS.kp * 0.01)) < 1e-12, `${result.output}`);
  });

  test('after a setpoint raise with b < 1 the heater keeps its own gains while it heats up', () => {
    // The output at rest drops by kp·(b − 1)·Δr at once (0.1 · −0.5 · 3 = −0.15) and the integral
    // catches up over Ti: below 0 for a while, but the error says heat, so the side stays.
    const spec = loop({
      type: 'pid',
      pid: { ...HEATER_GAINS, setpointWeight: 0.5 },
      lowerPid: { ...COOLER_GAINS, setpointWeight: 0.5 },
    });
    const memory = regulatingOnHeater(1 + 0.005);
    memory.pid.lastSetpointWeight = 0.5;
    const result = controllerOutput(
      spec,
      desired('heat_cool', SETPOINT + 3),
      { reading: { value: SETPOINT, atMs: at(s(10)) }, actuators: { mat: 0, fridge: 0 } },
      SETPOINT,
      memory,
    );
    assert.equal(result.pid.side, 'raise');
    assert.equal(result.pid.lastKp, HEATER_GAINS.kp);
  });

  test('zero-mean noise around 0 output does not pump the output to one side', () => {
    // Given readings alternating one DS18B20 quantum either side of the setpoint (mean error 0) …
    const spec = loop();
    let memory = regulatingOnHeater(0.003);
    let sum = 0;
    const steps = 400;
    for (let k = 1; k <= steps; k++) {
      const measured = k % 2 === 1 ? SETPOINT + 0.0625 : SETPOINT - 0.0625;
      const result = step(spec, 'heat_cool', measured, at(s(10 * k)), memory);
      memory = { ...memory, pid: result.pid };
      sum += result.output;
    }
    // … the output averages about 0, not a value pumped to one side.
    assert.ok(Math.abs(sum / steps) < 0.01, `mean output ${sum / steps}`);
  });

  test('closed loop with sensor noise: the loop holds the setpoint and uses the side the plant needs', () => {
    const run = (ambientOffset: number) => noisyCellar(loop(), ambientOffset);
    const atSetpoint = run(0);
    assert.ok(
      atSetpoint.meanAbsErrorC < 0.05,
      `ambient at the setpoint: mean |error| ${atSetpoint.meanAbsErrorC}`,
    );
    const warm = run(0.3);
    assert.ok(warm.meanAbsErrorC < 0.05, `ambient 0.3 above: mean |error| ${warm.meanAbsErrorC}`);
    assert.ok(warm.heatPower < 0.01, `ambient above the setpoint: the heater idles (${warm.heatPower})`);
    assert.ok(warm.coolPower > 0.25, `… and the cooler carries the load (${warm.coolPower})`);
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

/** Deterministic Gaussian noise (a linear congruential generator and Box–Muller). */
function gaussian(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  return () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
}

/**
 * A first-order cellar (τ 600 s) with a heater of gain 20 and a cooler of gain 2 (the per-side
 * gains' 10× ratio), read every 10 s with σ 0.05 noise and 0.0625 quantisation, for 50,000 steps;
 * figures over the last 45,000. The ambient sits `ambientOffset` above the setpoint.
 */
function noisyCellar(spec: LoopSpec, ambientOffset: number) {
  const noise = gaussian(1);
  const tauS = 600;
  const dtS = 10;
  let temperature = SETPOINT;
  let output = 0;
  let memory: Memory = idle;
  let heat = 0;
  let cool = 0;
  let absError = 0;
  let counted = 0;
  for (let k = 0; k < 50_000; k++) {
    const heater = Math.max(output, 0);
    const cooler = Math.max(-output, 0);
    temperature += (dtS / tauS) * (SETPOINT + ambientOffset + 20 * heater - 2 * cooler - temperature);
    const measured = Math.round((temperature + 0.05 * noise()) / 0.0625) * 0.0625;
    const result = controllerOutput(
      spec,
      desired('heat_cool', SETPOINT),
      { reading: { value: measured, atMs: at(s(dtS * k)) }, actuators: { mat: heater, fridge: cooler } },
      measured,
      memory,
    );
    memory = { ...memory, regulating: true, pid: result.pid };
    output = result.output;
    if (k >= 5_000) {
      heat += Math.max(output, 0);
      cool += Math.max(-output, 0) * 2;
      absError += Math.abs(temperature - SETPOINT);
      counted++;
    }
  }
  return { meanAbsErrorC: absError / counted, heatPower: (heat * 20) / counted, coolPower: cool / counted };
}
