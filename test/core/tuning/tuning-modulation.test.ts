import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ActuatorSpec } from '../../../src/core/loop-spec.js';
import { defaultDerivativeFilterS } from '../../../src/core/pid.js';
import { tunedLoopSpec } from '../../../src/core/tuning/loop-tuning.js';
import type { ModulationSuggestion } from '../../../src/core/tuning/modulation.js';
import { modulationSuggestionFor, tunedRelayModulation } from '../../../src/core/tuning/tuning-modulation.js';
import { heaterRelayLoop, relay, splitRangeLoop } from '../fixtures.js';

const windowSuggestion: ModulationSuggestion = {
  recommended: 'window',
  band: 0.15,
  halfBandDuty: 0.3,
  windowS: 240,
  windowRipple: 0.9,
  windowSwitchesPerHour: 30,
};

const defaultedRelay: ActuatorSpec = {
  id: 'heater',
  kind: 'relay',
  safeLevel: 0,
  timeProportioning: { windowMs: 600_000, minOnMs: 30_000, minOffMs: 20_000 },
  band: { halfBand: 0.25 },
  modulationDefaulted: true,
};

describe('a relay whose file chose no modulation takes the tuning’s suggestion', () => {
  it('a window suggestion: windows of the suggested length, the band gone, minimum times kept', () => {
    const tuned = tunedRelayModulation(defaultedRelay, windowSuggestion);
    assert.equal(tuned.band, undefined);
    assert.deepEqual(tuned.timeProportioning, { windowMs: 240_000, minOnMs: 30_000, minOffMs: 20_000 });
  });

  it('a band suggestion: the band in duty units the suggestion gives', () => {
    const tuned = tunedRelayModulation(defaultedRelay, { ...windowSuggestion, recommended: 'band' });
    assert.deepEqual(tuned.band, { halfBand: 0.3 });
    assert.equal(tuned.timeProportioning?.windowMs, 600_000);
  });

  it('a band suggestion wider than any band may be is capped at 0.49', () => {
    const tuned = tunedRelayModulation(defaultedRelay, {
      ...windowSuggestion,
      recommended: 'band',
      halfBandDuty: 0.495,
    });
    assert.deepEqual(tuned.band, { halfBand: 0.49 });
  });

  const unchanged: [string, ActuatorSpec, ModulationSuggestion | undefined][] = [
    [
      'the file wrote its modulation',
      { ...defaultedRelay, modulationDefaulted: undefined },
      windowSuggestion,
    ],
    [
      'a continuous actuator',
      { id: 'valve', kind: 'continuous', safeLevel: 0, modulationDefaulted: true },
      windowSuggestion,
    ],
    ['no suggestion', defaultedRelay, undefined],
  ];
  for (const [when, actuator, suggestion] of unchanged) {
    it(`leaves the actuator alone when ${when}`, () => {
      assert.equal(tunedRelayModulation(actuator, suggestion), actuator);
    });
  }
});

describe('the suggestion a stored tuning carries for a side', () => {
  const cases: [string, unknown, 'raise' | 'lower', boolean][] = [
    ['the run’s own side', { side: 'raise', modulation: windowSuggestion }, 'raise', true],
    ['the other side of that run', { side: 'raise', modulation: windowSuggestion }, 'lower', false],
    [
      'a side kept from an earlier run',
      { side: 'raise', modulationBySide: { lower: windowSuggestion } },
      'lower',
      true,
    ],
    ['details that are not an object', 'damaged', 'raise', false],
    [
      'a window shorter than the switching budget',
      { side: 'raise', modulation: { ...windowSuggestion, windowS: 5 } },
      'raise',
      false,
    ],
    [
      'a window that is not a number',
      { side: 'raise', modulation: { ...windowSuggestion, windowS: 'NaN' } },
      'raise',
      false,
    ],
    [
      'an hour-long window and more',
      { side: 'raise', modulation: { ...windowSuggestion, windowS: 7200 } },
      'raise',
      false,
    ],
    [
      'a band of half the duty or more',
      { side: 'raise', modulation: { ...windowSuggestion, recommended: 'band', halfBandDuty: 0.5 } },
      'raise',
      false,
    ],
    [
      'an unknown recommendation',
      { side: 'raise', modulation: { ...windowSuggestion, recommended: 'pwm' } },
      'raise',
      false,
    ],
  ];
  for (const [what, details, side, usable] of cases) {
    it(`${usable ? 'uses' : 'ignores'} ${what}`, () => {
      assert.equal(modulationSuggestionFor(details, side) !== undefined, usable);
    });
  }
});

