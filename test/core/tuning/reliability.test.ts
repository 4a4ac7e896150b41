import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mayApplyUnseen } from '../../../src/core/tuning/loop-tuning.js';
import { judgeModel, judgeStoredModel, type RunFigures } from '../../../src/core/tuning/reliability.js';
import type { NewTuning } from '../../../src/store/desired-store.js';
import { continuousLoop } from '../fixtures.js';

/** A room run as the autotune ends it: 2,000 s, relay period 300 s, DS18B20-like noise. */
const RUN: RunFigures = { durationS: 2000, periodS: 300, noiseSigma: 0.05, noiseQuantum: 0.0625 };
const SOUND = {
  model: { gain: 20.3, timeConstantS: 609, deadTimeS: 60, ambient: 10 },
  standardError: { gain: 0.5, timeConstantS: 16, deadTimeS: 0.3 },
  rmsResidual: 0.052,
};
type Identification = typeof SOUND;
const withModel = (
  model: Partial<Identification['model']>,
  se: Partial<Identification['standardError']> = {},
) => ({
  ...SOUND,
  model: { ...SOUND.model, ...model },
  standardError: { ...SOUND.standardError, ...se },
});

const TABLE: [string, Identification, RunFigures, 'sound' | 'flagged' | 'refused', RegExp | undefined][] = [
  ['a sound room model', SOUND, RUN, 'sound', undefined],
  [
    'the absurd fit: K 5.5·10⁵, τ 9.4·10⁶ s (an integrating plant)',
    withModel({ gain: 5.5e5, timeConstantS: 9.4e6 }, { gain: 1e4, timeConstantS: 1e5 }),
    RUN,
    'refused',
    /integrating/,
  ],
  [
    'K and τ not determined within 20 % (a kettle K 105 ± 22, τ 393 ± 84 s)',
    withModel({ gain: 105, timeConstantS: 393, deadTimeS: 20 }, { gain: 22, timeConstantS: 84 }),
    RUN,
    'flagged',
    /K 105 ± 22 \(21 %.*τ 393 ± 84 \(21 %/,
  ],
  [
    'an unknown standard error (fewer than 2 cycles)',
    withModel({}, { gain: Number.NaN }),
    RUN,
    'flagged',
    /K 20.3 ± NaN/,
  ],
  [
    'a dead time longer than the relay period allows',
    withModel({ deadTimeS: 250 }),
    RUN,
    'refused',
    /θ 250 s is longer than a relay of period 300 s/,
  ],
  [
    'a residual 5.6× the noise (a disturbed run)',
    { ...SOUND, rmsResidual: 0.3 },
    RUN,
    'refused',
    /disturbed/,
  ],
  [
    'a residual 1.8× the noise (a fit on the wrong start)',
    { ...SOUND, rmsResidual: 0.095 },
    RUN,
    'flagged',
    /1.79×/,
  ],
  ['a negative time constant', withModel({ timeConstantS: -5 }), RUN, 'refused', /not a plant/],
];

describe('judgeModel: the verdict on an identified model', () => {
  for (const [what, identification, run, verdict, reason] of TABLE) {
    test(`${what}: ${verdict}`, () => {
      const judged = judgeModel(identification, run);
      assert.equal(judged.verdict, verdict, judged.reasons.join('; '));
      assert.equal(judged.reliable, verdict === 'sound');
      if (reason === undefined) assert.deepEqual(judged.reasons, []);
      else assert.match(judged.reasons.join('; '), reason);
    });
  }
});

describe('judgeStoredModel: the same verdict from what the store keeps', () => {
  const details = { durationS: 2000, periodS: 300, noiseSigma: 0.05, noiseQuantum: 0.0625, cycles: 3 };
  for (const [what, identification, , verdict] of TABLE) {
    test(`${what}: ${verdict}`, () => {
      const stored = {
        ...identification.model,
        standardError: identification.standardError,
        rmsResidual: identification.rmsResidual,
      };
      assert.equal(judgeStoredModel(stored, details).verdict, verdict);
    });
  }

  test('gains entered by hand (no model) have nothing to judge: sound', () => {
    assert.equal(judgeStoredModel(undefined, undefined).verdict, 'sound');
  });

  test('a summary without the run figures (an older build) skips only the checks that need them', () => {
    const absurd = withModel({ gain: 5.5e5, timeConstantS: 9.4e6 }, { gain: 1e4, timeConstantS: 1e5 });
    const stored = { ...absurd.model, standardError: absurd.standardError, rmsResidual: absurd.rmsResidual };
    assert.equal(judgeStoredModel(stored, {}).verdict, 'sound');
    const loose = withModel({}, { gain: 8 });
    assert.equal(
      judgeStoredModel({ ...loose.model, standardError: loose.standardError, rmsResidual: 0 }, {}).verdict,
      'flagged',
    );
  });
});

describe('autoApply reads the verdict (core/tuning/loop-tuning.ts mayApplyUnseen)', () => {
  // kp within 10× of the file's (0.2): only the verdict differs between the rows.
  const spec = continuousLoop();
  const tuning = (identification: Identification): NewTuning => ({
    gains: { kp: 0.25, tiS: 480, tdS: 0 },
    model: {
      ...identification.model,
      standardError: identification.standardError,
      rmsResidual: identification.rmsResidual,
    },
    details: { durationS: 2000, periodS: 300, noiseSigma: 0.05, noiseQuantum: 0.0625, side: 'raise' },
  });
  test('a sound model goes in force', () => {
    assert.equal(mayApplyUnseen(spec, tuning(SOUND)), true);
  });
  test('a flagged model (K, τ ± 21 %) waits for a person', () => {
    const [, flagged] = TABLE[2]!;
    assert.equal(mayApplyUnseen(spec, tuning(flagged)), false);
  });
});
