/**
 * LoopReconciler and the autotune: a stored request is acted on once, a finished
 * run's result is stored once, the tuning in force gives the PID its gains, and the status
 * shows which tuning is in force. On a simulated room (K 20, τ 600 s, θ 60 s) with sensor noise
 * and a DS18B20's 1/16 °C steps.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import type { LoopMemory } from '../../src/core/loop-state.js';
import type { AutotuneDefaults } from '../../src/core/tuning/loop-tuning.js';
import type { Reading } from '../../src/core/types.js';
import { FopdtPlant } from '../../src/drivers/sim/plant.js';
import { Random } from '../../src/drivers/sim/random.js';
import type { ActuatorDriver } from '../../src/drivers/types.js';
import {
  type CompletedCycle,
  type CycleDesired,
  LoopReconciler,
  type PublishedLoopStatus,
} from '../../src/runtime/loop-reconciler.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import type { NewTuning } from '../../src/store/desired-store.js';
import { continuousLoop, heaterRelayLoop, hysteresisHeaterLoop, relay, s, T0 } from '../core/fixtures.js';

const READING_EVERY_MS = s(5);

/** An actuator that drives the plant's input of the same name. */
class PlantActuator implements ActuatorDriver {
  readonly simulated = true;
  level = 0;
  constructor(
    readonly id: string,
    readonly kind: 'relay' | 'continuous',
    private readonly plant: FopdtPlant,
    private readonly clock: ManualClock,
  ) {}
  async observe() {
    return this.level;
  }
  async write(level: number) {
    this.level = level;
    this.plant.setInput(this.id, level, this.clock.nowMs());
  }
}

interface Harness {
  reconciler: LoopReconciler;
  clock: ManualClock;
  desired: CycleDesired;
  cycles: CompletedCycle[];
  recorded: Array<{ tuning: NewTuning; apply: boolean; version: number }>;
  actuator: PlantActuator;
  /** Makes the next `n` recordTuning calls throw. */
  failRecords(n: number): void;
  /** Runs cycles every 5 s for `ms`. */
  runFor(ms: number): Promise<void>;
  /** Runs cycles until `done` says so (at most `maxMs`). */
  runUntil(done: (cycle: CompletedCycle) => boolean, maxMs: number): Promise<void>;
  /** Stores a request as the command path does (next generation). */
  request(action: 'start' | 'cancel', source?: string): void;
  last(): CompletedCycle;
  status(): PublishedLoopStatus;
  /** The same loop after a restart: a new reconciler on the last memory and the same plant. */
  restart(): Harness;
  /** The same after a restart whose stored memory is `memory` (one from before the last cycles). */
  restartFrom(memory: LoopMemory): Harness;
}

interface HarnessOptions {
  spec?: LoopSpec;
  autotune?: AutotuneDefaults;
  mode?: CycleDesired['mode'];
  memory?: LoopMemory;
  /** A sensor without noise nor quantisation. */
  noiseless?: boolean;
}

/** The room at 20 °C at rest with the heater half on, regulated by the loop. */
function room(opts: HarnessOptions = {}): Harness {
  const clock = new ManualClock(T0);
  const plant = new FopdtPlant({ ambient: 10, timeConstantS: 600, deadTimeS: 60, initial: 20 }, T0);
  const spec = opts.spec ?? heaterRelayLoop({ raise: relay('heater', { windowMs: s(60) }) });
  const kind = spec.raise?.kind ?? 'relay';
  plant.addInput('heater', 20, 0.5);
  const actuator = new PlantActuator('heater', kind, plant, clock);
  actuator.level = kind === 'continuous' ? 0.5 : 0;
  const desired: CycleDesired = { generation: 1, setpoint: 20, mode: opts.mode ?? 'heat' };
  return build({ clock, plant, spec, actuator, desired, random: new Random(7), ...opts });
}

