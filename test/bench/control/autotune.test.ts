import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type AutotuneRow, checkTargets } from './autotune.js';
import { ruleFromEsphomeFactors, ultimateGain, ZN_PID, znGains } from './autotune-peers.js';
import { renderStepSvg } from './step-svg.js';

describe("the peers' relay + Ziegler–Nichols rules, as their source writes them", () => {
  test('ESPHome "Ziegler-Nichols PID" (kp 0.6 Ku, ki 1.2 Ku/Pu, kd 0.075 Ku·Pu) is Ti = Pu/2, Td = Pu/8', () => {
    const rule = ruleFromEsphomeFactors(0.6, 1.2, 0.075);
    assert.ok(Math.abs(rule.kpFactor - 0.6) < 1e-12);
    assert.ok(Math.abs(rule.tiFactor - 0.5) < 1e-12);
    assert.ok(Math.abs(rule.tdFactor - 0.125) < 1e-12);
  });

  test("Klipper's calc_pid (Kp 0.6 Ku, Ti 0.5 Tu, Td 0.125 Tu) is the same table", () => {
    assert.deepEqual(ZN_PID, { kpFactor: 0.6, tiFactor: 0.5, tdFactor: 0.125 });
  });

  test('gains from Ku and Pu', () => {
    // Given Ku 2 /°C and Pu 400 s, then kp 1.2 /°C, Ti 200 s, Td 50 s.
    assert.deepEqual(znGains(2, 400), { kp: 1.2, tiS: 200, tdS: 50 });
  });

  test('Ku = 4d/(πa): a heater relay 0↔1 is d = ½ for ESPHome, d = max_power = 1 for Klipper', () => {
    const a = 0.5;
    const esphome = ultimateGain(0.5, a);
    const klipper = ultimateGain(1, a);
    assert.ok(Math.abs(esphome - (4 * 0.5) / (Math.PI * 0.5)) < 1e-12);
    assert.ok(Math.abs(klipper / esphome - 2) < 1e-12);
  });
});

/** A row with the figures the targets read; the rest filled in plausibly. */
function row(overrides: Partial<AutotuneRow> & Pick<AutotuneRow, 'plant'>): AutotuneRow {
  const steps = {
    simcTrue: {
      iae: 100,
      overshootC: 0,
      overshootPct: 0,
      settlingS: 10,
      totalVariation: 1,
      switchesPerHour: null,
      ripplePpC: 0.2,
      gains: { kp: 1, tiS: 1, tdS: 0 },
    },
    autotune: {
      iae: 110,
      overshootC: 0.02,
      overshootPct: 1,
      settlingS: 10,
      totalVariation: 1,
      switchesPerHour: null,
      ripplePpC: 0.2,
      gains: { kp: 1, tiS: 1, tdS: 0 },
    },
  };
  return {
    actuator: 'continuous',
    modulation: null,
    trueModel: { gain: 1, timeConstantS: 100, deadTimeS: 10 },
    identified: {
      gain: 1,
      timeConstantS: 100,
      deadTimeS: 10,
      standardError: { gain: 0, timeConstantS: 0, deadTimeS: 0 },
    },
    errorPct: { gain: 5, timeConstantS: -10, deadTimeS: 19 },
    durationS: 550,
    durationPerTimeConstants: 5,
    peers: [],
    steps,
    iaeRatio: { simcTrue: 1.1, simcTrueWeighted: 1, esphome: 0.9, klipper: 0.8 },
    ...overrides,
  };
}

