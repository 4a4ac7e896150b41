import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import { resumeLoopMemory } from '../../src/core/loop-state.js';
import { cancelLoopAutotune, type LoopMemory, startLoopAutotune } from '../../src/core/reconcile.js';
import { type AutotuneOptions, MAX_SAMPLES } from '../../src/core/tuning/autotune.js';
import type { Mode } from '../../src/core/types.js';
import { continuousLoop, desired, heaterRelayLoop, min, relay, s, splitRangeLoop, T0 } from './fixtures.js';
import { type LoopCycle, PlantLoop, type PlantLoopParams } from './tuning/plant-loop.js';

/** The room plant of issue 12: K 20, τ 600 s, θ 60 s, ambient 10; a reading every 5 s. */
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

  test('a restart mid-run: resumed memory has the run aborted ("restarted"), the loop regulates', () => {
    const loop = heaterLoop();
    start(loop);
    loop.run(loop.nowMs + min(10));
    assert.ok(running(loop.memory));
    const stored = JSON.parse(JSON.stringify(loop.memory)) as LoopMemory;
    loop.memory = resumeLoopMemory(stored, ['heater'], loop.actuators, loop.nowMs);
    assert.equal(loop.memory.autotune?.phase, 'aborted');
    assert.equal(loop.memory.autotune?.abortReason, 'restarted');
    const next = loop.cycle();
    assert.ok(next.result.memory.regulating);
    assert.match(autotuningCondition(next)!.message, /restarted/);
  });

  test('cancel: the run ends, the loop regulates normally', () => {
    const loop = heaterLoop();
    start(loop);
    loop.run(loop.nowMs + min(5));
    loop.memory = cancelLoopAutotune(loop.memory, 'cancelled by a person', loop.nowMs);
    const next = loop.cycle();
    assert.equal(next.result.memory.autotune?.abortReason, 'cancelled by a person');
    assert.ok(next.result.memory.regulating);
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
