import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ActuatorSpec, LoopSpec } from '../../src/core/loop-spec.js';
import { resumeLoopMemory } from '../../src/core/loop-state.js';
import { cancelLoopAutotune, type LoopMemory, startLoopAutotune } from '../../src/core/reconcile.js';
import { type AutotuneOptions, MAX_SAMPLES } from '../../src/core/tuning/autotune.js';
import type { Mode } from '../../src/core/types.js';
import { continuousLoop, desired, heaterRelayLoop, min, relay, s, splitRangeLoop, T0 } from './fixtures.js';
import { type LoopCycle, PlantLoop, type PlantLoopParams } from './tuning/plant-loop.js';

/** The benchmark room plant: K 20, τ 600 s, θ 60 s, ambient 10; a reading every 5 s. */
const ROOM: PlantLoopParams = {
  ambient: 10,
  timeConstantS: 600,
  deadTimeS: 60,
  gains: { heater: 20 },
  initial: 20,
};
const ROOM_BUDGET_MS = 6 * (600 + 60) * 1000;

/** A heater relay with 30 s minimum on and off times, regulating at 20 °C for an hour first. */
function heaterLoop(overrides: Partial<LoopSpec> = {}, plant: Partial<PlantLoopParams> = {}): PlantLoop {
  const spec = heaterRelayLoop({
    raise: relay('heater', { windowMs: s(120), minOnMs: s(30), minOffMs: s(30) }),
    ...overrides,
  });
  const loop = new PlantLoop(spec, desired('heat', 20), { ...ROOM, levels: { heater: 0.5 }, ...plant }, T0);
  loop.run(T0 + min(60));
  return loop;
}

function start(loop: PlantLoop, options: AutotuneOptions = {}): void {
  const started = startLoopAutotune(
    loop.spec,
    loop.desired,
    { reading: { value: loop.plant.valueAt(loop.nowMs), atMs: loop.nowMs }, actuators: loop.actuators },
    loop.memory,
    options,
    loop.nowMs,
  );
  assert.ok(started.ok, (started as { reason?: string }).reason);
  loop.memory = started.memory;
}

const running = (memory: LoopMemory) =>
  memory.autotune?.phase === 'noise' || memory.autotune?.phase === 'relay';
const ended = (c: LoopCycle) => !running(c.result.memory);

function assertModel(memory: LoopMemory, gain: number, timeConstantS: number, deadTimeS: number): void {
  assert.equal(memory.autotune?.phase, 'done', memory.autotune?.abortReason);
  const { model } = memory.autotune!.result!.identification;
  for (const [what, actual, expected] of [
    ['K', model.gain, gain],
    ['τ', model.timeConstantS, timeConstantS],
    ['θ', model.deadTimeS, deadTimeS],
  ] as const) {
    const error = Math.abs(actual - expected) / Math.abs(expected);
    assert.ok(error <= 0.2, `${what} ${actual} vs ${expected}`);
  }
}

/** Every actuator at its safe level (0 for these loops) in that cycle. */
function assertSafe(cycle: LoopCycle): void {
  for (const [id, level] of Object.entries(cycle.result.wanted)) assert.equal(level, 0, `${id} safe`);
}

function autotuningCondition(cycle: LoopCycle) {
  return cycle.result.status.conditions.find((c) => c.type === 'Autotuning');
}

