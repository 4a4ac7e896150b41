/**
 * The safety monitors on simulated plants (FOPDT, src/drivers/sim/plant.ts), over simulated
 * days: no false trip in normal operation with disturbances, and each injected fault latched,
 * with the simulated time from the fault to the safe state printed as a figure.
 *
 *   node --import tsx --test test/core/safety-monitors-plant.test.ts
 *
 * Also shows why the stuck watch is off by default: on a room the sun warms, it trips daily.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import { initialLoopMemory, reconcile } from '../../src/core/reconcile.js';
import { FopdtPlant, type PlantParams } from '../../src/drivers/sim/plant.js';
import { at, desired, min, relay, s, T0 } from './fixtures.js';

const HOUR_S = 3600;
const DAY_S = 24 * HOUR_S;

type Fault = 'welded' | 'probe-out' | 'heater-dead';

interface Run {
  /** Latched faults, in order, with when (s after T0). */
  trips: Array<{ reason: string; atS: number }>;
  /** The heater's commanded level at the end. */
  finalHeater: number;
  maxValue: number;
}

/**
 * Drives a heater-only loop on a plant for `days`, a reading every `stepS`; without an injected
 * fault, each latch is reset an hour later (a person who looks; a false trip counts per episode).
 */
function run(
  spec: LoopSpec,
  setpoint: number,
  plant: PlantParams,
  gain: number,
  days: number,
  fault?: { kind: Fault; atS: number },
): Run {
  const stepS = 30;
  const sim = new FopdtPlant(plant, T0);
  sim.addInput('heater', gain);
  let memory = initialLoopMemory();
  let heater = 0;
  let maxValue = Number.NEGATIVE_INFINITY;
  const trips: Run['trips'] = [];
  let resetAtS: number | undefined;
  for (let tS = 0; tS <= days * DAY_S; tS += stepS) {
    const nowMs = at(s(tS));
    const faulty = fault !== undefined && tS >= fault.atS;
    if (faulty && fault.kind === 'heater-dead') sim.setInputGain('heater', 0);
    const plantValue = sim.valueAt(nowMs);
    maxValue = Math.max(maxValue, plantValue);
    // A probe out of the kettle reads the room.
    const value = faulty && fault.kind === 'probe-out' ? plant.ambient : plantValue;
    if (resetAtS !== undefined && tS >= resetAtS && memory.latchedFault) {
      const { latchedFault: _reset, ...rest } = memory;
      memory = rest;
      resetAtS = undefined;
    }
    const result = reconcile(
      spec,
      desired('heat', setpoint),
      { reading: { value, atMs: nowMs }, actuators: { heater } },
      memory,
      nowMs,
    );
    if (result.memory.latchedFault && !memory.latchedFault) {
      trips.push({ reason: result.memory.latchedFault.reason, atS: tS });
      // Reset an hour later in normal runs (count each false-trip episode); an injected fault
      // stays latched, so maxValue shows the overshoot the latch allowed.
      if (fault === undefined) resetAtS = tS + HOUR_S;
    }
    memory = result.memory;
    heater = result.wanted.heater ?? 0;
    sim.setInput('heater', faulty && fault.kind === 'welded' ? 1 : heater, nowMs);
  }
  return { trips, finalHeater: heater, maxValue };
}

/** A 10-litre kettle (mash tun) on a 2 kW element: full power would settle it 80 °C above 20 °C. */
const KETTLE_PLANT: PlantParams = {
  ambient: 20,
  timeConstantS: 1800,
  deadTimeS: 30,
  // The lid comes off for 10 minutes every 6 hours (a stir, a grain addition): 15 °C of loss.
  disturbances: Array.from({ length: 28 }, (_, i) => ({
    atS: 3 * HOUR_S + i * 6 * HOUR_S,
    offset: -15,
    durationS: 600,
  })),
};
const KETTLE_SETPOINT = 65;
function kettleSpec(): LoopSpec {
  return {
    id: 'kettle',
    quantity: 'temperature',
    // SIMC from K 80, τ 1800 s, θ 30 s: kp = τ/(K·2θ) ≈ 0.375, tiS = min(τ, 8θ) = 240.
    controller: { type: 'pid', pid: { kp: 0.375, tiS: 240, tdS: 0 } },
    raise: { ...relay('heater', { windowMs: s(120) }), maxOnMs: min(60) },
    staleAfterMs: min(5),
    plausibleMin: -20,
    plausibleMax: 125,
    deadband: 0,
    changeoverMs: 0,
    keepAliveMs: min(5),
    retryInitialMs: s(10),
    convergedBand: 0.5,
    cutoff: { max: 75 },
    stuckWatch: { periodMs: s(1800), minChange: 2 },
    runawayWatch: { band: 2, periodMs: s(1800) },
  };
}

