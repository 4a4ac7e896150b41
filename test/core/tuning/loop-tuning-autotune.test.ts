/**
 * The pure tuning helpers (core/tuning/loop-tuning.ts): a stored tuning's gains in the
 * spec, a request's options merged over the config's, and the autotune's events.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopMemory } from '../../../src/core/loop-state.js';
import { autotuneStatus } from '../../../src/core/status.js';
import type { AutotuneMemory } from '../../../src/core/tuning/autotune.js';
import { autotuneOptions } from '../../../src/core/tuning/autotune-request.js';
import {
  autotuneTransition,
  mayApplyUnseen,
  tunedLoopSpec,
  unrecordedTuning,
} from '../../../src/core/tuning/loop-tuning.js';
import { heaterRelayLoop, hysteresisHeaterLoop, relay, splitRangeLoop } from '../fixtures.js';

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
    [
      'aborted',
      run('relay'),
      run('aborted', { abortReason: 'interrupted by a restart' }),
      'autotune-aborted',
    ],
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
    { name: 'unusable gains', spec: heaterRelayLoop({ controller: file(1) }), kp: Number.NaN, want: false },
  ];
  for (const { name, spec, kp, want } of cases) {
    test(`${name} → ${want ? 'applied' : 'a proposal'}`, () => {
      assert.equal(mayApplyUnseen(spec, { gains: { kp, tiS: 600, tdS: 0 } }), want);
    });
  }
});

describe('mayApplyUnseen on a loop with a heater and a cooler: the tuned side against its own file kp', () => {
  // The heater's file kp 0.1, the cooler's 1 (a fridge: 10× weaker plant, 10× the gain).
  const spec = splitRangeLoop({
    controller: { type: 'pid', pid: { kp: 0.1, tiS: 600, tdS: 0 }, lowerPid: { kp: 1, tiS: 600, tdS: 0 } },
  });
  const heater = { kp: 0.1, tiS: 600, tdS: 0 };
  const cooler = (kp: number) => ({ kp, tiS: 600, tdS: 0 });
  const cases: { name: string; tuning: Parameters<typeof mayApplyUnseen>[1]; want: boolean }[] = [
    {
      name: 'the lower side tuned, kp 2× its file kp (20× the heater’s)',
      tuning: { gains: heater, lowerGains: cooler(2), details: { side: 'lower' } },
      want: true,
    },
    {
      name: 'the lower side tuned, kp 20× its file kp',
      tuning: { gains: heater, lowerGains: cooler(20), details: { side: 'lower' } },
      want: false,
    },
    {
      name: 'the raise side tuned, kp 5× its file kp',
      tuning: { gains: { ...heater, kp: 0.5 }, lowerGains: cooler(1), details: { side: 'raise' } },
      want: true,
    },
    {
      name: 'the raise side tuned, kp 20× its file kp (the cooler’s 2×)',
      tuning: { gains: { ...heater, kp: 2 }, lowerGains: cooler(1), details: { side: 'raise' } },
      want: false,
    },
    { name: 'the side not known', tuning: { gains: heater, lowerGains: cooler(1) }, want: false },
    {
      name: 'the lower side tuned, its gains unusable',
      tuning: { gains: heater, lowerGains: cooler(Number.NaN), details: { side: 'lower' } },
      want: false,
    },
  ];
  for (const { name, tuning, want } of cases) {
    test(`${name} → ${want ? 'applied' : 'a proposal'}`, () => {
      assert.equal(mayApplyUnseen(spec, tuning), want);
    });
  }

  test('without the file’s lower gains, the lower side is held to the shared kp', () => {
    const shared = splitRangeLoop({ controller: { type: 'pid', pid: { kp: 0.1, tiS: 600, tdS: 0 } } });
    const tuning = (kp: number) => ({ gains: heater, lowerGains: cooler(kp), details: { side: 'lower' } });
    assert.equal(mayApplyUnseen(shared, tuning(0.5)), true);
    assert.equal(mayApplyUnseen(shared, tuning(2)), false);
  });
});

describe('tunedLoopSpec on a loop with a heater and a cooler', () => {
  const banded = (id: string, halfBand: number) => ({ ...relay(id), band: { halfBand } });
  const spec = splitRangeLoop({
    controller: {
      type: 'pid',
      pid: { kp: 0.1, tiS: 600, tdS: 0, setpointWeight: 0.8 },
      lowerPid: { kp: 1, tiS: 900, tdS: 0 },
    },
    raise: banded('heater', 0.05),
    lower: banded('compressor', 0.2),
  });
  const tuning = {
    version: 4,
    gains: { kp: 0.2, tiS: 500, tdS: 0 },
    lowerGains: { kp: 2, tiS: 800, tdS: 10, setpointWeight: 0.7 },
  };

  test('both sides get their gains; each relay’s duty band scales with its own side’s kp', () => {
    const tuned = tunedLoopSpec(spec, tuning);
    assert.ok(tuned.controller.type === 'pid');
    assert.deepEqual(tuned.controller.pid, { kp: 0.2, tiS: 500, tdS: 0, setpointWeight: 0.8 });
    assert.deepEqual(tuned.controller.lowerPid, { kp: 2, tiS: 800, tdS: 10, setpointWeight: 0.7 });
    assert.equal(tuned.raise?.band?.halfBand, 0.1, 'heater kp 0.1 → 0.2');
    assert.equal(tuned.lower?.band?.halfBand, 0.4, 'cooler kp 1 → 2');
  });

  test('a tuning with one gain set (stored before per-side gains) serves both sides', () => {
    const tuned = tunedLoopSpec(spec, { version: 2, gains: { kp: 0.5, tiS: 600, tdS: 0 } });
    assert.ok(tuned.controller.type === 'pid');
    assert.equal(tuned.controller.lowerPid?.kp, 0.5);
    assert.equal(tuned.controller.lowerPid?.tiS, 600);
  });

  test('a damaged lower side (NaN, negative) keeps the whole tuning from the PID: the file’s gains stay', () => {
    for (const lowerGains of [
      { kp: Number.NaN, tiS: 600, tdS: 0 },
      { kp: 1, tiS: -1, tdS: 0 },
      { kp: 1, tiS: 600, tdS: 0, setpointWeight: 1.5 },
    ])
      assert.equal(tunedLoopSpec(spec, { ...tuning, lowerGains }), spec);
  });

  test('on a loop with one actuator, lowerGains are ignored', () => {
    const heaterOnly = heaterRelayLoop();
    const tuned = tunedLoopSpec(heaterOnly, tuning);
    assert.ok(tuned.controller.type === 'pid');
    assert.equal(tuned.controller.lowerPid, undefined);
    assert.equal(tuned.controller.pid.kp, 0.2);
  });
});

describe('unrecordedTuning on a loop with a heater and a cooler: the side not tuned keeps its gains in force', () => {
  const spec = splitRangeLoop({
    controller: { type: 'pid', pid: { kp: 0.1, tiS: 600, tdS: 0 }, lowerPid: { kp: 1, tiS: 900, tdS: 0 } },
  });
  const done = (side: 'raise' | 'lower') =>
    ({
      regulating: true,
      autotune: {
        phase: 'done',
        side,
        setpoint: 20,
        startedAtMs: 1_000,
        maxDurationMs: 60_000,
        result: {
          gains: { kp: 3, tiS: 300, tdS: 5, setpointWeight: 0.9 },
          identification: {
            model: { gain: -2, timeConstantS: 600, deadTimeS: 30, ambient: 22 },
            standardError: { gain: 0.1, timeConstantS: 10, deadTimeS: 2 },
            rmsResidual: 0.02,
          },
          durationMs: 3_600_000,
          cycles: 4,
          periodS: 400,
          peakToPeak: 0.6,
          closedLoopS: 30,
          modulation: {},
        },
      },
    }) as unknown as LoopMemory;
  const tuned = { kp: 3, tiS: 300, tdS: 5, setpointWeight: 0.9 };

  test("the lower side tuned, no tuning in force: the raise side keeps the config's gains", () => {
    const tuning = unrecordedTuning(done('lower'), { spec, tuning: undefined });
    assert.deepEqual(tuning?.gains, { kp: 0.1, tiS: 600, tdS: 0 });
    assert.deepEqual(tuning?.lowerGains, tuned);
  });

  test("the raise side tuned, no tuning in force: the lower side keeps the config's lower gains", () => {
    const tuning = unrecordedTuning(done('raise'), { spec, tuning: undefined });
    assert.deepEqual(tuning?.gains, tuned);
    assert.deepEqual(tuning?.lowerGains, { kp: 1, tiS: 900, tdS: 0 });
  });

  test("the raise side tuned over an active tuning: the lower side keeps the active tuning's", () => {
    const active = {
      version: 5,
      gains: { kp: 0.2, tiS: 700, tdS: 0 },
      lowerGains: { kp: 1.5, tiS: 1_000, tdS: 0, setpointWeight: 0.6 },
    };
    const tuning = unrecordedTuning(done('raise'), { spec, tuning: active });
    assert.deepEqual(tuning?.gains, tuned);
    assert.deepEqual(tuning?.lowerGains, active.lowerGains);
    // Put in force, it changes only the side tuned.
    const before = tunedLoopSpec(spec, active).controller;
    const after = tunedLoopSpec(spec, { version: 6, ...tuning! }).controller;
    assert.ok(before.type === 'pid' && after.type === 'pid');
    assert.deepEqual(after.lowerPid, before.lowerPid);
    assert.notDeepEqual(after.pid, before.pid);
  });

  test('a loop with one actuator: one gain set, as before', () => {
    const tuning = unrecordedTuning(done('raise'), { spec: heaterRelayLoop(), tuning: undefined });
    assert.deepEqual(tuning?.gains, tuned);
    assert.equal(tuning?.lowerGains, undefined);
  });
});

describe('a flagged model says so in the done event and the status', () => {
  const doneRun = (reliability?: {
    verdict: 'sound' | 'flagged';
    reliable: boolean;
    reasons: readonly string[];
  }) =>
    ({
      phase: 'done',
      side: 'raise',
      setpoint: 20,
      startedAtMs: 1_000,
      maxDurationMs: 60_000,
      samples: [],
      switches: [],
      cyclesNeeded: 3,
      result: {
        gains: { kp: 3, tiS: 300, tdS: 0 },
        identification: {
          model: { gain: 2, timeConstantS: 600, deadTimeS: 30, ambient: 10 },
          standardError: { gain: 0.9, timeConstantS: 200, deadTimeS: 2 },
          rmsResidual: 0.02,
        },
        ...(reliability ? { reliability } : {}),
        durationMs: 3_600_000,
        cycles: 4,
        periodS: 400,
        peakToPeak: 0.6,
        closedLoopS: 30,
        modulation: { band: 0.1, windowS: 300 },
      },
    }) as unknown as AutotuneMemory;
  const running = { ...doneRun(), phase: 'relay' } as AutotuneMemory;
  const flagged = { verdict: 'flagged' as const, reliable: false, reasons: ['K known to ±45 %'] };

  for (const [label, reliability, message, statusPart] of [
    [
      'sound',
      { verdict: 'sound' as const, reliable: true, reasons: [] },
      /^autotune done: K 2, .*tiS 300 s$/,
      { verdict: 'sound', reasons: [] },
    ],
    [
      'flagged',
      flagged,
      /; flagged: K known to ±45 %$/,
      { verdict: 'flagged', reasons: ['K known to ±45 %'] },
    ],
    ['from an older build (no verdict)', undefined, /tiS 300 s$/, undefined],
  ] as const) {
    test(`${label}: the event's message and the status's result.reliability`, () => {
      const after = doneRun(reliability);
      assert.match(autotuneTransition(running, after)?.message ?? '', message);
      assert.deepEqual(autotuneStatus(after, 2_000).result?.reliability, statusPart);
    });
  }
});
