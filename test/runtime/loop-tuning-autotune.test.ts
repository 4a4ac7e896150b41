/**
 * The runtime's pure tuning helpers (runtime/loop-tuning.ts): a stored tuning's gains in the
 * spec, a request's options merged over the config's, and the autotune's events.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AutotuneMemory } from '../../src/core/tuning/autotune.js';
import {
  autotuneOptions,
  autotuneTransition,
  mayApplyUnseen,
  tunedLoopSpec,
} from '../../src/runtime/loop-tuning.js';
import { heaterRelayLoop, hysteresisHeaterLoop, relay, splitRangeLoop } from '../core/fixtures.js';

const TUNING = {
  version: 3,
  gains: { kp: 1, tiS: 600, tdS: 0 },
  model: {
    gain: 18,
    timeConstantS: 620,
    deadTimeS: 55,
    ambient: 11,
    standardError: { gain: 0.5, timeConstantS: 20, deadTimeS: 3 },
    rmsResidual: 0.04,
  },
};

describe('tunedLoopSpec', () => {
  test("the tuning's gains replace the config's; the other PID settings stay", () => {
    const spec = heaterRelayLoop({
      controller: { type: 'pid', pid: { kp: 0.5, tiS: 1_200, tdS: 10, derivativeFilterS: 5 } },
    });
    const tuned = tunedLoopSpec(spec, TUNING);
    assert.deepEqual(tuned.controller.type === 'pid' && tuned.controller.pid, {
      kp: 1,
      tiS: 600,
      tdS: 0,
      derivativeFilterS: 5,
    });
  });

  test("a tuning's setpoint weight replaces the config's; a tuning without one leaves it", () => {
    const spec = heaterRelayLoop({
      controller: { type: 'pid', pid: { kp: 0.5, tiS: 1_200, tdS: 0, setpointWeight: 0.6 } },
    });
    const weighted = { ...TUNING, gains: { ...TUNING.gains, setpointWeight: 0.9 } };
    const pid = (tuning: typeof TUNING) => {
      const tuned = tunedLoopSpec(spec, tuning);
      return tuned.controller.type === 'pid' ? tuned.controller.pid.setpointWeight : undefined;
    };
    assert.equal(pid(weighted), 0.9);
    assert.equal(pid(TUNING), 0.6);
  });

  test('without a model in the config, the tuning model gives the feedforward its gain, ambient and dead time', () => {
    const tuned = tunedLoopSpec(heaterRelayLoop(), TUNING);
    assert.deepEqual(tuned.controller.type === 'pid' && tuned.controller.model, {
      gain: 18,
      ambient: 11,
      deadTimeS: 55,
    });
  });

  test("the config's own model wins over the tuning's", () => {
    const model = { gain: 20, ambient: 10 };
    const tuned = tunedLoopSpec(
      heaterRelayLoop({ controller: { type: 'pid', pid: { kp: 0.5, tiS: 1_200, tdS: 0 }, model } }),
      TUNING,
    );
    assert.deepEqual(tuned.controller.type === 'pid' && tuned.controller.model, model);
  });

  test('a duty band keeps its width in the loop unit: scaled with kp, capped', () => {
    const banded = (halfBand: number) =>
      heaterRelayLoop({ raise: { ...relay('heater'), band: { halfBand } } });
    assert.equal(tunedLoopSpec(banded(0.1), TUNING).raise?.band?.halfBand, 0.2, 'kp 0.5 → 1: twice the duty');
    assert.equal(tunedLoopSpec(banded(0.3), TUNING).raise?.band?.halfBand, 0.49, 'capped');
  });

  test('no tuning, or a hysteresis controller: the spec as it is', () => {
    const spec = heaterRelayLoop();
    assert.equal(tunedLoopSpec(spec, undefined), spec);
    const hysteresis = hysteresisHeaterLoop();
    assert.equal(tunedLoopSpec(hysteresis, TUNING), hysteresis);
  });
});

describe('autotuneOptions', () => {
  const request = (options: object) => ({ action: 'start' as const, atMs: 0, generation: 1, options });
  for (const [label, defaults, options, expected] of [
    ['nothing given', undefined, {}, {}],
    [
      'config only',
      { autoApply: false, closedLoopS: 120, maxDurationS: 3600 },
      {},
      { closedLoopS: 120, maxDurationMs: 3_600_000 },
    ],
    [
      'the request wins',
      { autoApply: false, closedLoopS: 120, maxDurationS: 3600 },
      { side: 'lower', closedLoopS: 60 },
      { side: 'lower', closedLoopS: 60, maxDurationMs: 3_600_000 },
    ],
  ] as const) {
    test(label, () => {
      assert.deepEqual(autotuneOptions(defaults, request(options)), expected);
    });
  }
});

describe('autotuneTransition', () => {
  const run = (phase: AutotuneMemory['phase'], extra: Partial<AutotuneMemory> = {}) =>
    ({
      phase,
      side: 'raise',
      setpoint: 20,
      startedAtMs: 1_000,
      maxDurationMs: 60_000,
      ...extra,
    }) as AutotuneMemory;
  for (const [label, before, after, kind] of [
    ['a new run', undefined, run('noise'), 'autotune-started'],
    ['noise → relay', run('noise'), run('relay'), undefined],
    ['aborted', run('relay'), run('aborted', { abortReason: 'restarted' }), 'autotune-aborted'],
    ['an old run read at start', undefined, run('aborted'), undefined],
    ['unchanged end', run('aborted'), run('aborted'), undefined],
  ] as const) {
    test(`${label}: ${kind ?? 'no event'}`, () => {
      assert.equal(autotuneTransition(before, after)?.kind, kind);
    });
  }
});

describe('tunedLoopSpec: what never reaches the PID', () => {
  const spec = heaterRelayLoop({ controller: { type: 'pid', pid: { kp: 0.5, tiS: 1_200, tdS: 0 } } });
  const cases: { name: string; gains: typeof TUNING.gains & { setpointWeight?: number } }[] = [
    { name: 'kp 0', gains: { kp: 0, tiS: 600, tdS: 0 } },
    { name: 'kp negative', gains: { kp: -1, tiS: 600, tdS: 0 } },
    { name: 'kp NaN', gains: { kp: Number.NaN, tiS: 600, tdS: 0 } },
    { name: 'tiS infinite', gains: { kp: 1, tiS: Number.POSITIVE_INFINITY, tdS: 0 } },
    { name: 'tdS negative', gains: { kp: 1, tiS: 600, tdS: -5 } },
    { name: 'setpoint weight 2', gains: { kp: 1, tiS: 600, tdS: 0, setpointWeight: 2 } },
  ];
  for (const { name, gains } of cases) {
    test(`given a stored tuning with ${name}, then the file's gains stay in force`, () => {
      assert.equal(tunedLoopSpec(spec, { ...TUNING, gains }), spec);
    });
  }

  test("given a cooler's identified model (gain per unit of its level, negative), then the feedforward gets its magnitude", () => {
    const cooler = { ...TUNING, model: { ...TUNING.model, gain: -15 } };
    const tuned = tunedLoopSpec(heaterRelayLoop(), cooler);
    assert.equal(tuned.controller.type === 'pid' && tuned.controller.model?.gain, 15);
  });
});

describe('mayApplyUnseen: autoApply puts a result in force only when nothing is doubtful', () => {
  const file = (kp: number) => ({ type: 'pid' as const, pid: { kp, tiS: 600, tdS: 0 } });
  const cases: { name: string; spec: ReturnType<typeof heaterRelayLoop>; kp: number; want: boolean }[] = [
    { name: 'a heater, kp 2× the file', spec: heaterRelayLoop({ controller: file(0.5) }), kp: 1, want: true },
    {
      name: 'a heater, kp 10× the file',
      spec: heaterRelayLoop({ controller: file(0.1) }),
      kp: 1,
      want: true,
    },
    {
      name: 'a heater, kp 20× the file',
      spec: heaterRelayLoop({ controller: file(0.05) }),
      kp: 1,
      want: false,
    },
    {
      name: 'a heater, kp 1/20 of the file',
      spec: heaterRelayLoop({ controller: file(20) }),
      kp: 1,
      want: false,
    },
    {
      name: 'a heater and a cooler (one gain set for both)',
      spec: splitRangeLoop({ controller: file(1) }),
      kp: 1,
      want: false,
    },
    { name: 'unusable gains', spec: heaterRelayLoop({ controller: file(1) }), kp: Number.NaN, want: false },
  ];
  for (const { name, spec, kp, want } of cases) {
    test(`${name} → ${want ? 'applied' : 'a proposal'}`, () => {
      assert.equal(mayApplyUnseen(spec, { gains: { kp, tiS: 600, tdS: 0 } }), want);
    });
  }
});