describe('autotune through reconcile on the room plant', () => {
  test('a heater relay regulating at 20 °C: model within 20 %, ≤ 6 (τ + θ), minimum times held, then PI again', () => {
    const loop = heaterLoop();
    const startedMs = loop.nowMs;
    start(loop);
    const cycles = loop.run(startedMs + ROOM_BUDGET_MS, ended);
    const last = cycles[cycles.length - 1]!;
    assertModel(last.result.memory, 20, 600, 60);
    assert.ok(last.atMs - startedMs <= ROOM_BUDGET_MS, `${(last.atMs - startedMs) / 1000} s`);
    // Relay switches (what was commanded) never closer than the 30 s minimum times.
    const switches = cycles.flatMap((c) =>
      c.result.commands.filter((cmd) => cmd.actuatorId === 'heater').map(() => c.atMs),
    );
    for (let i = 1; i < switches.length; i++) assert.ok(switches[i]! - switches[i - 1]! >= s(30));
    assert.ok(switches.length >= 6, `${switches.length} switches`);
    // During the run the relay switched on the autotune's decision, the status showed progress.
    const mid = cycles[Math.floor(cycles.length / 2)]!;
    assert.equal(mid.result.status.autotune?.phase, 'relay');
    assert.equal(autotuningCondition(mid)?.status, 'True');
    assert.match(autotuningCondition(mid)!.message, /relay cycle \d of 3/);
    // Done: the result in the status, and the PI regulates from the next reading on.
    assert.equal(autotuningCondition(last)?.reason, 'Done');
    assert.ok((last.result.status.autotune?.result?.kp ?? 0) > 0);
    const after = loop.run(loop.nowMs + min(10));
    assert.ok(
      after.every(
        (c) => c.result.memory.regulating && !c.result.commands.some((x) => x.reason === 'safe-state'),
      ),
    );
    assert.ok(after.some((c) => c.result.commands.some((x) => /^output/.test(x.detail))));
  });

  test('a continuous actuator between 0.2 and 0.8: within 20 %', () => {
    const spec = continuousLoop();
    const loop = new PlantLoop(
      spec,
      desired('heat', 20),
      { ...ROOM, gains: { mat: 20 }, levels: { mat: 0.5 } },
      T0,
    );
    loop.run(T0 + min(60));
    start(loop, { highLevel: 0.8, lowLevel: 0.2 });
    const cycles = loop.run(loop.nowMs + ROOM_BUDGET_MS, ended);
    assertModel(cycles[cycles.length - 1]!.result.memory, 20, 600, 60);
    const levels = new Set(
      cycles.filter((c) => c.result.memory.autotune?.phase === 'relay').map((c) => c.result.wanted.mat),
    );
    assert.deepEqual([...levels].sort(), [0.2, 0.8]);
  });

  test('split range, mode cool: the compressor (lower side) is tuned, the heater stays off', () => {
    const spec = splitRangeLoop({ deadband: 0, changeoverMs: 0 });
    const params: PlantLoopParams = {
      ambient: 30,
      timeConstantS: 600,
      deadTimeS: 60,
      gains: { heater: 20, compressor: -20 },
      initial: 20,
      levels: { compressor: 0.5 },
    };
    const loop = new PlantLoop(spec, desired('cool', 20), params, T0);
    loop.run(T0 + min(60));
    start(loop);
    assert.equal(loop.memory.autotune?.side, 'lower');
    const cycles = loop.run(loop.nowMs + ROOM_BUDGET_MS, ended);
    assertModel(cycles[cycles.length - 1]!.result.memory, -20, 600, 60);
    assert.ok(cycles.every((c) => c.result.wanted.heater === 0));
  });
});

describe('autotune of a relay whose plant has not moved since the loop started regulating', () => {
  // The demo's fermenter after a restart: the chamber sits at its 30 °C ambient, far above the
  // 20 °C setpoint, and the loop has been cooling for one reading when the cooler's autotune
  // starts. Held off, the value never turns (it is already at rest): the run must take the
  // flat record as the plant at rest, not wait for a turn and abort as "setpoint unreachable".
  test('split range, heat_cool, the lower side from a plant at rest at its ambient: done, model within 20 %', () => {
    const spec = splitRangeLoop({ deadband: 0, changeoverMs: 0 });
    const params: PlantLoopParams = {
      ambient: 30,
      timeConstantS: 600,
      deadTimeS: 60,
      gains: { heater: 20, compressor: -20 },
      initial: 30,
    };
    const loop = new PlantLoop(spec, desired('heat_cool', 20), params, T0);
    loop.run(T0 + s(10));
    start(loop, { side: 'lower' });
    const cycles = loop.run(loop.nowMs + ROOM_BUDGET_MS, ended);
    assertModel(cycles[cycles.length - 1]!.result.memory, -20, 600, 60);
  });
});

