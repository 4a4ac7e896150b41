import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type AutotuneMemory,
  type AutotuneStartInput,
  autotuneProgress,
  DEFAULT_MAX_DURATION_MS,
  MAX_SAMPLES,
  MAX_STEP_DEPTH,
  startAutotune,
  stepAutotune,
} from '../../../src/core/tuning/autotune.js';
import { type AutotuneDrive, driveAutotune, T0 } from './autotune-driver.js';
import { TUNING_PLANTS } from './plants.js';

type Plant = (typeof TUNING_PLANTS)[number];

function assertWithin(what: string, actual: number, expected: number, fraction: number): void {
  const error = Math.abs(actual - expected) / Math.abs(expected);
  assert.ok(error <= fraction, `${what}: ${actual} vs true ${expected} (${(error * 100).toFixed(1)} % off)`);
}

/** Runs the autotune to its end and checks the autotune's targets: model within 20 %, ≤ 6 (τ + θ). */
function assertTargets(plant: Plant, drive: AutotuneDrive): AutotuneMemory {
  const memory = driveAutotune(plant, drive);
  assert.equal(memory.phase, 'done', memory.abortReason);
  const result = memory.result!;
  const { model, standardError } = result.identification;
  const sign = drive.cooler ? -1 : 1;
  assertWithin('K', model.gain, sign * plant.gain, 0.2);
  assertWithin('τ', model.timeConstantS, plant.trueTimeConstantS, 0.2);
  assertWithin('θ', model.deadTimeS, plant.trueDeadTimeS, 0.2);
  const budgetMs = 6 * (plant.trueTimeConstantS + plant.trueDeadTimeS) * 1000;
  assert.ok(result.durationMs <= budgetMs, `took ${result.durationMs / 1000} s, budget ${budgetMs / 1000} s`);
  for (const [what, se] of Object.entries(standardError)) {
    assert.ok(Number.isFinite(se) && se >= 0, `${what} standard error ${se}`);
  }
  assert.ok(result.gains.kp > 0 && result.gains.tiS > 0, JSON.stringify(result.gains));
  return memory;
}

describe('autotune on the five plants (σ 0.05, quantum 0.0625, a reading every 5 s)', () => {
  for (const plant of TUNING_PLANTS) {
    for (const seed of [1, 2, 3]) {
      test(`${plant.id}, started at rest at the setpoint, seed ${seed}: within 20 %, ≤ 6 (τ + θ)`, () => {
        assertTargets(plant, { seed });
      });
    }
    test(`${plant.id}, started from ambient: within 20 %, ≤ 6 (τ + θ)`, () => {
      assertTargets(plant, { seed: 4, start: 'ambient' });
    });
  }

  test('the kettle still ends within 6 (τ + θ) with a reading every 15 s', () => {
    assertTargets(TUNING_PLANTS[4]!, { seed: 2, sampleS: 15 });
  });
});

describe('autotune: actuators and sides', () => {
  test('a continuous actuator switched between 0.2 and 0.8: only those levels after the noise phase', () => {
    const levels = new Set<number>();
    const memory = assertTargets(TUNING_PLANTS[0]!, {
      kind: 'continuous',
      options: { highLevel: 0.8, lowLevel: 0.2 },
      observe: (m, level) => {
        if (m.phase === 'relay') levels.add(level);
      },
    });
    assert.deepEqual([...levels].sort(), [0.2, 0.8]);
    assert.equal(memory.result!.cycles, 3);
  });

  for (const plant of [TUNING_PLANTS[0]!, TUNING_PLANTS[4]!]) {
    test(`split range, lower side (a cooler on the ${plant.id}): negative gain within 20 %, positive kp`, () => {
      const memory = assertTargets(plant, { cooler: true });
      assert.equal(memory.side, 'lower');
    });
  }

  const base: AutotuneStartInput = {
    mode: 'heat',
    setpoint: 20,
    controller: 'pid',
    actuators: { raise: 'relay' },
    currentLevel: 0.5,
  };
  const REFUSALS: [string, Partial<AutotuneStartInput>, object, RegExp][] = [
    ['a hysteresis controller', { controller: 'hysteresis' }, {}, /needs a PID controller/],
    ['mode off', { mode: 'off' }, {}, /off/],
    [
      'heat_cool without a side',
      { mode: 'heat_cool', actuators: { raise: 'relay', lower: 'relay' } },
      {},
      /say which/,
    ],
    ['the lower side without a cooler', { mode: 'heat_cool' }, { side: 'lower' }, /no actuator to lower/],
    [
      'the lower side in mode heat',
      { actuators: { raise: 'relay', lower: 'relay' } },
      { side: 'lower' },
      /does not let/,
    ],
    [
      'levels the wrong way round',
      { actuators: { raise: 'continuous' } },
      { highLevel: 0.2, lowLevel: 0.8 },
      /levels/,
    ],
  ];
  for (const [what, input, options, reason] of REFUSALS) {
    test(`refused: ${what}`, () => {
      const started = startAutotune({ ...base, ...input }, options, T0);
      assert.equal(started.ok, false);
      assert.match((started as { reason: string }).reason, reason);
    });
  }

  test('heat_cool with a side given starts; the default time limit is 48 h', () => {
    const started = startAutotune(
      { ...base, mode: 'heat_cool', actuators: { raise: 'relay', lower: 'relay' } },
      { side: 'lower' },
      T0,
    );
    assert.ok(started.ok);
    assert.equal(started.memory.side, 'lower');
    assert.equal(started.memory.maxDurationMs, DEFAULT_MAX_DURATION_MS);
  });
});