function build(parts: {
  clock: ManualClock;
  plant: FopdtPlant;
  spec: LoopSpec;
  actuator: PlantActuator;
  desired: CycleDesired;
  random: Random;
  autotune?: AutotuneDefaults;
  memory?: LoopMemory;
  recorded?: Harness['recorded'];
  noiseless?: boolean;
}): Harness {
  const { clock, plant, spec, actuator, desired, random } = parts;
  const cycles: CompletedCycle[] = [];
  const recorded = parts.recorded ?? [];
  let failures = 0;
  const sensor = (): Reading => {
    const nowMs = clock.nowMs();
    if (parts.noiseless) return { value: plant.valueAt(nowMs), atMs: nowMs };
    const noisy = plant.valueAt(nowMs) + 0.03 * random.gaussian();
    return { value: Math.round(noisy / 0.0625) * 0.0625, atMs: nowMs };
  };
  const reconciler = new LoopReconciler({
    spec,
    desired: () => desired,
    latestReading: sensor,
    actuators: new Map([['heater', actuator]]),
    clock,
    logger: pino({ level: 'silent' }),
    onCycle: (cycle) => cycles.push(cycle),
    autotuneDefaults: () => parts.autotune,
    recordTuning: (tuning, apply) => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('database is locked');
      }
      const version = (desired.lastTuningVersion ?? 0) + 1;
      recorded.push({ tuning, apply, version });
      desired.lastTuningVersion = version;
      if (apply) {
        desired.tuning = { version, gains: tuning.gains, ...(tuning.model ? { model: tuning.model } : {}) };
        desired.generation += 1;
      }
      return { version };
    },
    ...(parts.memory ? { memory: parts.memory } : {}),
  });
  const harness: Harness = {
    reconciler,
    clock,
    desired,
    cycles,
    recorded,
    actuator,
    failRecords: (n) => {
      failures = n;
    },
    async runFor(ms) {
      const end = clock.nowMs() + ms;
      while (clock.nowMs() < end) {
        await clock.advance(READING_EVERY_MS);
        await reconciler.run();
      }
    },
    async runUntil(done, maxMs) {
      const end = clock.nowMs() + maxMs;
      while (clock.nowMs() < end) {
        await clock.advance(READING_EVERY_MS);
        await reconciler.run();
        if (done(cycles.at(-1)!)) return;
      }
      assert.fail(`not done within ${maxMs / 60_000} min: ${JSON.stringify(cycles.at(-1)?.status.autotune)}`);
    },
    request(action, source) {
      desired.generation += 1;
      desired.autotuneRequest = {
        action,
        atMs: clock.nowMs(),
        generation: desired.generation,
        options: {},
        ...(source ? { source } : {}),
      };
    },
    last: () => cycles.at(-1)!,
    status: () => reconciler.status!,
    restart: () =>
      build({ ...parts, memory: structuredClone(cycles.at(-1)!.memory), recorded, desired: parts.desired }),
    restartFrom: (memory) =>
      build({ ...parts, memory: structuredClone(memory), recorded, desired: parts.desired }),
  };
  return harness;
}

const phase = (cycle: CompletedCycle) => cycle.memory.autotune?.phase;
const ended = (cycle: CompletedCycle) => phase(cycle) === 'done' || phase(cycle) === 'aborted';
const eventsOf = (h: Harness, kind: string) =>
  h.cycles.flatMap((c) => c.events).filter((e) => e.kind === kind);
const HOURS = 3_600_000;
/** The room's heater on a dimmer (a continuous actuator). */
const DIMMER = continuousLoop({ id: 'room', raise: { id: 'heater', kind: 'continuous', safeLevel: 0 } });