/** A greenhouse at 8 °C in winter: 0 °C outside, the sun adds 40 °C from 10:00 to 16:00. */
const GREENHOUSE_PLANT: PlantParams = {
  ambient: 0,
  timeConstantS: 3600,
  deadTimeS: 120,
  disturbances: Array.from({ length: 7 }, (_, day) => ({
    atS: day * DAY_S + 10 * HOUR_S,
    offset: 40,
    durationS: 6 * HOUR_S,
  })),
};
function greenhouseSpec(overrides: Partial<LoopSpec>): LoopSpec {
  return {
    ...kettleSpec(),
    id: 'greenhouse',
    controller: { type: 'pid', pid: { kp: 0.3, tiS: 1800, tdS: 0 } },
    raise: relay('heater'),
    cutoff: { max: 35 },
    ...overrides,
  };
}

const figures: string[] = [];

describe('safety monitors on simulated plants', () => {
  test('a kettle held at 65 °C for 7 days, the lid off every 6 h: no monitor trips', () => {
    const result = run(kettleSpec(), KETTLE_SETPOINT, KETTLE_PLANT, 80, 7);
    figures.push(
      `kettle, normal, 7 days: ${result.trips.length} trips, max ${result.maxValue.toFixed(1)} °C`,
    );
    assert.deepEqual(result.trips, []);
  });

  const faults: Array<[fault: Fault, reason: string, withinS: number]> = [
    // The element keeps heating whatever the command: caught once the value is 2 °C past the
    // setpoint and 2 °C above its lowest since the heater was commanded off, 30 min after off.
    ['welded', 'StuckOn', 2 * HOUR_S],
    // The probe reads the room: full output, far below the setpoint after converging.
    ['probe-out', 'Runaway', 1 * HOUR_S],
    // The element died: the kettle cools at full output.
    ['heater-dead', 'Runaway', 2 * HOUR_S],
  ];
  for (const [kind, reason, withinS] of faults) {
    test(`a kettle whose fault is "${kind}" latches ${reason} within ${withinS / 60} min`, () => {
      const faultAtS = 26 * HOUR_S;
      const result = run(kettleSpec(), KETTLE_SETPOINT, KETTLE_PLANT, 80, 2, { kind, atS: faultAtS });
      const first = result.trips[0];
      assert.ok(first, 'latched');
      assert.equal(first.reason, reason);
      const delayS = first.atS - faultAtS;
      figures.push(
        `kettle, ${kind} at 26 h: ${first.reason} after ${Math.round(delayS / 60)} min, max ${result.maxValue.toFixed(1)} °C`,
      );
      assert.ok(delayS >= 0 && delayS <= withinS, `latched ${delayS} s after the fault`);
    });
  }

  test('a kettle with a 10 min runaway period: the probe out latches in 10 min, and stays 7 days without a false trip', () => {
    const fast = { ...kettleSpec(), runawayWatch: { band: 2, periodMs: min(10) } };
    const normal = run(fast, KETTLE_SETPOINT, KETTLE_PLANT, 80, 7);
    const probeOut = run(fast, KETTLE_SETPOINT, KETTLE_PLANT, 80, 2, { kind: 'probe-out', atS: 26 * HOUR_S });
    const first = probeOut.trips[0];
    figures.push(
      `kettle, runaway periodS 600: normal 7 days ${normal.trips.length} trips; probe-out: ${first?.reason} after ${Math.round(((first?.atS ?? 0) - 26 * HOUR_S) / 60)} min, max ${probeOut.maxValue.toFixed(1)} °C`,
    );
    assert.deepEqual(normal.trips, []);
    assert.equal(first?.reason, 'Runaway');
  });

  test('a greenhouse in the sun (up to 40 °C, heater off): the cut-off (35 °C) and runaway watch never trip; the stuck watch would, which is why it is off by default', () => {
    const guarded = run(greenhouseSpec({ stuckWatch: undefined }), 8, GREENHOUSE_PLANT, 20, 7);
    const stuck = run(greenhouseSpec({}), 8, GREENHOUSE_PLANT, 20, 7);
    figures.push(
      `greenhouse, 7 sunny days (max ${guarded.maxValue.toFixed(1)} °C): cut-off + runaway ${guarded.trips.length} trips; with the stuck watch ${stuck.trips.length} (${[...new Set(stuck.trips.map((t) => t.reason))].join(', ')})`,
    );
    assert.deepEqual(guarded.trips, []);
    assert.ok(stuck.trips.length >= 7, 'a daily false StuckOn: the reason it is opt-in');
    console.log(figures.join('\n'));
  });
});