describe('autotune: aborts, each with a reason a person can read', () => {
  /** A run on the room plant stopped part way by `drive`, which may change the step's input. */
  function started(): AutotuneMemory {
    const s = startAutotune(
      { mode: 'heat', setpoint: 20, controller: 'pid', actuators: { raise: 'relay' }, currentLevel: 0.5 },
      { maxDurationMs: 3_600_000 },
      T0,
    );
    assert.ok(s.ok);
    let memory = s.memory;
    for (let i = 0; i < 20; i++) {
      const atMs = T0 + i * 5000;
      memory = stepAutotune(
        memory,
        { reading: { value: 20 - i * 0.05, atMs }, mode: 'heat', setpoint: 20 },
        atMs,
      ).memory;
    }
    assert.equal(memory.phase, 'relay');
    return memory;
  }
  const at = T0 + 100_000;
  const fresh = { reading: { value: 19, atMs: at }, mode: 'heat' as const, setpoint: 20 };
  const ABORTS: [string, Parameters<typeof stepAutotune>[1], number, RegExp][] = [
    ['sensor lost', { ...fresh, reading: undefined }, at, /^sensor: no reading/],
    [
      'sensor stale (as the loop judged it)',
      { ...fresh, sensorProblem: 'last reading is 400 s old' },
      at,
      /400 s old/,
    ],
    ['a reading that is not a number', { ...fresh, reading: { value: Number.NaN, atMs: at } }, at, /NaN/],
    ['mode change', { ...fresh, mode: 'off' }, at, /mode changed from heat to off/],
    ['setpoint change', { ...fresh, setpoint: 21 }, at, /setpoint changed from 20 to 21/],
    ['a latched fault', { ...fresh, interrupted: 'latched fault: cut-off 35 reached' }, at, /cut-off/],
    [
      'time limit',
      { ...fresh, reading: { value: 19, atMs: T0 + 3_700_000 } },
      T0 + 3_700_000,
      /time limit of 1 h/,
    ],
  ];
  for (const [what, input, nowMs, reason] of ABORTS) {
    test(what, () => {
      const step = stepAutotune(started(), input, nowMs);
      assert.equal(step.memory.phase, 'aborted');
      assert.equal(step.level, undefined, 'no level once aborted: the loop decides');
      assert.match(step.memory.abortReason!, reason);
      assert.deepEqual(step.memory.samples, [], 'the record is dropped');
      assert.equal(autotuneProgress(step.memory, nowMs + 1000).remainingMs, 0);
    });
  }

  test('setpoint unreachable: a heater whose full output ends 5 °C short', () => {
    const weak = { ...TUNING_PLANTS[0]!, gain: 5 };
    const memory = driveAutotune(weak, { start: 'ambient' });
    assert.equal(memory.phase, 'aborted');
    assert.match(
      memory.abortReason!,
      /setpoint unreachable: with full output the value did not rise above 20\.\d+/,
    );
    // Well before the time limit: within an hour and a half of the plant's 10 min time constant.
    assert.ok(
      memory.endedAtMs! - memory.startedAtMs < 5_400_000,
      `${memory.endedAtMs! - memory.startedAtMs} ms`,
    );
  });

  test('setpoint unreachable the other way: ambient above the setpoint, the heater off', () => {
    const warm = { ...TUNING_PLANTS[0]!, ambient: 25 };
    const memory = driveAutotune(warm, { start: 'ambient' });
    assert.equal(memory.phase, 'aborted');
    assert.match(memory.abortReason!, /with the output at its low level the value did not fall below/);
  });

  test('an ended run ignores further steps', () => {
    const aborted = stepAutotune(started(), { ...fresh, setpoint: 21 }, at).memory;
    assert.deepEqual(stepAutotune(aborted, fresh, at + 5000), { memory: aborted });
  });
});

