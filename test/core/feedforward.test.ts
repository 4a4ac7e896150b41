/** Feedforward from the plant model and from a measured disturbance (feedforward.ts). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { controllerOutput } from '../../src/core/controller-output.js';
import {
  absorbedFeedforward,
  type DisturbanceSpec,
  feedforward,
  leadLagged,
  type PlantModel,
} from '../../src/core/feedforward.js';
import type { LoopSpec } from '../../src/core/loop-spec.js';
import type { LoopMemory } from '../../src/core/loop-state.js';
import { pidInitialMemory } from '../../src/core/pid.js';
import { reconcile } from '../../src/core/reconcile.js';
import type { Reading } from '../../src/core/types.js';
import { at, continuousLoop, desired, Harness, reading, s } from './fixtures.js';

/** A room: settles 20 °C above its ambient of 10 °C at full output, 60 s dead time. */
const ROOM: PlantModel = { gain: 20, ambient: 10, deadTimeS: 60 };
const OUTDOOR: DisturbanceSpec = {
  sensorId: 'outdoor',
  coupling: 1,
  staleAfterMs: s(60),
  plausibleMin: -55,
  plausibleMax: 125,
};

function close(actual: number, expected: number, message: string, tolerance = 1e-9): void {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${message}: ${actual} ≠ ${expected}`);
}

describe('feedforward: the holding output (r − ambient) / gain', () => {
  const cases: Array<{
    name: string;
    spec?: DisturbanceSpec;
    reading?: Reading;
    model?: PlantModel;
    want: number;
    measured: boolean;
  }> = [
    { name: 'model only', want: 0.5, measured: false },
    { name: 'no sensor reading yet', spec: OUTDOOR, want: 0.5, measured: false },
    { name: 'outdoor 0 °C', spec: OUTDOOR, reading: reading(0, at(0)), want: 1, measured: true },
    {
      name: 'coupling ½: half the outdoor change reaches the room',
      spec: { ...OUTDOOR, coupling: 0.5 },
      reading: reading(0, at(0)),
      want: 0.75,
      measured: true,
    },
    {
      name: 'stale (older than staleAfterMs)',
      spec: OUTDOOR,
      reading: reading(0, at(-s(61))),
      want: 0.5,
      measured: false,
    },
    { name: 'just fresh', spec: OUTDOOR, reading: reading(0, at(-s(60))), want: 1, measured: true },
    {
      name: 'implausible (−127 °C)',
      spec: OUTDOOR,
      reading: reading(-127, at(0)),
      want: 0.5,
      measured: false,
    },
    { name: 'not a number', spec: OUTDOOR, reading: reading(Number.NaN, at(0)), want: 0.5, measured: false },
    { name: 'a gain of 0 gives none', model: { gain: 0, ambient: 10 }, want: 0, measured: false },
    // A cooler: the gain is per unit of the signed output (cooling negative), so it is positive
    // too, and a hotter outdoor asks for more cooling, never less (setpoint 20, gain 15).
    {
      name: 'cooler, outdoor 35 °C: output −1 (full cooling)',
      model: { gain: 15, ambient: 10 },
      spec: OUTDOOR,
      reading: reading(35, at(0)),
      want: -1,
      measured: true,
    },
    {
      name: 'cooler, outdoor 50 °C: more cooling than at 35 °C',
      model: { gain: 15, ambient: 10 },
      spec: OUTDOOR,
      reading: reading(50, at(0)),
      want: -2,
      measured: true,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const ff = feedforward(c.model ?? ROOM, c.spec, 20, {
        reading: c.reading,
        atMs: at(0),
        before: undefined,
        dtS: undefined,
      });
      close(ff.value, c.want, 'feedforward');
      assert.equal(ff.disturbance !== undefined, c.measured);
    });
  }
});

describe('leadLagged: the disturbance with a lead of the dead time', () => {
  test('a first reading, a gap and a plant without dead time pass the reading through', () => {
    const before = { used: 10, lagged: 10 };
    assert.deepEqual(leadLagged(60, 5, undefined, 10), { used: 5, lagged: 5 });
    assert.deepEqual(leadLagged(60, 5, before, undefined), { used: 5, lagged: 5 });
    assert.deepEqual(leadLagged(0, 5, before, 10), { used: 5, lagged: 5 });
  });

  test('a step of −5 first counts double, then settles to the reading', () => {
    let memory = { used: 10, lagged: 10 };
    const used: number[] = [];
    for (let i = 0; i < 60; i++) {
      memory = leadLagged(60, 5, memory, 10);
      used.push(memory.used);
    }
    // lag θ/2 = 30 s, dt 10 s: lagged = 10 − 5·10/40 = 8.75, used = 5 + (5 − 8.75).
    close(used[0]!, 1.25, 'first step');
    assert.ok(
      used.every((u, i) => i === 0 || u >= used[i - 1]!),
      'recovers monotonically',
    );
    close(used[59]!, 5, 'settled', 1e-6);
  });
});

describe('absorbedFeedforward: what the integrator takes over', () => {
  const cases: Array<{
    name: string;
    before: [number, number | undefined];
    now: [number, number | undefined];
    want: number;
  }> = [
    {
      name: 'a setpoint change (no sensor): all of it',
      before: [0.5, undefined],
      now: [0.525, undefined],
      want: 0.025,
    },
    { name: 'the sensor appears: all of it', before: [0.5, undefined], now: [0.75, 5], want: 0.25 },
    { name: 'the sensor disappears: all of it', before: [0.75, 5], now: [0.5, undefined], want: -0.25 },
    { name: 'the disturbance moves: none of it', before: [0.5, 10], now: [0.75, 5], want: 0 },
    { name: 'both move: the setpoint part', before: [0.5, 10], now: [0.775, 5], want: 0.025 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const memory = (d: number | undefined) => (d === undefined ? undefined : { used: d, lagged: d });
      const absorbed = absorbedFeedforward(
        ROOM,
        1,
        { value: c.before[0], disturbance: memory(c.before[1]) },
        { value: c.now[0], disturbance: memory(c.now[1]) },
      );
      close(absorbed, c.want, 'absorbed');
    });
  }
});

/** The room as a continuous heating loop, PI, with the model and (optionally) the outdoor sensor. */
function roomLoop(withModel: boolean, disturbance?: DisturbanceSpec): LoopSpec {
  const spec = continuousLoop();
  return {
    ...spec,
    controller: {
      type: 'pid',
      pid: { kp: 0.25, tiS: 480, tdS: 0 },
      ...(withModel ? { model: ROOM } : {}),
      ...(disturbance ? { disturbance } : {}),
    },
  };
}

type ControlMemory = Pick<LoopMemory, 'regulating' | 'pid' | 'hysteresisOn'>;

interface Cycle {
  atS: number;
  measured: number;
  setpoint?: number;
  outdoor?: number;
}

/** Runs the controller step over `cycles`, actuators obeying; returns each output. */
function outputs(spec: LoopSpec, cycles: Cycle[]): number[] {
  let memory: ControlMemory = {
    regulating: false,
    pid: pidInitialMemory(),
    hysteresisOn: { raise: false, lower: false },
  };
  let level = 0;
  return cycles.map((c) => {
    const atMs = at(s(c.atS));
    const result = controllerOutput(
      spec,
      desired('heat', c.setpoint ?? 20),
      {
        reading: reading(c.measured, atMs),
        actuators: { mat: level },
        ...(c.outdoor === undefined ? {} : { disturbance: reading(c.outdoor, atMs) }),
      },
      c.measured,
      memory,
    );
    memory = { regulating: true, pid: result.pid, hysteresisOn: result.hysteresisOn };
    level = result.output;
    return result.output;
  });
}

/** Readings every 10 s; `measured(t)` and the rest per cycle. */
function cycles(count: number, each: (i: number) => Omit<Cycle, 'atS'>): Cycle[] {
  return Array.from({ length: count }, (_, i) => ({ atS: 10 * i, ...each(i) }));
}

describe('controllerOutput with feedforward', () => {
  test('given the static model, a setpoint step 20 → 20.5 gives exactly plain PI (no wind-up past it)', () => {
    const run = cycles(40, (i) => ({ measured: 19.8 + 0.01 * i, setpoint: i < 10 ? 20 : 20.5 }));
    const plain = outputs(roomLoop(false), run);
    const withModel = outputs(roomLoop(true), run);
    for (const [i, u] of withModel.entries()) close(u, plain[i]!, `cycle ${i}`);
  });

  test('given a P-only controller (tiS 0), the model removes the offset: output = kp·e + (r − ambient)/gain', () => {
    const spec = roomLoop(true);
    const pOnly: LoopSpec = {
      ...spec,
      controller: { type: 'pid', pid: { kp: 0.25, tiS: 0, tdS: 0 }, model: ROOM },
    };
    const out = outputs(
      pOnly,
      cycles(3, () => ({ measured: 19.8, setpoint: 20 })),
    );
    close(out[2]!, 0.25 * 0.2 + 0.5, 'output');
  });

  test('when the outdoor sensor appears or disappears, the output does not move', () => {
    const steady = { measured: 19.9 };
    const run = cycles(30, (i) => ({ ...steady, ...(i >= 10 && i < 20 ? { outdoor: 0 } : {}) }));
    const without = outputs(
      roomLoop(true, OUTDOOR),
      cycles(30, () => steady),
    );
    const switched = outputs(roomLoop(true, OUTDOOR), run);
    // Switching on at cycle 10 and off at 20: the same outputs as never having had it.
    for (const [i, u] of switched.entries()) close(u, without[i]!, `cycle ${i}`);
  });

  test('when the outdoor temperature drops 5 °C, the output rises by at least 5 / gain at once', () => {
    const run = cycles(12, (i) => ({ measured: 20, outdoor: i < 10 ? 10 : 5 }));
    const out = outputs(roomLoop(true, OUTDOOR), run);
    assert.ok(out[10]! - out[9]! >= 5 / ROOM.gain, `jump ${out[10]! - out[9]!}`);
  });

  test('when the outdoor reading turns stale, the loop keeps regulating (no fault)', () => {
    const harness = new Harness(roomLoop(true, OUTDOOR), desired('heat', 20));
    for (let i = 0; i < 10; i++) {
      const nowMs = at(s(10 * i));
      // The outdoor sensor's last reading was at 0 s: stale (60 s) from 70 s on.
      const result = reconcileWithOutdoor(harness, nowMs, 19.5, reading(5, at(0)));
      assert.equal(result.memory.latchedFault, undefined, `cycle ${i}`);
      assert.ok((result.wanted.mat ?? 0) > 0, `cycle ${i}: still heating`);
      assert.notEqual(
        result.status.conditions.find((c) => c.type === 'Faulted')?.status,
        'True',
        `cycle ${i}`,
      );
    }
  });
});

function reconcileWithOutdoor(harness: Harness, nowMs: number, value: number, outdoor: Reading) {
  const result = reconcile(
    harness.spec,
    harness.want,
    { reading: reading(value, nowMs), actuators: harness.actuators, disturbance: outdoor },
    harness.memory,
    nowMs,
  );
  harness.memory = result.memory;
  harness.actuators = { ...harness.actuators, ...result.wanted };
  return result;
}
