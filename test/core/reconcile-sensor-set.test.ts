/**
 * reconcile with several sensors: the gate acts on the set's verdict, so too few
 * healthy sensors take every actuator safe in that same cycle with a reason naming each sensor;
 * an outlier or a NaN is dropped and reported while regulation goes on on the others; each
 * member goes stale at its own limit (a frozen fast probe beside a slow one takes the loop safe
 * as fast as with that probe alone); the combined reading carries the newest used reading's time,
 * so the PID sees every new reading as news, and the loop wakes when the first member goes stale.
 * Readings are combined here as the runtime does (combineReadings at the cycle's now).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import {
  initialLoopMemory,
  type LoopMemory,
  type LoopObserved,
  type ReconcileResult,
  reconcile,
} from '../../src/core/reconcile.js';
import { combineReadings, type SensorSetSpec } from '../../src/core/sensor-set.js';
import type { ActuatorLevel, Reading } from '../../src/core/types.js';
import { at, condition, desired, heaterRelayLoop, hysteresisHeaterLoop, min, s } from './fixtures.js';

/** The greenhouse heater (hysteresis, stale after 5 min) reading a set of probes a, b, c. */
function setLoop(set: Partial<SensorSetSpec> = {}): LoopSpec {
  return hysteresisHeaterLoop({
    sensorSet: { sensors: ['a', 'b', 'c'], combine: 'median', minHealthy: 2, unit: '°C', ...set },
  });
}

/** Drives the loop cycle by cycle against an obedient heater, combining like the runtime. */
class SetHarness {
  memory: LoopMemory = initialLoopMemory();
  actuators: Record<string, ActuatorLevel> = {};

  constructor(readonly spec: LoopSpec) {}

  observe(readings: Record<string, Reading | undefined>, nowMs: number): LoopObserved {
    const sensorSet = combineReadings(this.spec.sensorSet!, readings, nowMs, this.spec);
    return {
      ...(sensorSet.reading ? { reading: sensorSet.reading } : {}),
      sensorSet,
      actuators: this.actuators,
    };
  }

  cycle(readings: Record<string, Reading | undefined>, nowMs: number): ReconcileResult {
    const result = reconcile(
      this.spec,
      desired('heat', 20),
      this.observe(readings, nowMs),
      this.memory,
      nowMs,
    );
    this.memory = result.memory;
    this.actuators = { ...this.actuators, ...result.wanted };
    return result;
  }
}

const fresh = (value: number, nowMs: number): Reading => ({ value, atMs: nowMs });

/** A cold greenhouse (15 °C, setpoint 20): the heater comes on. */
function heating(spec = setLoop()): SetHarness {
  const h = new SetHarness(spec);
  const r = h.cycle({ a: fresh(15, at(0)), b: fresh(15.2, at(0)), c: fresh(14.9, at(0)) }, at(0));
  assert.equal(r.wanted.heater, 1, 'given a cold greenhouse, the heater is on');
  return h;
}