describe('an autotune requested on a regulating room', () => {
  test('(dimmer) runs to done, its result is stored once as a proposal (autoApply false), and the file gains stay in force', async () => {
    const h = room({ spec: DIMMER });
    await h.runFor(60 * 60_000);
    h.request('start', 'http');
    await h.runFor(READING_EVERY_MS);
    assert.equal(phase(h.last()), 'noise', 'the run started with the cycle that read the request');
    assert.equal(eventsOf(h, 'autotune-started').length, 1);
    assert.equal(h.last().writeNow, true, 'the request acted on is written at once');

    await h.runUntil(ended, 6 * HOURS);
    assert.equal(phase(h.last()), 'done', h.last().memory.autotune?.abortReason);
    await h.runFor(30 * 60_000);

    assert.equal(h.recorded.length, 1, 'stored once, not at every cycle after');
    const [{ tuning, apply }] = h.recorded as [Harness['recorded'][number]];
    assert.equal(apply, false);
    const result = h.last().memory.autotune!.result!;
    assert.deepEqual(tuning.gains, result.gains);
    assert.equal(tuning.model?.gain, result.identification.model.gain);
    const { gain, timeConstantS, deadTimeS } = tuning.model!;
    // Measured (seed 7): K 19.9, τ 596 s, θ 58.7 s.
    assert.ok(Math.abs(gain - 20) / 20 < 0.1, `K ${gain} within 10 % of 20`);
    assert.ok(Math.abs(timeConstantS - 600) / 600 < 0.1, `τ ${timeConstantS} within 10 % of 600 s`);
    assert.ok(Math.abs(deadTimeS - 60) / 60 < 0.1, `θ ${deadTimeS} within 10 % of 60 s`);
    assert.equal((tuning.details as { side: string }).side, 'raise');
    assert.equal(eventsOf(h, 'autotune-done').length, 1);
    assert.deepEqual(h.status().tuning, { active: 'config', latest: 1 });
    assert.equal(h.last().memory.pid.lastKp, 0.2, 'the PID still uses the file kp');
    assert.equal(h.status().autotune?.phase, 'done', 'the result stays visible');
  });

  test('(relay) with autoApply the result is put in force and the PID regulates with its gains', async () => {
    const h = room({ autotune: { autoApply: true } });
    await h.runFor(30 * 60_000);
    h.request('start');
    await h.runUntil(ended, 6 * HOURS);
    assert.equal(phase(h.last()), 'done', h.last().memory.autotune?.abortReason);
    await h.runFor(10 * 60_000);
    assert.equal(h.recorded.length, 1);
    assert.equal(h.recorded[0]!.apply, true);
    assert.deepEqual(h.status().tuning, { active: 1, latest: 1 });
    assert.equal(h.last().memory.pid.lastKp, h.recorded[0]!.tuning.gains.kp, 'kp of the tuning');
    assert.notEqual(h.recorded[0]!.tuning.gains.kp, 0.5);
  });

  test('given a restart after the result was stored, then it is not stored again', async () => {
    const h = room();
    await h.runFor(30 * 60_000);
    h.request('start');
    await h.runUntil(ended, 6 * HOURS);
    await h.runFor(READING_EVERY_MS);
    const after = h.restart();
    await after.runFor(10 * 60_000);
    assert.equal(h.recorded.length, 1);
    assert.equal(after.status().autotune?.phase, 'done', 'the result is still shown');
  });

  test('when storing the result fails, it is retried each cycle, shown meanwhile, and stored once', async () => {
    const h = room();
    await h.runFor(30 * 60_000);
    h.request('start');
    await h.runUntil((c) => phase(c) === 'relay', 2 * HOURS);
    h.failRecords(3);
    await h.runUntil(ended, 6 * HOURS);
    assert.equal(phase(h.last()), 'done');
    assert.equal(h.recorded.length, 0);
    assert.match(h.status().tuning?.unrecorded ?? '', /database is locked/);
    assert.equal(h.status().autotune?.result !== undefined, true, 'the result is in the status');
    await h.runFor(5 * 60_000);
    assert.equal(h.recorded.length, 1);
    assert.equal(h.status().tuning?.unrecorded, undefined);
    assert.equal(eventsOf(h, 'autotune-unrecorded').length, 1, 'one event per failure streak');
  });

  test('a cancel mid-run ends it safe with the reason, once', async () => {
    const h = room();
    await h.runFor(30 * 60_000);
    h.request('start');
    await h.runUntil((c) => phase(c) === 'relay' && h.actuator.level === 1, 2 * HOURS);
    h.request('cancel', 'mqtt');
    await h.runFor(READING_EVERY_MS);
    assert.equal(phase(h.last()), 'aborted');
    assert.equal(h.last().memory.autotune?.abortReason, 'cancelled by mqtt');
    assert.equal(h.status().autotune?.abortReason, 'cancelled by mqtt', 'shown in the status');
    assert.doesNotMatch(
      h.last().status.conditions.find((c) => c.type === 'Autotuning')?.status ?? '',
      /True/,
    );
    assert.deepEqual(
      eventsOf(h, 'autotune-aborted').map((e) => e.message),
      ['autotune aborted: cancelled by mqtt'],
    );
    await h.runFor(10 * 60_000);
    assert.equal(phase(h.last()), 'aborted', 'the request is not acted on again');
    assert.equal(h.last().memory.regulating, true, 'the PID regulates again');
    assert.doesNotMatch(h.last().commands.at(-1)?.detail ?? '', /autotune/, "the relay is the PID's again");
    assert.equal(h.recorded.length, 0);
  });

  test('a restart mid-run aborts it ("interrupted by a restart") and does not start it again', async () => {
    const h = room();
    await h.runFor(30 * 60_000);
    h.request('start');
    await h.runUntil((c) => phase(c) === 'relay', 2 * HOURS);
    const after = h.restart();
    await after.runFor(READING_EVERY_MS);
    assert.equal(phase(after.last()), 'aborted');
    assert.equal(after.last().memory.autotune?.abortReason, 'interrupted by a restart');
    assert.equal(eventsOf(after, 'autotune-aborted').length, 1);
    await after.runFor(10 * 60_000);
    assert.equal(phase(after.last()), 'aborted', 'the start request was acted on before the restart');
    assert.equal(eventsOf(after, 'autotune-started').length, 0);
  });
});

