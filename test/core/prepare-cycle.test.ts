/**
 * A cycle's decisions before reconcile (core/prepare-cycle.ts), with plain values and an explicit
 * `now`: which desired state is in force (the stored one, or the schedule's at this instant),
 * when a stored autotune request starts a run, is refused or aborted, which gains regulate, and
 * whether the loop regulates or is held safe once reconcile acts on what was prepared (a stored
 * fault reset, a sensor set without readings, the schedule's mode).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import { AUTOTUNE_INTERRUPTED, initialLoopMemory } from '../../src/core/loop-state.js';
import {
  type CycleDesired,
  type CycleInputs,
  type CycleMemory,
  committedMemory,
  cycleWakeMs,
  type PreparedCycle,
  prepareCycle,
} from '../../src/core/prepare-cycle.js';
import { reconcile } from '../../src/core/reconcile.js';
import { effectiveDesired, type ScheduleConfig } from '../../src/core/schedule/effective-desired.js';
import type { Reading } from '../../src/core/types.js';
import { at, heaterRelayLoop, hysteresisHeaterLoop, min, reading, s, T0 } from './fixtures.js';

/**
 * Every day at 06:30 UTC 21 °C, at 22:30 UTC the preset `away` (18 °C, off); T0 is 06:00 UTC, so
 * `away` is in force at T0.
 */
const SCHEDULE: ScheduleConfig = {
  presets: { away: { setpoint: 18, mode: 'off' } },
  schedule: {
    weekly: [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], at: '06:30', setpoint: 21 },
      { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], at: '22:30', preset: 'away' },
    ],
  },
};
const scheduled = (config: ScheduleConfig) => (desired: CycleDesired, nowMs: number) =>
  effectiveDesired(desired, config, 'UTC', nowMs);

const TUNING = { version: 4, gains: { kp: 2, tiS: 900, tdS: 0 } };

/** A heater loop at `nowMs` with the reading 3 °C below its 20 °C setpoint, heater off. */
function inputs(nowMs: number, overrides: Partial<CycleInputs> = {}): CycleInputs {
  return {
    spec: heaterRelayLoop(),
    stored: { generation: 3, setpoint: 20, mode: 'heat' },
    memory: initialLoopMemory(),
    faultReset: undefined,
    readings: { latest: reading(17, nowMs - s(5)), actuators: { heater: 0 } },
    sensorSetAtMs: undefined,
    autotune: { defaults: undefined, storedBeforeStart: false },
    ...overrides,
  };
}

/** Reconcile on what the cycle prepared, as the runtime does: the heater's wanted level. */
function heaterLevel(prepared: PreparedCycle, nowMs: number): number | undefined {
  const result = reconcile(prepared.spec, prepared.desired, prepared.observed, prepared.memory, nowMs);
  return result.wanted.heater;
}

