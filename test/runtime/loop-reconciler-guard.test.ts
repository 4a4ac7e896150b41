/**
 * LoopReconciler: everything a cycle computes before acting runs inside the guard that drives
 * every actuator safe (safety first): a schedule callback, a sensor set's step or a reading
 * callback that throws leaves no heater on, in that same cycle. And a sensor set's combined
 * reading never goes back in time across cycles (a member dropping out).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import type { LoopStatus } from '../../src/core/status.js';
import type { Reading } from '../../src/core/types.js';
import type { ActuatorDriver } from '../../src/drivers/types.js';
import {
  type CompletedCycle,
  LoopReconciler,
  type LoopReconcilerOptions,
} from '../../src/runtime/loop-reconciler.js';
import { ManualClock } from '../../src/runtime/manual-clock.js';
import { heaterRelayLoop, s, T0 } from '../core/fixtures.js';

/** A relay that records its level. */
class FakeRelay implements ActuatorDriver {
  readonly simulated = true;
  readonly kind = 'relay' as const;
  level = 0;
  constructor(readonly id: string) {}
  async observe() {
    return this.level;
  }
  async write(level: number) {
    this.level = level;
  }
}

/** A cold room (15 °C, setpoint 20, heat): the heater comes on at the first cycle. */
function coldRoom(spec: LoopSpec, more: Partial<LoopReconcilerOptions> = {}) {
  const clock = new ManualClock(T0);
  const heater = new FakeRelay('heater');
  const cycles: CompletedCycle[] = [];
  const cycle = new LoopReconciler({
    spec,
    desired: () => ({ generation: 1, setpoint: 20, mode: 'heat' }),
    latestReading: () => ({ value: 15, atMs: clock.nowMs() }),
    actuators: new Map([[heater.id, heater]]),
    clock,
    logger: pino({ level: 'silent' }),
    onCycle: (completed) => cycles.push(completed),
    ...more,
  });
  return { clock, heater, cycle, cycles };
}

const setSpec = (): LoopSpec =>
  heaterRelayLoop({
    sensorSet: { sensors: ['a', 'b', 'c'], combine: 'median', minHealthy: 1, outlierLimit: 1, unit: '°C' },
  });

describe('LoopReconciler: a throw before reconcile drives every actuator safe in that cycle', () => {
  const cases: Array<
    [when: string, build: (fail: () => boolean) => { spec: LoopSpec; more: Partial<LoopReconcilerOptions> }]
  > = [
    [
      'the schedule callback (effective desired state) throws',
      (fail) => ({
        spec: heaterRelayLoop(),
        more: {
          schedule: (desired) => {
            if (fail()) throw new Error('schedule defect');
            return { setpoint: desired.setpoint, mode: desired.mode };
          },
        },
      }),
    ],
    [
      "the sensor set's readings throw",
      (fail) => ({
        spec: setSpec(),
        more: {
          sensorReadings: () => {
            if (fail()) throw new Error('sensor set defect');
            const now = T0;
            return { a: { value: 15, atMs: now }, b: { value: 15, atMs: now }, c: { value: 15, atMs: now } };
          },
        },
      }),
    ],
    [
      "the loop's reading callback throws",
      (fail) => ({
        spec: heaterRelayLoop(),
        more: {
          latestReading: () => {
            if (fail()) throw new Error('reading defect');
            return { value: 15, atMs: T0 };
          },
        },
      }),
    ],
  ];
  for (const [when, build] of cases) {
    test(`given the heater on, when ${when}, then the heater is off in that cycle and the cycle fails`, async () => {
      let failing = false;
      const { spec, more } = build(() => failing);
      const { clock, heater, cycle } = coldRoom(spec, more);
      await cycle.run();
      assert.equal(heater.level, 1, 'given a cold room, the heater is on');
      failing = true;
      await clock.advance(s(5));
      await assert.rejects(cycle.run(), /defect/);
      assert.equal(heater.level, 0, 'the heater is not left on');
      assert.equal(cycle.status?.conditions.find((c) => c.type === 'Reconciled')?.status, 'False');
    });
  }
});

describe("LoopReconciler: a sensor set's combined reading never goes back in time", () => {
  test('given c the newest, when c turns outlier, then the reading keeps c’s last time (not b’s older one)', async () => {
    let readings: Record<string, Reading> = {
      a: { value: 15, atMs: T0 - s(30) },
      b: { value: 15.2, atMs: T0 - s(20) },
      c: { value: 15.1, atMs: T0 },
    };
    const { clock, cycle, cycles } = coldRoom(setSpec(), { sensorReadings: () => readings });
    await cycle.run();
    assert.equal(cycles.at(-1)?.reading?.atMs, T0);
    readings = { ...readings, c: { value: 30, atMs: T0 + s(5) } };
    await clock.advance(s(5));
    await cycle.run();
    assert.deepEqual(cycles.at(-1)?.status.sensors?.used, ['a', 'b']);
    assert.equal(
      cycles.at(-1)?.reading?.atMs,
      T0,
      'not T0 − 20 s: the PID and the history never see time go back',
    );
  });

  test('a wall-clock step moves the kept time with the readings', async () => {
    let readings: Record<string, Reading> = {
      a: { value: 15, atMs: T0 - s(30) },
      b: { value: 15.2, atMs: T0 - s(20) },
      c: { value: 15.1, atMs: T0 },
    };
    const { clock, cycle, cycles } = coldRoom(setSpec(), { sensorReadings: () => readings });
    await cycle.run();
    // The clock steps back 1 h: the sampler's readings move with it, and so does the kept time.
    const stepMs = -3_600_000;
    clock.onStep((deltaMs) => cycle.shiftTimes(deltaMs));
    clock.stepWall(stepMs);
    const moved = (r: Reading, value = r.value): Reading => ({ value, atMs: r.atMs + stepMs });
    readings = { a: moved(readings.a!), b: moved(readings.b!), c: { value: 30, atMs: T0 + stepMs + s(5) } };
    await clock.advance(s(5));
    await cycle.run();
    assert.equal(cycles.at(-1)?.reading?.atMs, T0 + stepMs, "c's last time, moved by the step");
  });
});

describe('LoopReconciler: the cycle that notices a clock step reads the desired state the step moved', () => {
  test('given the daemon moves stored schedule times in a microtask after the step, then that cycle uses them', async () => {
    // The stored row as the daemon's queued rebase leaves it (daemon/clock-step.ts): before it
    // runs, the cycle would evaluate old times at the new clock (a profile a day ahead).
    let storedSetpoint = 18;
    const base = new ManualClock(T0);
    let stepOnNextRead = false;
    let reconciler: LoopReconciler | undefined;
    const clock = Object.assign(Object.create(base) as ManualClock, {
      nowMs: () => {
        if (stepOnNextRead) {
          stepOnNextRead = false;
          reconciler?.shiftTimes(24 * 3_600_000);
          queueMicrotask(() => {
            storedSetpoint = 20;
          });
        }
        return base.nowMs();
      },
    });
    const heater = new FakeRelay('heater');
    const statuses: LoopStatus[] = [];
    reconciler = new LoopReconciler({
      onStatus: (status) => statuses.push(status),
      spec: heaterRelayLoop(),
      desired: () => ({ generation: 1, setpoint: storedSetpoint, mode: 'heat' }),
      latestReading: () => ({ value: 19, atMs: base.nowMs() }),
      actuators: new Map([[heater.id, heater]]),
      clock,
      logger: pino({ level: 'silent' }),
    });
    stepOnNextRead = true;
    await reconciler.run();
    assert.equal(statuses.at(-1)?.setpoint, 20);
  });
});