describe('a start stored before a restart that the stored memory does not show (memory is batched: a kill came first)', () => {
  for (const [label, lostCycles] of [
    ['killed before any cycle read the request', 0],
    ['killed mid-run, the memory written before the request', 40],
  ] as const) {
    test(`${label}: no run starts; it ends as aborted "interrupted by a restart", with one event, and the loop regulates`, async () => {
      const h = room();
      await h.runFor(30 * 60_000);
      const before = h.last().memory;
      h.request('start');
      await h.runFor(lostCycles * READING_EVERY_MS);
      const after = h.restartFrom(before);
      await after.runFor(READING_EVERY_MS);
      assert.equal(phase(after.last()), 'aborted');
      assert.equal(after.last().memory.autotune?.abortReason, 'interrupted by a restart');
      assert.equal(after.status().autotune?.phase, 'aborted', 'the status says so');
      assert.deepEqual(
        eventsOf(after, 'autotune-aborted').map((e) => e.message),
        ['autotune aborted: interrupted by a restart'],
      );
      assert.equal(after.last().writeNow, true, 'the interruption is written at once');
      await after.runFor(10 * 60_000);
      assert.equal(eventsOf(after, 'autotune-started').length, 0, 'never started');
      assert.equal(eventsOf(after, 'autotune-aborted').length, 1, 'said once');
      assert.equal(after.last().memory.regulating, true, 'the PID regulates');
    });
  }

  test('a start stored after the restart starts as usual', async () => {
    const h = room();
    await h.runFor(30 * 60_000);
    const after = h.restartFrom(h.last().memory);
    await after.runFor(READING_EVERY_MS);
    after.request('start');
    await after.runFor(READING_EVERY_MS);
    assert.equal(phase(after.last()), 'noise');
    assert.equal(eventsOf(after, 'autotune-started').length, 1);
  });
});