describe('autotune: memory and progress', () => {
  test('the record stays within MAX_SAMPLES with a reading a second, JSON round trip at every 500th', () => {
    let largest = 0;
    let steps = 0;
    const memory = assertTargets(TUNING_PLANTS[2]!, {
      sampleS: 1,
      start: 'ambient',
      observe: (m) => {
        largest = Math.max(largest, m.samples.length);
        if (steps++ % 500 === 0) assert.deepEqual(JSON.parse(JSON.stringify(m)), m);
      },
    });
    assert.ok(steps > 4 * MAX_SAMPLES, `${steps} readings`);
    assert.ok(largest <= MAX_SAMPLES, `${largest} samples kept`);
    assert.deepEqual(JSON.parse(JSON.stringify(memory)), memory);
  });

  test('progress: the time limit before a cycle is done, then an estimate from the period', () => {
    const seen: ReturnType<typeof autotuneProgress>[] = [];
    driveAutotune(TUNING_PLANTS[0]!, { observe: (m, _level, atMs) => seen.push(autotuneProgress(m, atMs)) });
    const first = seen[0]!;
    assert.equal(first.phase, 'noise');
    assert.equal(first.remainingIsLimit, true);
    assert.equal(first.cyclesNeeded, 3);
    const estimated = seen.find((p) => !p.remainingIsLimit && p.phase === 'relay');
    assert.ok(estimated, 'an estimate once a cycle is done');
    assert.ok(estimated.cycles >= 1 && estimated.remainingMs < 3_600_000, JSON.stringify(estimated));
    assert.ok(estimated.hysteresis! >= 3 * estimated.noiseSigma! - 1e-12);
    const last = seen[seen.length - 1]!;
    assert.equal(last.phase, 'done');
    assert.equal(last.cycles, 3);
  });
});

describe('a noisy sensor never makes a deep or wide swing', () => {
  const room = TUNING_PLANTS[0]!;
  test('given σ 0.5 (a band of ±1.5 or more would be needed), then the run ends after the noise phase, saying why', () => {
    const steps: number[] = [];
    const memory = driveAutotune(room, {
      noise: 0.5,
      quantization: 0,
      observe: (_m, level) => steps.push(level),
    });
    assert.equal(memory.phase, 'aborted');
    assert.match(
      memory.abortReason ?? '',
      /too noisy for an autotune: σ .* needs a relay band of ±\d+\.\d+, at most ±1/,
    );
    assert.ok(
      steps.every((level) => level === 0),
      'the heater never switched on',
    );
  });

  test(`given σ 0.15 (a band of ±0.45 or more), then the first step waits at most ${MAX_STEP_DEPTH} below the setpoint, not 10 bands`, () => {
    let depth: number | undefined;
    driveAutotune(room, {
      noise: 0.15,
      quantization: 0,
      observe: (m) => {
        depth ??= m.phase === 'relay' ? m.stepDepth : undefined;
      },
    });
    assert.equal(depth, MAX_STEP_DEPTH);
  });
});

describe('a regulating start far from the setpoint holds the actuator low only until the value turns', () => {
  // A fridge in cool mode at 4 °C, still at 10 °C with its compressor at full (a warm load):
  // the run holds the compressor off to see the plant turn, then must start it again soon, not
  // once the fridge is a further step depth warmer (the turn is TURN_BANDS bands, ≤ 3 °C).
  test('given a fridge at 10 °C (setpoint 4), then the compressor is back on within 3 bands of the start', () => {
    const setpoint = 4;
    const startC = 10;
    const started = startAutotune(
      {
        mode: 'cool',
        setpoint,
        controller: 'pid',
        actuators: { lower: 'relay' },
        currentLevel: 1,
        atRest: false,
      },
      {},
      T0,
    );
    assert.ok(started.ok);
    let memory = started.memory;
    let trueC = startC;
    let peakC = startC;
    const applied: number[] = [];
    let level = 1;
    let seed = 7;
    const noise = () => {
      seed = (seed * 16_807) % 2_147_483_647;
      return (seed / 2_147_483_647 - 0.5) * 0.3;
    };
    for (let tS = 0; tS < 4 * 3600; tS += 10) {
      applied.push(level);
      const delayed = applied.length > 6 ? applied[applied.length - 7]! : 1; // θ 60 s
      trueC += (10 / 1800) * (20 - 20 * delayed - trueC); // ambient 20 °C, K −20 at full compressor
      const atMs = T0 + tS * 1000;
      const step = stepAutotune(
        memory,
        { reading: { value: trueC + noise(), atMs }, mode: 'cool', setpoint },
        atMs,
      );
      memory = step.memory;
      level = step.level ?? 0;
      if (memory.phase === 'relay' && level === 1) break;
      peakC = Math.max(peakC, trueC);
      assert.ok(memory.phase === 'noise' || memory.phase === 'relay', `ended: ${memory.abortReason}`);
    }
    assert.equal(level, 1, 'the compressor was switched on again');
    const band = memory.hysteresis!;
    assert.ok(
      peakC - startC <= 3 * band + 0.3,
      `warmed ${(peakC - startC).toFixed(2)} °C with a band of ${band.toFixed(2)}`,
    );
  });
});