describe('prepareCycle: the desired state in force', () => {
  const cases: Array<{
    given: string;
    schedule?: CycleInputs['schedule'];
    nowMs: number;
    expect: { setpoint: number; mode: string; source?: string; nextChangeAtMs?: number };
  }> = [
    {
      given: 'no schedule',
      nowMs: T0,
      expect: { setpoint: 20, mode: 'heat' },
    },
    {
      given: 'a schedule evaluator that finds nothing scheduled (no schedule part), whatever it returns',
      schedule: () => ({ setpoint: 99, mode: 'cool', nextChangeAtMs: T0 + s(1) }),
      nowMs: T0,
      expect: { setpoint: 20, mode: 'heat' },
    },
    {
      given: 'a weekly schedule, before its 06:30 point (the 22:30 entry of the day before holds)',
      schedule: scheduled(SCHEDULE),
      nowMs: T0,
      expect: { setpoint: 18, mode: 'off', source: 'schedule', nextChangeAtMs: T0 + min(30) },
    },
    {
      given: 'a weekly schedule, after its 06:30 point',
      schedule: scheduled(SCHEDULE),
      nowMs: T0 + min(45),
      expect: { setpoint: 21, mode: 'heat', source: 'schedule', nextChangeAtMs: T0 + min(16 * 60 + 30) },
    },
  ];
  for (const { given, schedule, nowMs, expect } of cases) {
    test(`given ${given}, then ${expect.setpoint} °C ${expect.mode} is in force`, () => {
      const prepared = prepareCycle(inputs(nowMs, schedule ? { schedule } : {}), nowMs);
      assert.equal(prepared.desired.setpoint, expect.setpoint);
      assert.equal(prepared.desired.mode, expect.mode);
      assert.equal(prepared.schedule?.source, expect.source);
      assert.equal(prepared.nextChangeAtMs, expect.nextChangeAtMs);
      assert.equal(prepared.desired.generation, 3, 'the stored generation, whoever chose the setpoint');
    });
  }

  test('given a manual change after the last schedule point, then it holds over the schedule', () => {
    const nowMs = T0 + min(45);
    const stored: CycleDesired = { generation: 5, setpoint: 19.5, mode: 'heat', changedAtMs: T0 + min(40) };
    const prepared = prepareCycle(inputs(nowMs, { stored, schedule: scheduled(SCHEDULE) }), nowMs);
    assert.equal(prepared.desired.setpoint, 19.5);
    assert.equal(prepared.schedule?.source, 'manual');
  });

  test("given the stored mode heat and the schedule's off in force, then the heater is held safe", () => {
    const heat = prepareCycle(inputs(T0 + min(45), { schedule: scheduled(SCHEDULE) }), T0 + min(45));
    assert.ok((heaterLevel(heat, T0 + min(45)) ?? 0) > 0, 'given: at 21 °C and 17 °C read, it heats');
    const off = prepareCycle(inputs(T0, { schedule: scheduled(SCHEDULE) }), T0);
    assert.equal(heaterLevel(off, T0), 0);
  });
});

describe('prepareCycle: the stored fault reset', () => {
  const latched = (atMs: number): CycleMemory => ({
    ...initialLoopMemory(),
    latchedFault: { reason: 'HeatingIneffective', message: 'the heater had no effect', atMs },
  });
  const cases: Array<{
    given: string;
    memory: CycleMemory;
    reset: { atMs: number; generation: number };
    cleared: boolean;
  }> = [
    {
      given: 'a reset received after the latch',
      memory: latched(T0 - min(10)),
      reset: { atMs: T0 - min(1), generation: 7 },
      cleared: true,
    },
    {
      given: 'a reset received before the latch (a new fault)',
      memory: latched(T0 - min(1)),
      reset: { atMs: T0 - min(10), generation: 7 },
      cleared: false,
    },
    {
      given: 'a reset this memory already applied, and a latch after it',
      memory: { ...latched(T0 - min(1)), faultResetGeneration: 7 },
      reset: { atMs: T0 - min(1) + s(30), generation: 7 },
      cleared: false,
    },
  ];
  for (const { given, memory, reset, cleared } of cases) {
    test(`given ${given}, then the loop ${cleared ? 'regulates again' : 'stays held safe'}`, () => {
      const prepared = prepareCycle(inputs(T0, { memory, faultReset: reset }), T0);
      assert.equal(prepared.memory.latchedFault === undefined, cleared);
      assert.equal(prepared.faultResetGeneration, 7, 'the memory names the reset it applied or had applied');
      const level = heaterLevel(prepared, T0) ?? 0;
      assert.equal(level > 0, cleared, `heater level ${level}`);
    });
  }

  test('given no reset stored, then the memory is the one passed in', () => {
    const memory = initialLoopMemory();
    assert.equal(prepareCycle(inputs(T0, { memory }), T0).memory, memory);
  });
});