describe('a start the core refuses', () => {
  for (const [label, opts, reason] of [
    ['hysteresis controller', { spec: hysteresisHeaterLoop({ raise: relay('heater') }) }, /pid|hysteresis/i],
    ['mode off', { mode: 'off' as const }, /off/],
  ] as const) {
    test(`${label}: the refusal is an event and shown in the status, once`, async () => {
      const h = room(opts);
      await h.runFor(60_000);
      h.request('start');
      await h.runFor(5 * 60_000);
      assert.equal(h.last().memory.autotune, undefined);
      const refused = eventsOf(h, 'autotune-refused');
      assert.equal(refused.length, 1);
      assert.match(refused[0]!.message, reason);
      assert.match(h.status().tuning?.refused?.reason ?? '', reason);
      assert.equal(h.status().tuning?.refused?.generation, h.desired.generation);
    });
  }
});

test('a start request found long after it was stored (its memory lost) is not acted on, and says why', async () => {
  const h = room();
  await h.runFor(60_000);
  h.request('start');
  h.desired.autotuneRequest!.atMs -= 20 * 60_000;
  await h.runFor(60_000);
  assert.equal(h.last().memory.autotune, undefined);
  assert.equal(h.status().tuning?.refused?.reason, 'the request is 20 min old: ask again');
});

describe('the tuning in force', () => {
  test('given a PID regulating with an error, when a tuning with other gains is applied, then the output does not jump', async () => {
    const spec = continuousLoop({ controller: { type: 'pid', pid: { kp: 0.5, tiS: 1_200, tdS: 0 } } });
    const h = room({ spec, noiseless: true });
    await h.runFor(20 * 60_000);
    h.desired.setpoint = 21;
    h.desired.generation += 1;
    await h.runFor(3 * 60_000);
    const before = h.last().memory.output;
    h.desired.tuning = { version: 1, gains: { kp: 1.5, tiS: 400, tdS: 0 } };
    h.desired.generation += 1;
    await h.runFor(READING_EVERY_MS);
    const after = h.last().memory.output;
    assert.equal(h.last().memory.pid.lastKp, 1.5, 'the tuning kp is in use');
    const error = 21 - h.last().reading!.value;
    assert.ok(error > 0.5, `still ${error} °C below the setpoint`);
    // It moves by one cycle's integral at the new gains (kp/tiS × error × 5 s ≈ 0.02); without
    // the re-base the new kp alone would move it by (1.5 − 0.5) × error, above 0.5.
    assert.ok(Math.abs(after - before) < 0.05, `output ${before} → ${after}`);
    assert.deepEqual(h.status().tuning, { active: 1 });
  });

  test('a tuning on a hysteresis loop is not used (no gains): the status says config', async () => {
    const h = room({ spec: hysteresisHeaterLoop({ raise: relay('heater') }) });
    h.desired.tuning = { version: 2, gains: { kp: 1, tiS: 100, tdS: 0 } };
    h.desired.lastTuningVersion = 2;
    await h.runFor(60_000);
    assert.deepEqual(h.status().tuning, { active: 'config', latest: 2 });
  });
});