describe('autotune through reconcile: a relay that was regulating with windows or the duty band', () => {
  // A relay's PID output is its mean level, not what the plant saw during the last dead time
  // (the window's on/off pattern): fitted as if the plant rested at it, these starts gave an
  // integrating model (K 4·10⁵–10⁶, aborted through the runtime as "makes no sense") before the
  // fit began where the value had turned under the held low level (TURN_BANDS).
  // Room plant, σ 0.03 as the runtime saw it, a cautious PI (kp 0.083, ti 600 s, as before a
  // first tuning) regulating from 15 °C, the run started at minute `startMin`.
  const CASES: [string, Partial<ActuatorSpec>, number, number][] = [
    // modulation, relay spec, seed, start minute
    ['60 s windows', { timeProportioning: { windowMs: s(60), minOnMs: 0, minOffMs: 0 } }, 4, 67],
    ['120 s windows', { timeProportioning: { windowMs: s(120), minOnMs: 0, minOffMs: 0 } }, 1, 60],
    ['300 s windows', { timeProportioning: { windowMs: s(300), minOnMs: 0, minOffMs: 0 } }, 2, 60],
    [
      '300 s windows, another phase',
      { timeProportioning: { windowMs: s(300), minOnMs: 0, minOffMs: 0 } },
      3,
      60,
    ],
    ['600 s windows', { timeProportioning: { windowMs: s(600), minOnMs: 0, minOffMs: 0 } }, 4, 67],
    ['the duty band', { band: { halfBand: 0.1 } }, 1, 60],
    ['the duty band, another phase', { band: { halfBand: 0.1 } }, 3, 73],
  ];
  for (const [what, heater, seed, startMin] of CASES) {
    test(`${what} (seed ${seed}, started at minute ${startMin}): K, τ, θ within 20 %, ≤ 6 (τ + θ)`, () => {
      const spec = heaterRelayLoop({
        raise: { ...relay('heater'), ...heater },
        controller: { type: 'pid', pid: { kp: 0.083, tiS: 600, tdS: 0 } },
      });
      const loop = new PlantLoop(spec, desired('heat', 20), { ...ROOM, initial: 15, noise: 0.03, seed }, T0);
      loop.run(T0 + min(startMin));
      const startedMs = loop.nowMs;
      start(loop);
      const cycles = loop.run(startedMs + ROOM_BUDGET_MS, ended);
      const last = cycles[cycles.length - 1]!;
      assertModel(last.result.memory, 20, 600, 60);
      assert.ok(last.atMs - startedMs <= ROOM_BUDGET_MS, `${(last.atMs - startedMs) / 1000} s`);
    });
  }
});