describe('prepareCycle: a sensor set', () => {
  const setSpec = (): LoopSpec =>
    hysteresisHeaterLoop({
      sensorSet: { sensors: ['a', 'b', 'c'], combine: 'median', minHealthy: 2, unit: '°C' },
    });
  const withSensors = (sensors: Record<string, Reading | undefined> | undefined, sensorSetAtMs?: number) =>
    inputs(T0, { spec: setSpec(), readings: { sensors, actuators: { heater: 0 } }, sensorSetAtMs });

  test('given no readings of its sensors at all, then the loop is held safe, never on the single-sensor path', () => {
    const prepared = prepareCycle(withSensors(undefined), T0);
    assert.equal(prepared.observed.reading, undefined);
    assert.equal(prepared.observed.sensorSet?.verdict.ok, false);
    assert.equal(heaterLevel(prepared, T0), 0);
  });

  test('given two of three healthy, then it regulates on their median, stamped with the newest one', () => {
    const prepared = prepareCycle(withSensors({ a: reading(17, T0 - s(20)), b: reading(18, T0 - s(5)) }), T0);
    assert.deepEqual(prepared.observed.reading, { value: 17.5, atMs: T0 - s(5) });
    assert.equal(prepared.sensorSetAtMs, T0 - s(5), 'remembered for the next cycle');
    assert.ok((heaterLevel(prepared, T0) ?? 0) > 0);
  });

  test('given the last combined reading was newer than every member now, then time does not go back', () => {
    const prepared = prepareCycle(
      withSensors({ a: reading(17, T0 - s(20)), b: reading(18, T0 - s(30)) }, T0 - s(10)),
      T0,
    );
    assert.equal(prepared.observed.reading?.atMs, T0 - s(10));
    assert.equal(prepared.sensorSetAtMs, T0 - s(10));
  });

  test('given too few healthy, then the previous combined time is kept for the next cycle', () => {
    const prepared = prepareCycle(withSensors({ a: reading(17, T0 - s(20)) }, T0 - s(60)), T0);
    assert.equal(prepared.sensorSetAtMs, T0 - s(60));
  });
});

describe('prepareCycle: the gains in force', () => {
  test("given a PID loop and a stored tuning, then the tuning's gains regulate", () => {
    const prepared = prepareCycle(
      inputs(T0, { stored: { generation: 3, setpoint: 20, mode: 'heat', tuning: TUNING } }),
      T0,
    );
    assert.equal(prepared.gainsInForce, 4);
    assert.equal(prepared.spec.controller.type === 'pid' && prepared.spec.controller.pid.kp, 2);
  });

  test("given a hysteresis loop and a stored tuning, then the file's spec is used as it is", () => {
    const spec = hysteresisHeaterLoop();
    const prepared = prepareCycle(
      inputs(T0, { spec, stored: { generation: 3, setpoint: 20, mode: 'heat', tuning: TUNING } }),
      T0,
    );
    assert.equal(prepared.gainsInForce, 'config');
    assert.equal(prepared.spec, spec);
  });

  test("given no stored tuning, then the file's gains", () => {
    const prepared = prepareCycle(inputs(T0), T0);
    assert.equal(prepared.gainsInForce, 'config');
    assert.equal(prepared.spec.controller.type === 'pid' && prepared.spec.controller.pid.kp, 0.5);
  });
});

