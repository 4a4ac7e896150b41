import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyseRelayOscillation } from '../../../src/core/tuning/relay-analysis.js';
import type { RelayExperiment, RelaySwitch, Sample } from '../../../src/core/tuning/relay-experiment.js';
import { Random } from '../../../src/drivers/sim/random.js';
import { TUNING_PLANTS } from './plants.js';
import { driveRelay } from './relay-driver.js';

const SETPOINT = 20;

/**
 * A synthetic relay record: each cycle rises for `highS` from setpoint − a to setpoint + a and
 * falls back for `lowS` (a triangle), sampled every 5 s, optionally with Gaussian noise. The
 * first cycle stands for the open-loop step the analysis skips.
 */
function triangleRecord(
  cycles: { highS: number; lowS: number; amplitude: number }[],
  noise = 0,
): RelayExperiment {
  const random = new Random(3);
  const samples: Sample[] = [];
  const switches: RelaySwitch[] = [];
  let startS = 0;
  for (const { highS, lowS, amplitude } of cycles) {
    switches.push({ tMs: startS * 1000, level: 1 }, { tMs: (startS + highS) * 1000, level: 0 });
    for (let tS = 0; tS < highS + lowS; tS += 5) {
      const rising = tS < highS;
      const fraction = rising ? tS / highS : 1 - (tS - highS) / lowS;
      const value = SETPOINT - amplitude + 2 * amplitude * fraction + noise * random.gaussian();
      samples.push({ tMs: (startS + tS) * 1000, value });
    }
    startS += highS + lowS;
  }
  switches.push({ tMs: startS * 1000, level: 1 });
  samples.push({ tMs: startS * 1000, value: SETPOINT - 1 });
  return {
    samples,
    switches,
    initialLevel: 0,
    highLevel: 1,
    lowLevel: 0,
    setpoint: SETPOINT,
    hysteresis: 0.2,
  };
}

const steady = (n: number, scatter: (i: number) => number = () => 0) =>
  Array.from({ length: n }, (_, i) => ({ highS: 400 * (1 + scatter(i)), lowS: 800, amplitude: 1 }));

describe('analyseRelayOscillation: does the oscillation agree yet?', () => {
  const TABLE: [string, RelayExperiment, 'too-few-cycles' | 'not-steady' | 'steady'][] = [
    ['7 equal cycles (the first skipped): 3 agree with the 3 before', triangleRecord(steady(7)), 'steady'],
    ['5 cycles: not enough to compare 3 with 3', triangleRecord(steady(5)), 'too-few-cycles'],
    [
      'periods still growing 8 % a cycle',
      triangleRecord(steady(7).map((c, i) => ({ ...c, highS: 400 * 1.08 ** i, lowS: 800 * 1.08 ** i }))),
      'not-steady',
    ],
    [
      'amplitude fell by a fifth in the last 3 cycles (a load changed)',
      triangleRecord(steady(7).map((c, i) => ({ ...c, amplitude: i >= 4 ? 0.8 : 1 }))),
      'not-steady',
    ],
    [
      'cycle-to-cycle scatter of ±6 % (noise) averages out',
      triangleRecord(steady(7, (i) => (i % 2 === 0 ? 0.06 : -0.06))),
      'steady',
    ],
  ];
  for (const [what, record, state] of TABLE) {
    test(what, () => assert.equal(analyseRelayOscillation(record).state, state));
  }

  test('a tighter tolerance can refuse what the default accepts', () => {
    const record = triangleRecord(steady(7).map((c, i) => ({ ...c, amplitude: i >= 4 ? 0.93 : 1 })));
    assert.equal(analyseRelayOscillation(record).state, 'steady');
    assert.equal(analyseRelayOscillation(record, { tolerance: 0.05 }).state, 'not-steady');
  });
});

describe('analyseRelayOscillation: what it measures', () => {
  test('periods and on-times from the switches, peak-to-peak from the values', () => {
    const analysis = analyseRelayOscillation(triangleRecord(steady(7)));
    assert.equal(analysis.cycles.length, 3);
    assert.equal(analysis.periodS, 1200);
    assert.deepEqual(
      analysis.cycles.map((c) => c.highS),
      [400, 400, 400],
    );
    // The moving average rounds the triangle's sharp corners a little: within 3 % of 2.
    assert.ok(Math.abs(analysis.peakToPeak - 2) < 0.06, `peak-to-peak ${analysis.peakToPeak}`);
  });

  test('noise (σ 0.1) does not inflate the amplitude the way raw extremes would', () => {
    const record = triangleRecord(steady(7), 0.1);
    const smoothed = analyseRelayOscillation(record).peakToPeak;
    const raw = analyseRelayOscillation(record, { smoothingSamples: 1 }).peakToPeak;
    assert.ok(Math.abs(smoothed - 2) < 0.06, `smoothed peak-to-peak ${smoothed}`);
    assert.ok(raw - 2 > 0.15, `raw peak-to-peak ${raw} should show the noise`);
  });

  test('ultimate gain by the describing function, with the hysteresis correction', () => {
    const analysis = analyseRelayOscillation(triangleRecord(steady(7)));
    const a = analysis.peakToPeak / 2;
    // Relay 0..1: d = 0.5; ε = 0.2.
    assert.ok(Math.abs(analysis.ultimateGain - 2 / (Math.PI * Math.sqrt(a * a - 0.04))) < 1e-12);
  });

  for (const plant of TUNING_PLANTS) {
    for (const seed of [1, 2, 3]) {
      test(`simulated ${plant.id} with σ 0.05 and 0.0625 quantisation (seed ${seed}): steady after 7 cycles`, () => {
        const analysis = analyseRelayOscillation(driveRelay(plant, { seed, cycles: 6 }));
        assert.equal(analysis.state, 'steady', JSON.stringify(analysis, null, 1));
      });
    }
  }
});