describe('autotune through reconcile: every abort leaves every actuator safe in that cycle', () => {
  /** Runs into the relay phase, applies `cause`, and returns the cycle the run ended in. */
  function abortBy(
    cause: (loop: PlantLoop) => void,
    overrides: Partial<LoopSpec> = {},
    plant: Partial<PlantLoopParams> = {},
    options: AutotuneOptions = {},
  ): { loop: PlantLoop; ended: LoopCycle } {
    const loop = heaterLoop({}, plant);
    // The limits under test apply from the start of the run (the regulation before may ripple
    // past them).
    loop.spec = { ...loop.spec, ...overrides };
    start(loop, options);
    loop.run(loop.nowMs + min(5), (c) => c.result.memory.autotune?.phase === 'relay' || ended(c));
    cause(loop);
    const cycles = loop.run(loop.nowMs + min(300), ended);
    return { loop, ended: cycles[cycles.length - 1]! };
  }

  const ABORTS: [string, () => ReturnType<typeof abortBy>, RegExp, boolean][] = [
    // what, run, reason, the loop regulates again from the next cycle
    [
      'sensor lost',
      () =>
        abortBy((l) => {
          l.sensor = () => undefined;
        }),
      /sensor Missing/,
      false,
    ],
    [
      'sensor stale',
      () =>
        abortBy((l) => {
          const t = l.nowMs;
          l.sensor = (r) => ({ ...r, atMs: Math.min(r.atMs, t) });
        }),
      /sensor Stale/,
      false,
    ],
    [
      'mode change (heat → off)',
      () =>
        abortBy((l) => {
          l.desired = desired('off', 20, 2);
        }),
      /mode off/,
      false,
    ],
    [
      'mode change (heat → heat_cool)',
      () =>
        abortBy((l) => {
          l.desired = desired('heat_cool' as Mode, 20, 2);
        }),
      /mode changed from heat to heat_cool/,
      true,
    ],
    [
      'setpoint change',
      () =>
        abortBy((l) => {
          l.desired = desired('heat', 21, 2);
        }),
      /setpoint changed from 20 to 21/,
      true,
    ],
    ['time limit', () => abortBy(() => {}, {}, {}, { maxDurationMs: min(15) }), /time limit of 0.3 h/, true],
    [
      'setpoint unreachable (the heater gives 5 °C at most)',
      () => abortBy(() => {}, {}, { gains: { heater: 5 }, initial: 14, levels: { heater: 0.8 } }),
      /setpoint unreachable: with full output/,
      true,
    ],
    [
      'a cut-off (latched fault) during the relay',
      () => abortBy(() => {}, { cutoff: { max: 20.05 } }),
      /latched fault AboveCutoff/,
      false,
    ],
    [
      'the effect watch: the heater fails during the run (full output, no rise)',
      () =>
        abortBy(
          (l) => {
            l.plant.setInputGain('heater', 0);
          },
          { effectWatch: { periodMs: min(10), minChange: 0.5 } },
        ),
      /latched fault HeatingIneffective/,
      false,
    ],
    [
      'a maximum on-time (latched fault)',
      () =>
        abortBy(() => {}, {
          raise: { ...relay('heater', { minOnMs: s(30), minOffMs: s(30) }), maxOnMs: s(90) },
        }),
      /latched fault MaxOnTime/,
      false,
    ],
  ];
  for (const [what, run, reason, regulatesAfter] of ABORTS) {
    test(what, () => {
      const { loop, ended: cycle } = run();
      const autotune = cycle.result.memory.autotune!;
      assert.equal(autotune.phase, 'aborted');
      assert.match(autotune.abortReason!, reason);
      assertSafe(cycle);
      assert.equal(cycle.result.status.autotune?.abortReason, autotune.abortReason);
      const condition = autotuningCondition(cycle)!;
      assert.equal(condition.status, 'False');
      assert.equal(condition.reason, 'Aborted');
      assert.match(condition.message, reason);
      const next = loop.cycle();
      assert.equal(
        next.result.memory.regulating,
        regulatesAfter,
        'regulates again unless the cause holds it safe',
      );
      assert.equal(
        next.result.status.autotune?.abortReason,
        autotune.abortReason,
        'the reason stays visible',
      );
    });
  }

  test('a restart mid-run: the first cycle ends the run ("interrupted by a restart") safe, then the loop regulates', () => {
    const loop = heaterLoop();
    start(loop);
    // Mid-run with the heater on: the restart must not leave it on for another cycle.
    loop.run(
      loop.nowMs + min(30),
      (c) => c.result.memory.autotune?.phase === 'relay' && c.result.wanted.heater === 1,
    );
    assert.ok(running(loop.memory));
    const stored = JSON.parse(JSON.stringify(loop.memory)) as LoopMemory;
    loop.memory = resumeLoopMemory(stored, ['heater'], loop.actuators, loop.nowMs);
    const first = loop.cycle();
    assert.equal(first.result.memory.autotune?.phase, 'aborted');
    assert.equal(first.result.memory.autotune?.abortReason, 'interrupted by a restart');
    assertSafe(first);
    assert.match(autotuningCondition(first)!.message, /interrupted by a restart/);
    const next = loop.run(loop.nowMs + min(1), (c) => c.result.memory.regulating).at(-1)!;
    assert.ok(next.result.memory.regulating);
  });

  test('cancel: like every abort, safe in that cycle with the reason, then the PID from the real level', () => {
    const loop = heaterLoop();
    const integralBefore = loop.memory.pid.integral;
    start(loop);
    // Mid-run, with the relay on (the PID's memory of before the run still says duty ≈ 0.5).
    loop.run(
      loop.nowMs + min(30),
      (c) => c.result.memory.autotune?.phase === 'relay' && c.result.wanted.heater === 1,
    );
    assert.ok(running(loop.memory));
    loop.memory = cancelLoopAutotune(loop.memory, 'cancelled by a person', loop.nowMs);
    const cancelled = loop.cycle();
    assert.equal(cancelled.result.memory.autotune?.phase, 'aborted');
    assert.equal(cancelled.result.memory.autotune?.abortReason, 'cancelled by a person');
    assertSafe(cancelled);
    assert.equal(cancelled.result.memory.regulating, false);
    assert.equal(cancelled.result.status.autotune?.abortReason, 'cancelled by a person');
    assert.equal(autotuningCondition(cancelled)?.reason, 'Aborted');
    assert.match(autotuningCondition(cancelled)!.message, /cancelled by a person/);
    // The next reading: the PID regulates again, its integrator re-based on the real (safe) level
    // instead of its memory of before the run.
    const next = loop.run(loop.nowMs + min(1), (c) => c.result.memory.regulating).at(-1)!;
    assert.ok(next.result.memory.regulating);
    assert.ok(integralBefore > 0.3, `integral before the run ${integralBefore}`);
    assert.ok(
      Math.abs(next.result.memory.pid.integral) < 0.05,
      `integral ${next.result.memory.pid.integral}`,
    );
  });

  test("during a run the action is the tuned side's, in the relay's off half too", () => {
    const loop = heaterLoop();
    start(loop);
    const cycles = loop.run(loop.nowMs + ROOM_BUDGET_MS, ended);
    const during = cycles.filter((c) => running(c.result.memory));
    assert.ok(
      during.some((c) => c.result.wanted.heater === 0 && c.result.status.autotune?.phase === 'relay'),
    );
    for (const c of during) assert.equal(c.result.status.action, 'heating');
    // Once ended, the action follows the output again.
    assert.ok(cycles.at(-1)!.result.memory.autotune?.phase === 'done');
  });
});