describe('tunedLoopSpec: the tuning in force modulates relays the file left to the default', () => {
  const defaulted = (actuator: ActuatorSpec): ActuatorSpec => ({
    ...actuator,
    band: { halfBand: 0.125 },
    modulationDefaulted: true,
  });
  const gains = { kp: 0.4, tiS: 900, tdS: 0 };
  const tuning = (details: unknown) => ({ version: 1, gains, details });

  it('given a heater relay on the default band, when a tuning suggests 240 s windows, then it runs 240 s windows', () => {
    const spec = heaterRelayLoop({ raise: defaulted(relay('heater')) });
    const tuned = tunedLoopSpec(spec, tuning({ side: 'raise', modulation: windowSuggestion }));
    assert.equal(tuned.raise?.band, undefined);
    assert.equal(tuned.raise?.timeProportioning?.windowMs, 240_000);
  });

  it('given a heater relay whose file wrote its modulation, then the file’s band stays (scaled with kp)', () => {
    const spec = heaterRelayLoop({ raise: { ...relay('heater'), band: { halfBand: 0.125 } } });
    const tuned = tunedLoopSpec(spec, tuning({ side: 'raise', modulation: windowSuggestion }));
    assert.deepEqual(tuned.raise?.band, { halfBand: 0.1 });
    assert.equal(tuned.raise?.timeProportioning?.windowMs, 600_000);
  });

  it('given a split-range loop, each relay takes its own side’s suggestion and nothing else', () => {
    const spec = splitRangeLoop({
      raise: defaulted(relay('heater')),
      lower: defaulted(relay('compressor', { minOffMs: 300_000 })),
    });
    const lowerWindow = { ...windowSuggestion, windowS: 480 };
    const tuned = tunedLoopSpec(
      spec,
      tuning({ side: 'lower', modulation: lowerWindow, modulationBySide: { lower: lowerWindow } }),
    );
    assert.equal(tuned.lower?.timeProportioning?.windowMs, 480_000);
    assert.equal(tuned.lower?.timeProportioning?.minOffMs, 300_000);
    assert.ok(
      tuned.raise?.band !== undefined,
      'the heater has no suggestion of its own: its default band stays',
    );
  });
});

describe('tunedLoopSpec: a tuned derivative gets a filter sized for it', () => {
  it('given a PI file (tdS 0, filter 0) and a tuning with tdS 60, then the filter is its default for tdS 60 (60 s), not 0', () => {
    const spec = heaterRelayLoop({
      controller: { type: 'pid', pid: { kp: 0.5, tiS: 1200, tdS: 0, derivativeFilterS: 0 } },
    });
    const tuned = tunedLoopSpec(spec, { version: 1, gains: { kp: 0.4, tiS: 900, tdS: 60 } });
    assert.ok(tuned.controller.type === 'pid');
    assert.equal(tuned.controller.pid.tdS, 60);
    assert.equal(tuned.controller.pid.derivativeFilterS, defaultDerivativeFilterS(60));
  });

  it('given a tuning with the file’s tdS, then the file’s filter stays', () => {
    const spec = heaterRelayLoop({
      controller: { type: 'pid', pid: { kp: 0.5, tiS: 1200, tdS: 30, derivativeFilterS: 12 } },
    });
    const tuned = tunedLoopSpec(spec, { version: 1, gains: { kp: 0.4, tiS: 900, tdS: 30 } });
    assert.ok(tuned.controller.type === 'pid');
    assert.equal(tuned.controller.pid.derivativeFilterS, 12);
  });
});