describe('an autotune of the cooler on a loop with a heater and a cooler (split range)', () => {
  /**
   * A warm cellar (ambient 25 °C) held at 20 °C by a cooler on a dimmer (−10 °C at full power)
   * beside a heater (+20 °C): the cooler acts, half on. The file's gains: the heater's kp 0.1,
   * the cooler's own kp 0.2.
   */
  function cellar(autotune: AutotuneDefaults) {
    const clock = new ManualClock(T0);
    const plant = new FopdtPlant({ ambient: 25, timeConstantS: 600, deadTimeS: 60, initial: 20 }, T0);
    plant.addInput('heater', 20, 0);
    plant.addInput('cooler', -10, 0.5);
    const heater = new PlantActuator('heater', 'continuous', plant, clock);
    const cooler = new PlantActuator('cooler', 'continuous', plant, clock);
    cooler.level = 0.5;
    const spec: LoopSpec = {
      ...DIMMER,
      id: 'cellar',
      controller: {
        type: 'pid',
        pid: { kp: 0.1, tiS: 600, tdS: 0 },
        lowerPid: { kp: 0.2, tiS: 600, tdS: 0 },
      },
      lower: { id: 'cooler', kind: 'continuous', safeLevel: 0 },
    };
    const desired: CycleDesired = { generation: 1, setpoint: 20, mode: 'heat_cool' };
    const recorded: Harness['recorded'] = [];
    const random = new Random(11);
    const cycles: CompletedCycle[] = [];
    const reconciler = new LoopReconciler({
      spec,
      desired: () => desired,
      latestReading: () => {
        const nowMs = clock.nowMs();
        const noisy = plant.valueAt(nowMs) + 0.03 * random.gaussian();
        return { value: Math.round(noisy / 0.0625) * 0.0625, atMs: nowMs };
      },
      actuators: new Map([
        ['heater', heater],
        ['cooler', cooler],
      ]),
      clock,
      logger: pino({ level: 'silent' }),
      onCycle: (cycle) => cycles.push(cycle),
      autotuneDefaults: () => autotune,
      recordTuning: (tuning, apply) => {
        const version = (desired.lastTuningVersion ?? 0) + 1;
        recorded.push({ tuning, apply, version });
        desired.lastTuningVersion = version;
        if (apply) {
          desired.tuning = {
            version,
            gains: tuning.gains,
            ...(tuning.lowerGains ? { lowerGains: tuning.lowerGains } : {}),
          };
          desired.generation += 1;
        }
        return { version };
      },
    });
    const runFor = async (ms: number, until?: (cycle: CompletedCycle) => boolean) => {
      const end = clock.nowMs() + ms;
      while (clock.nowMs() < end) {
        await clock.advance(READING_EVERY_MS);
        await reconciler.run();
        if (until?.(cycles.at(-1)!)) return;
      }
    };
    const requestLower = () => {
      desired.generation += 1;
      desired.autotuneRequest = {
        action: 'start',
        atMs: clock.nowMs(),
        generation: desired.generation,
        options: { side: 'lower' },
      };
    };
    return { runFor, requestLower, recorded, cycles, status: () => reconciler.status! };
  }

  test('with autoApply, the result is put in force on the cooler side; the heater keeps the file’s gains', async () => {
    const h = cellar({ autoApply: true });
    await h.runFor(30 * 60_000);
    h.requestLower();
    await h.runFor(8 * HOURS, ended);
    const last = h.cycles.at(-1)!;
    assert.equal(phase(last), 'done', last.memory.autotune?.abortReason);
    await h.runFor(10 * 60_000);
    assert.equal(h.recorded.length, 1);
    const { tuning, apply } = h.recorded[0]!;
    assert.equal(apply, true, 'a split-range result is no longer only a proposal');
    assert.deepEqual(tuning.gains, { kp: 0.1, tiS: 600, tdS: 0 }, "the heater's gains in force, kept");
    const result = last.memory.autotune?.result?.gains;
    assert.equal(tuning.lowerGains?.kp, result?.kp, "the cooler's gains: the run's");
    assert.equal(tuning.lowerGains?.tiS, result?.tiS);
    assert.deepEqual(h.status().tuning, { active: 1, latest: 1 });
    // Regulating on the cooler side, with the cooler's new kp.
    const now = h.cycles.at(-1)!.memory.pid;
    assert.ok(now.lastOutput < 0, `the cooler acts: ${now.lastOutput}`);
    assert.equal(now.lastKp, tuning.lowerGains?.kp);
  });
});