describe('too few healthy sensors: safe in that same cycle, the reason names the sensors', () => {
  test('given the heater on, when two of three (minHealthy 2) go stale and missing, then the heater is off at once', () => {
    const h = heating();
    const nowMs = at(min(6));
    const r = h.cycle({ a: fresh(15, at(0)), b: undefined, c: fresh(15, nowMs) }, nowMs);
    assert.equal(r.wanted.heater, 0);
    assert.equal(r.commands[0]?.level, 0, 'the off command is sent in this cycle');
    const healthy = condition(r, 'SensorHealthy');
    assert.equal(healthy.status, 'False');
    assert.equal(healthy.reason, 'Missing', 'a mix of reasons: Missing');
    assert.equal(
      healthy.message,
      '1 of 3 sensors healthy, 2 needed (a Stale: last reading is 360 s old (limit 300 s); b Missing: no reading yet)',
    );
    const faulted = condition(r, 'Faulted');
    assert.equal(faulted.status, 'True');
    assert.match(faulted.message, /a Stale: .* b Missing: no reading yet/);
    assert.match(r.commands[0]?.detail ?? '', /^sensor Missing: 1 of 3 sensors healthy, 2 needed \(a Stale/);
    assert.equal(r.status.measured, undefined);
    assert.deepEqual(r.status.sensors, {
      combine: 'median',
      used: [],
      dropped: [
        { sensor: 'a', reason: 'Stale', message: 'last reading is 360 s old (limit 300 s)' },
        { sensor: 'b', reason: 'Missing', message: 'no reading yet' },
      ],
      summary: 'no reading: 1 of 3 healthy, 2 needed (dropped a: stale, b: missing)',
    });
  });

  test('every sensor stale: the reason is SensorStale, as for one stale sensor', () => {
    const h = heating();
    const nowMs = at(min(6));
    const r = h.cycle({ a: fresh(15, at(0)), b: fresh(15, at(0)), c: fresh(15, at(0)) }, nowMs);
    assert.equal(r.wanted.heater, 0);
    assert.equal(condition(r, 'Faulted').reason, 'SensorStale');
  });

  test('a set observed without its result (a runtime that did not combine) is held safe, not regulated on `reading`', () => {
    const spec = setLoop();
    const r = reconcile(
      spec,
      desired('heat', 20),
      { reading: fresh(15, at(0)), actuators: { heater: 1 } },
      initialLoopMemory(),
      at(0),
    );
    assert.equal(r.wanted.heater, 0);
  });
});

describe('an outlier is dropped and reported; regulation goes on on the others', () => {
  test('given three probes, one stuck at 85 °C, then the heater runs on the median of the other two', () => {
    const h = heating(setLoop({ outlierLimit: 1.5 }));
    const nowMs = at(min(1));
    const r = h.cycle({ a: fresh(15, nowMs), b: fresh(85, nowMs), c: fresh(15.4, nowMs) }, nowMs);
    assert.equal(r.wanted.heater, 1, 'still heating: the stuck probe does not switch the heater off');
    assert.equal(r.status.measured, 15.2);
    assert.equal(condition(r, 'SensorHealthy').status, 'True');
    assert.deepEqual(r.status.sensors?.used, ['a', 'c']);
    assert.deepEqual(
      r.status.sensors?.dropped.map((d) => [d.sensor, d.reason]),
      [['b', 'Outlier']],
    );
    assert.equal(r.status.sensors?.summary, 'median of 3 (dropped b: 69.6 °C from the others)');
  });

  test('without the outlier limit, the same probe would have turned the heater off (the test can fail)', () => {
    const h = heating(setLoop({ combine: 'mean' }));
    const nowMs = at(min(1));
    const r = h.cycle({ a: fresh(15, nowMs), b: fresh(85, nowMs), c: fresh(15.4, nowMs) }, nowMs);
    assert.equal(r.wanted.heater, 0);
  });
});

describe('a sensor returning NaN among three', () => {
  test('is dropped as NotFinite; the loop regulates on the other two', () => {
    const h = heating();
    const nowMs = at(min(1));
    const r = h.cycle({ a: fresh(15, nowMs), b: fresh(Number.NaN, nowMs), c: fresh(16, nowMs) }, nowMs);
    assert.equal(r.wanted.heater, 1);
    assert.equal(r.status.measured, 15.5);
    assert.deepEqual(r.status.sensors?.dropped, [
      { sensor: 'b', reason: 'NotFinite', message: 'reading is NaN' },
    ]);
    assert.equal(r.status.sensors?.summary, 'median of 3 (dropped b: not a number)');
  });

  test('with minHealthy 3 the same NaN takes the heater off in that cycle', () => {
    const h = heating(setLoop({ minHealthy: 3 }));
    const nowMs = at(min(1));
    const r = h.cycle({ a: fresh(15, nowMs), b: fresh(Number.NaN, nowMs), c: fresh(16, nowMs) }, nowMs);
    assert.equal(r.wanted.heater, 0);
    assert.equal(condition(r, 'Faulted').reason, 'SensorNotFinite');
    assert.match(condition(r, 'SensorHealthy').message, /b NotFinite: reading is NaN/);
  });
});

describe('each member stale at its own limit: a frozen fast probe beside a slow one', () => {
  /**
   * The heater on a DS18B20 read every 5 s (stale after 15 s) and an MQTT probe reporting every
   * 5 min (stale after 900 s); the loop's staleAfterMs is 900 s, the default (the largest).
   */
  const fastSlow = (): LoopSpec =>
    hysteresisHeaterLoop({
      staleAfterMs: s(900),
      sensorSet: {
        sensors: ['fast', 'slow'],
        combine: 'mean',
        minHealthy: 2,
        staleAfterMs: { fast: s(15), slow: s(900) },
        unit: '°C',
      },
    });

  const stale = at(s(15)) + 1;

  test('given the heater on, when the fast probe freezes, then the heater is off 15 s later, not 15 min', () => {
    const h = new SetHarness(fastSlow());
    const frozen = { fast: fresh(15, at(0)), slow: fresh(15, at(0)) };
    const first = h.cycle(frozen, at(0));
    assert.equal(first.wanted.heater, 1, 'given a cold greenhouse, the heater is on');
    assert.ok(first.nextWakeMs <= stale, 'woken by the time the fast probe goes stale');
    assert.equal(h.cycle(frozen, at(s(15))).wanted.heater, 1, '15 s old: still within its limit');
    const r = h.cycle(frozen, stale);
    assert.equal(r.wanted.heater, 0, 'the frozen probe is stale: 1 of 2 healthy, 2 needed');
    assert.equal(condition(r, 'Faulted').reason, 'SensorStale');
    assert.match(
      condition(r, 'SensorHealthy').message,
      /fast Stale: last reading is 15 s old \(limit 15 s\)/,
    );
  });

  test('the same moment as the loop with the fast probe alone (sensor: fast, stale after 15 s)', () => {
    const alone = hysteresisHeaterLoop({ staleAfterMs: s(15) });
    const cycle = (memory: LoopMemory, actuators: Record<string, ActuatorLevel>, nowMs: number) =>
      reconcile(alone, desired('heat', 20), { reading: fresh(15, at(0)), actuators }, memory, nowMs);
    const first = cycle(initialLoopMemory(), {}, at(0));
    assert.equal(cycle(first.memory, first.wanted, at(s(15))).wanted.heater, 1);
    assert.equal(cycle(first.memory, first.wanted, stale).wanted.heater, 0);
  });
});

describe("the combined reading's time is the newest used one: the PID sees news, the wake-up is per member", () => {
  test('measuredAt is the newest reading used, and the next wake-up is when the first member goes stale', () => {
    const spec = setLoop({ combine: 'mean', minHealthy: 3 });
    const h = heating(spec);
    const nowMs = at(min(4));
    const r = h.cycle({ a: fresh(15, nowMs), b: fresh(15, at(s(30))), c: fresh(15, at(min(3))) }, nowMs);
    assert.equal(r.status.measuredAtMs, nowMs);
    assert.equal(
      r.nextWakeMs,
      at(s(30)) + spec.staleAfterMs + 1,
      "b's staleness (the loop's limit: none of its own)",
    );
  });

  test('at that moment the loop goes safe, though a and c are fresh (minHealthy 3)', () => {
    const spec = setLoop({ combine: 'mean', minHealthy: 3 });
    const h = heating(spec);
    const wakeMs = at(s(30)) + spec.staleAfterMs + 1;
    const r = h.cycle({ a: fresh(15, wakeMs), b: fresh(15, at(s(30))), c: fresh(15, wakeMs) }, wakeMs);
    assert.equal(r.wanted.heater, 0);
    assert.equal(condition(r, 'SensorHealthy').reason, 'Stale');
  });

  test('given a PID on a fast and a slow probe, when only the fast one reports, then the PID steps on it (news)', () => {
    const spec = heaterRelayLoop({
      staleAfterMs: s(900),
      sensorSet: {
        sensors: ['fast', 'slow'],
        combine: 'mean',
        minHealthy: 2,
        staleAfterMs: { fast: s(15), slow: s(900) },
        unit: '°C',
      },
    });
    const h = new SetHarness(spec);
    h.cycle({ fast: fresh(18, at(0)), slow: fresh(18, at(0)) }, at(0));
    const before = h.memory.pid;
    const r = h.cycle({ fast: fresh(16, at(s(10))), slow: fresh(18, at(0)) }, at(s(10)));
    assert.equal(r.memory.pid.lastAtMs, at(s(10)), "the PID's clock moved on with the fast probe");
    assert.notDeepEqual(r.memory.pid, before, 'the PID stepped on the new reading (17, not 18)');
    assert.equal(r.status.measured, 17);
    assert.equal(r.status.measuredAtMs, at(s(10)));
  });
});