describe('prepareCycle: when a stored autotune request starts a run', () => {
  const start = (atMs: number, generation = 9) => ({
    action: 'start' as const,
    atMs,
    generation,
    options: {},
  });
  const cases: Array<{
    given: string;
    overrides: (nowMs: number) => Partial<CycleInputs>;
    expect: { running: boolean; event?: string; reason?: RegExp };
  }> = [
    {
      given: 'a start received a few seconds ago',
      overrides: (nowMs) => ({
        stored: { generation: 3, setpoint: 20, mode: 'heat', autotuneRequest: start(nowMs - s(3)) },
      }),
      expect: { running: true },
    },
    {
      given: 'a start this memory already acted on',
      overrides: (nowMs) => ({
        stored: { generation: 3, setpoint: 20, mode: 'heat', autotuneRequest: start(nowMs - s(3)) },
        memory: { ...initialLoopMemory(), autotuneRequestGeneration: 9 },
      }),
      expect: { running: false },
    },
    {
      given: 'a start 20 min old when first read',
      overrides: (nowMs) => ({
        stored: { generation: 3, setpoint: 20, mode: 'heat', autotuneRequest: start(nowMs - min(20)) },
      }),
      expect: { running: false, event: 'autotune-refused', reason: /20 min old: ask again/ },
    },
    {
      given: 'a fresh start and no reading',
      overrides: (nowMs) => ({
        stored: { generation: 3, setpoint: 20, mode: 'heat', autotuneRequest: start(nowMs - s(3)) },
        readings: { actuators: { heater: 0 } },
      }),
      expect: { running: false, event: 'autotune-refused', reason: /the sensor cannot be used/ },
    },
    {
      given: 'a start stored before this process started',
      overrides: (nowMs) => ({
        stored: { generation: 3, setpoint: 20, mode: 'heat', autotuneRequest: start(nowMs - s(3)) },
        autotune: { defaults: undefined, storedBeforeStart: true },
      }),
      expect: { running: false, event: 'autotune-aborted', reason: new RegExp(AUTOTUNE_INTERRUPTED) },
    },
  ];
  for (const { given, overrides, expect } of cases) {
    const outcome = expect.running
      ? 'a run starts'
      : expect.event
        ? `nothing starts (${expect.event})`
        : 'nothing happens';
    test(`given ${given}, then ${outcome}`, () => {
      const nowMs = at(min(5));
      const prepared = prepareCycle(inputs(nowMs, overrides(nowMs)), nowMs);
      assert.equal(prepared.memory.autotune?.phase === 'noise', expect.running);
      assert.equal(prepared.memory.autotuneRequestGeneration, 9, 'acted on once, by generation');
      assert.equal(prepared.requestEvent?.kind, expect.event);
      if (expect.reason) assert.match(prepared.requestEvent?.message ?? '', expect.reason);
    });
  }

  test('given a schedule in force, then the run is for the setpoint in force, not the stored one', () => {
    const nowMs = T0 + min(45);
    const stored: CycleDesired = {
      generation: 3,
      setpoint: 20,
      mode: 'heat',
      autotuneRequest: start(nowMs - s(3)),
    };
    const prepared = prepareCycle(inputs(nowMs, { stored, schedule: scheduled(SCHEDULE) }), nowMs);
    assert.equal(prepared.memory.autotune?.setpoint, 21);
  });

  test('given a run going and a cancel from MQTT, then reconcile ends it with the cancel named', () => {
    const nowMs = at(min(5));
    const running = prepareCycle(
      inputs(nowMs, {
        stored: { generation: 3, setpoint: 20, mode: 'heat', autotuneRequest: start(nowMs - s(3)) },
      }),
      nowMs,
    ).memory;
    const cancel = { action: 'cancel' as const, atMs: nowMs, generation: 10, options: {}, source: 'mqtt' };
    const later = nowMs + s(10);
    const prepared = prepareCycle(
      inputs(later, {
        memory: running,
        stored: { generation: 3, setpoint: 20, mode: 'heat', autotuneRequest: cancel },
      }),
      later,
    );
    const result = reconcile(prepared.spec, prepared.desired, prepared.observed, prepared.memory, later);
    assert.equal(result.memory.autotune?.phase, 'aborted');
    assert.equal(result.memory.autotune?.abortReason, 'cancelled by mqtt');
  });
});

describe('committedMemory and cycleWakeMs: what the cycle commits and when it wakes', () => {
  test("given reconcile's memory without the marks, then the committed one names the reset and request applied", () => {
    const prepared = {
      memory: {
        ...initialLoopMemory(),
        autotuneRequestGeneration: 9,
        tuningRecorded: { startedAtMs: T0, version: 2 },
      },
      faultResetGeneration: 7,
    };
    const committed = committedMemory(initialLoopMemory(), prepared);
    assert.equal(committed.faultResetGeneration, 7);
    assert.equal(committed.autotuneRequestGeneration, 9);
    assert.deepEqual(committed.tuningRecorded, { startedAtMs: T0, version: 2 });
  });

  const wakes: Array<[given: string, nextChangeAtMs: number | undefined, then: number]> = [
    ['no schedule change due', undefined, T0 + min(10)],
    ['a schedule point before reconcile’s wake', T0 + min(3), T0 + min(3)],
    ['a schedule point after reconcile’s wake', T0 + min(30), T0 + min(10)],
  ];
  for (const [given, nextChangeAtMs, then] of wakes) {
    test(`given ${given}, then the loop wakes at +${(then - T0) / 60_000} min`, () => {
      assert.equal(cycleWakeMs(T0 + min(10), nextChangeAtMs === undefined ? {} : { nextChangeAtMs }), then);
    });
  }

  test('given a schedule, then the cycle wakes at its next point', () => {
    const prepared = prepareCycle(inputs(T0, { schedule: scheduled(SCHEDULE) }), T0);
    assert.equal(cycleWakeMs(T0 + min(60), prepared), T0 + min(30));
  });
});