describe('targets', () => {
  test('given every figure inside its target, then every line passes', () => {
    const lines = checkTargets([row({ plant: 'a' }), row({ plant: 'b' })]);
    assert.deepEqual(
      lines.map((l) => l.pass),
      [true, true, true, true, true],
    );
  });

  test('given one plant over a target, then that line fails and names the plant with its figure', () => {
    const lines = checkTargets([
      row({ plant: 'a' }),
      row({ plant: 'b', errorPct: { gain: 0, timeConstantS: 0, deadTimeS: -21.5 } }),
    ]);
    assert.equal(lines[0]!.pass, false);
    assert.match(lines[0]!.detail, /b\/continuous 21\.5 %/);
    assert.deepEqual(
      lines.slice(1).map((l) => l.pass),
      [true, true, true, true],
    );
  });

  test('given a peer with the same IAE, then "better than relay + ZN" fails (equal is not better)', () => {
    const lines = checkTargets([
      row({ plant: 'a', iaeRatio: { simcTrue: 1, simcTrueWeighted: 1, esphome: 1, klipper: 0.5 } }),
    ]);
    assert.equal(lines[3]!.pass, false);
  });

  test('given an aborted autotune, then every target fails', () => {
    const aborted = row({ plant: 'b', abortReason: 'time limit' });
    const lines = checkTargets([row({ plant: 'a' }), aborted]);
    assert.ok(lines.every((l) => !l.pass));
  });

  test('a band row (information) does not count', () => {
    const band = row({
      plant: 'a',
      actuator: 'relay',
      modulation: 'band',
      iaeRatio: { simcTrue: 9, simcTrueWeighted: 9, esphome: 9, klipper: 9 },
    });
    const lines = checkTargets([row({ plant: 'a' }), band]);
    assert.ok(lines.every((l) => l.pass));
  });

  test("a relay row's overshoot (its ripple) does not count; its IAE against the peers does", () => {
    const steps = row({ plant: 'r' }).steps;
    const relay = row({
      plant: 'r',
      actuator: 'relay',
      modulation: 'window',
      steps: { ...steps, autotune: { ...steps.autotune!, overshootPct: 60 } },
      iaeRatio: { simcTrue: 1, simcTrueWeighted: 1, esphome: 1.2, klipper: 0.5 },
    });
    const lines = checkTargets([row({ plant: 'a' }), relay]);
    assert.equal(lines[2]!.pass, true, lines[2]!.detail);
    assert.equal(lines[3]!.pass, false);
    assert.match(lines[3]!.detail, /r\/relay 1\.20/);
  });

  test('given a continuous row over 2 % overshoot, then the overshoot line fails and names it', () => {
    const steps = row({ plant: 'c' }).steps;
    const lines = checkTargets([
      row({ plant: 'c', steps: { ...steps, autotune: { ...steps.autotune!, overshootPct: 2.5 } } }),
    ]);
    assert.equal(lines[2]!.pass, false);
    assert.match(lines[2]!.detail, /c\/continuous 2\.5 %/);
  });
});

describe('step picture', () => {
  const trace = {
    tS: [-10, -5, 0, 5, 10, 15, 20],
    value: [20, 20, 20, 20.5, 21.5, 22, 22],
    measured: [20, 20.0625, 20, 20.5, 21.5, 22, 21.9375],
    setpoint: [20, 20, 22, 22, 22, 22, 22],
    level: [0.5, 0.5, 1, 1, 0.8, 0.6, 0.6],
  };
  const svg = renderStepSvg({
    title: 'room <test> & co',
    unit: '°C',
    panels: [{ title: 'Continuous actuator', traces: { simcTrue: trace, autotune: trace } }],
    labels: { simcTrue: 'SIMC, true model', autotune: 'homeostat autotune' },
    order: ['simcTrue', 'autotune', 'esphome'],
  });

  test('one column per tuning, titles escaped, axis titles with units', () => {
    assert.match(svg, /^<svg /);
    assert.match(svg, /room &lt;test&gt; &amp; co/);
    assert.match(svg, /SIMC, true model/);
    assert.match(svg, /homeostat autotune/);
    assert.match(svg, />°C</);
    assert.match(svg, />output %</);
    assert.match(svg, /min from the step/);
  });

  test('a tuning without a trace gets a note instead of lines', () => {
    assert.match(svg, /no tuning \(autotune aborted\)/);
  });
});