describe('autotune through reconcile: starting, safety and memory', () => {
  test('refused on a loop held safe or without a PID', () => {
    const loop = heaterLoop({ cutoff: { max: 19 } });
    const refused = startLoopAutotune(
      loop.spec,
      loop.desired,
      { actuators: loop.actuators, reading: { value: 20, atMs: loop.nowMs } },
      loop.memory,
      {},
      loop.nowMs,
    );
    assert.equal(refused.ok, false);
    assert.match((refused as { reason: string }).reason, /latched fault/);
    const fresh = heaterLoop();
    const stale = startLoopAutotune(
      fresh.spec,
      fresh.desired,
      { actuators: {}, reading: { value: 20, atMs: fresh.nowMs - min(10) } },
      fresh.memory,
      {},
      fresh.nowMs,
    );
    assert.match((stale as { reason: string }).reason, /sensor cannot be used/);
  });

  const caps: { quantity: LoopSpec['quantity']; plausible: [number, number]; band: number; depth: number }[] =
    [
      { quantity: 'temperature', plausible: [-55, 125], band: 1, depth: 2 },
      { quantity: 'humidity', plausible: [0, 100], band: 3, depth: 6 },
      { quantity: 'generic', plausible: [0, 2000], band: 40, depth: 100 },
    ];
  for (const { quantity, plausible, band, depth } of caps) {
    test(`a ${quantity} loop caps the band at ±${band} and the first step at ${depth} (its unit)`, () => {
      const spec = continuousLoop({ quantity, plausibleMin: plausible[0], plausibleMax: plausible[1] });
      const started = startLoopAutotune(
        spec,
        desired(quantity === 'humidity' ? 'humidify' : 'heat', 50),
        { actuators: { mat: 0.5 }, reading: { value: 50, atMs: T0 } },
        {
          regulating: false,
          pid: { integral: 0, derivativePerS: 0, lastFeedforward: 0, lastOutput: 0 },
          hysteresisOn: { raise: false, lower: false },
          relays: {},
          commands: {},
          lastActiveMs: {},
          output: 0.5,
          conditions: [],
        },
        {},
        T0,
      );
      assert.ok(started.ok, started.ok ? '' : started.reason);
      assert.equal(started.memory.autotune?.maxHysteresis, band);
      assert.equal(started.memory.autotune?.maxStepDepth, depth);
    });
  }

  test('a start cap holds a switch-on back: the record has the switch when it really happened', () => {
    const loop = heaterLoop({
      raise: { ...relay('heater', { minOnMs: s(30), minOffMs: s(30) }), maxStartsPerHour: 4 },
    });
    start(loop);
    const cycles = loop.run(loop.nowMs + ROOM_BUDGET_MS, ended);
    const memory = cycles[cycles.length - 1]!.result.memory;
    // Four starts an hour is slower than the relay wants: the run ends, done or by its limits,
    // and the heater never started more than 4 times in any hour.
    const starts = cycles
      .filter((c) => c.result.commands.some((x) => x.actuatorId === 'heater' && x.level === 1))
      .map((c) => c.atMs);
    for (let i = 4; i < starts.length; i++) assert.ok(starts[i]! - starts[i - 4]! >= min(60));
    assert.ok(memory.autotune?.phase === 'done' || memory.autotune?.phase === 'aborted' || running(memory));
  });

  test('memory is bounded and JSON round-trips at every cycle', () => {
    const loop = heaterLoop({}, { readingEveryS: 1 });
    start(loop);
    const cycles = loop.run(loop.nowMs + ROOM_BUDGET_MS, ended);
    for (const c of cycles.filter((_, i) => i % 200 === 0)) {
      assert.ok((c.result.memory.autotune?.samples.length ?? 0) <= MAX_SAMPLES);
      assert.deepEqual(JSON.parse(JSON.stringify(c.result.memory)), c.result.memory);
    }
    assertModel(cycles[cycles.length - 1]!.result.memory, 20, 600, 60);
  });
});
