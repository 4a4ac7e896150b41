import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import { isoTime, toEventView, toLoopView } from '../../src/http/views.js';
import { eventView as eventViewSchema, loopView as loopViewSchema } from '../../src/operations/schemas.js';
import type { LoopDesiredRow } from '../../src/store/desired-store.js';
import { minimalSimConfig } from '../support/config.js';

const T0 = Date.parse('2026-11-30T12:00:00.000Z');
const ROOM = minimalSimConfig().loops.room!;

function status(fields: Partial<LoopStatus> = {}): LoopStatus {
  return {
    loop: 'room',
    quantity: 'temperature',
    mode: 'heat',
    setpoint: 20,
    measured: 19.5,
    measuredAtMs: T0 - 2_000,
    output: 0.4,
    action: 'heating',
    generation: 3,
    observedGeneration: 3,
    actuators: { heater: { wanted: 1, observed: null } },
    conditions: [
      {
        type: 'SensorHealthy',
        status: 'True',
        reason: 'Fresh',
        message: 'reading is fresh',
        lastTransitionMs: T0 - 60_000,
        observedGeneration: 3,
      },
    ],
    updatedAtMs: T0,
    ...fields,
  };
}

function desired(fields: Partial<LoopDesiredRow> = {}): LoopDesiredRow {
  return {
    loop: 'room',
    setpoint: 22,
    setpointSource: 'http',
    mode: 'off',
    modeSource: 'mqtt',
    generation: 4,
    updatedAtMs: T0 + 500,
    ...fields,
  };
}

describe('toLoopView', () => {
  test('given a status and a newer desired state, then the desired setpoint and mode win and the generation runs ahead', () => {
    assert.deepEqual(toLoopView('room', ROOM, status(), desired()), {
      loop: 'room',
      name: 'room',
      quantity: 'temperature',
      unit: '°C',
      limits: { min: 5, max: 30 },
      step: 0.5,
      modes: ['off', 'heat'],
      mode: 'off',
      setpoint: 22,
      measured: 19.5,
      measuredAt: '2026-11-30T11:59:58.000Z',
      output: 0.4,
      action: 'heating',
      generation: 4,
      observedGeneration: 3,
      desired: { setpointSource: 'http', modeSource: 'mqtt' },
      controller: 'pid',
      tuning: { active: 'config' },
      actuators: { heater: { wanted: 1, observed: null } },
      conditions: [
        {
          type: 'SensorHealthy',
          status: 'True',
          reason: 'Fresh',
          message: 'reading is fresh',
          lastTransitionAt: '2026-11-30T11:59:00.000Z',
          observedGeneration: 3,
        },
      ],
      updatedAt: '2026-11-30T12:00:00.000Z',
    });
  });

  const generations: Array<{ desired: number | undefined; status: number | undefined; expected: number }> = [
    { desired: 4, status: 3, expected: 4 },
    { desired: 2, status: 5, expected: 5 },
    { desired: undefined, status: 6, expected: 6 },
    { desired: 7, status: undefined, expected: 7 },
    { desired: undefined, status: undefined, expected: 0 },
  ];
  for (const g of generations) {
    test(`given desired generation ${g.desired} and status generation ${g.status}, then generation ${g.expected}`, () => {
      const view = toLoopView(
        'room',
        ROOM,
        g.status === undefined ? undefined : status({ generation: g.status }),
        g.desired === undefined ? undefined : desired({ generation: g.desired }),
      );
      assert.equal(view.generation, g.expected);
    });
  }

  test('given no desired row, then the last status gives setpoint and mode, sources "file"', () => {
    const view = toLoopView('room', ROOM, status({ setpoint: 18.5, mode: 'off' }), undefined);
    assert.equal(view.setpoint, 18.5);
    assert.equal(view.mode, 'off');
    assert.deepEqual(view.desired, { setpointSource: 'file', modeSource: 'file' });
  });

  test('given no status yet, then the desired state shows and what a cycle measures is null, idle, empty', () => {
    const view = toLoopView('room', ROOM, undefined, desired());
    assert.deepEqual(
      {
        setpoint: view.setpoint,
        mode: view.mode,
        measured: view.measured,
        measuredAt: view.measuredAt,
        updatedAt: view.updatedAt,
        output: view.output,
        action: view.action,
        observedGeneration: view.observedGeneration,
        actuators: view.actuators,
        conditions: view.conditions,
      },
      {
        setpoint: 22,
        mode: 'off',
        measured: null,
        measuredAt: null,
        updatedAt: null,
        output: 0,
        action: 'idle',
        observedGeneration: 0,
        actuators: {},
        conditions: [],
      },
    );
  });

  test('given neither status nor desired row, then the config file setpoint and mode', () => {
    const view = toLoopView('room', ROOM, undefined, undefined);
    assert.equal(view.setpoint, 20);
    assert.equal(view.mode, 'heat');
  });

  test('given a tuning in force and a newer proposal, then tuning names both (active 2, latest 3)', () => {
    const tuning = {
      loop: 'room',
      version: 2,
      createdAtMs: T0,
      source: 'autotune' as const,
      gains: { kp: 1, tiS: 600, tdS: 0 },
    };
    const view = toLoopView('room', ROOM, status(), desired({ tuning, lastTuningVersion: 3 }));
    assert.deepEqual(view.tuning, { active: 2, latest: 3 });
    assert.equal(view.autotune, undefined, 'no autotune since start: absent');
  });

  test('given a start the loop refused and a result it could not store, then the view says both, times ISO', () => {
    const published = {
      ...status(),
      tuning: {
        active: 'config' as const,
        refused: { reason: 'a latched fault holds the loop safe', atMs: T0, generation: 7 },
        unrecorded: 'database is locked',
      },
    };
    const view = toLoopView('room', ROOM, published, desired());
    assert.deepEqual(view.tuning, {
      active: 'config',
      refused: {
        reason: 'a latched fault holds the loop safe',
        at: '2026-11-30T12:00:00.000Z',
        generation: 7,
      },
      unrecorded: 'database is locked',
    });
    assert.equal(loopViewSchema.safeParse(view).success, true);
  });

  test('given a finished autotune on the status, then it is shown with unknown standard errors as null', () => {
    const autotune = {
      phase: 'done' as const,
      side: 'raise' as const,
      cycles: 3,
      cyclesNeeded: 3,
      elapsedMs: 5_400_000,
      remainingMs: 0,
      remainingIsLimit: false,
      noiseSigma: 0.05,
      hysteresis: 0.15,
      result: {
        gain: 20,
        timeConstantS: 3600,
        deadTimeS: 120,
        ambient: 10,
        standardError: { gain: 0.5, timeConstantS: Number.NaN, deadTimeS: 6 },
        rmsResidual: 0.04,
        kp: 0.75,
        tiS: 960,
        tdS: 0,
        closedLoopS: 120,
        band: 0.2,
        windowS: 600,
      },
    };
    const view = toLoopView('room', ROOM, status({ autotune }), undefined);
    assert.deepEqual(view.autotune, {
      ...autotune,
      result: { ...autotune.result, standardError: { gain: 0.5, timeConstantS: null, deadTimeS: 6 } },
    });
    assert.equal(loopViewSchema.safeParse(view).success, true);
    assert.deepEqual(JSON.parse(JSON.stringify(view.autotune)), view.autotune, 'plain JSON');
  });

  test('given a hysteresis loop, then controller says so (the dashboard hides the autotune)', () => {
    const hysteresis = {
      ...ROOM,
      controller: { type: 'hysteresis' as const, coldTolerance: 0.3, hotTolerance: 0.3 },
    };
    assert.equal(toLoopView('room', hysteresis, undefined, undefined).controller, 'hysteresis');
  });

  test('given a status whose reading is missing, then measured and measuredAt are null', () => {
    const view = toLoopView(
      'room',
      ROOM,
      status({ measured: undefined, measuredAtMs: undefined }),
      undefined,
    );
    assert.equal(view.measured, null);
    assert.equal(view.measuredAt, null);
  });

  test('given any of the above, then the view parses as the API Loop schema', () => {
    for (const view of [
      toLoopView('room', ROOM, status(), desired()),
      toLoopView('room', ROOM, undefined, undefined),
      toLoopView('room', ROOM, status({ measured: undefined, measuredAtMs: undefined }), undefined),
    ]) {
      assert.deepEqual(loopViewSchema.parse(view), view);
    }
  });

  test('given the view, when the status actuators are changed later, then the view keeps its own copy', () => {
    const last = status();
    const view = toLoopView('room', ROOM, last, undefined);
    last.actuators.fan = { wanted: 0, observed: 0 };
    assert.deepEqual(Object.keys(view.actuators), ['heater']);
  });
});

describe('toEventView', () => {
  test('given a full event, then at is ISO and every field is kept', () => {
    const event = {
      atMs: T0,
      loop: 'room',
      kind: 'setpoint-changed',
      source: 'http',
      message: 'setpoint 22',
      data: { from: 20, to: 22 },
    };
    assert.deepEqual(toEventView(event), {
      at: '2026-11-30T12:00:00.000Z',
      loop: 'room',
      kind: 'setpoint-changed',
      source: 'http',
      message: 'setpoint 22',
      data: { from: 20, to: 22 },
    });
  });

  test('given a node-wide event without source or data, then loop and source are null and data is absent', () => {
    const view = toEventView({ atMs: T0, kind: 'storage', message: 'database degraded' });
    assert.deepEqual(view, {
      at: '2026-11-30T12:00:00.000Z',
      loop: null,
      kind: 'storage',
      source: null,
      message: 'database degraded',
    });
    assert.equal(Object.hasOwn(view, 'data'), false);
    assert.deepEqual(eventViewSchema.parse(view), view);
  });

  test('isoTime: clock ms to ISO 8601 UTC with milliseconds', () => {
    assert.equal(isoTime(0), '1970-01-01T00:00:00.000Z');
    assert.equal(isoTime(T0 + 7), '2026-11-30T12:00:00.007Z');
  });
});

describe('toLoopView: presets, profiles and the schedule part', () => {
  const config = minimalSimConfig({
    loopExtra: `    presets: { eco: { setpoint: 17 } }
    profiles: { ale: { steps: [{ holdS: 60, setpoint: 18 }] } }`,
  }).loops.room!;
  const schedule = {
    source: 'preset' as const,
    preset: 'eco',
    next: [],
  };

  test('given a loop with presets and profiles, then their names and the schedule part, valid for the schema', () => {
    const view = toLoopView(
      'room',
      config,
      { ...status({ setpoint: 17, generation: 4, observedGeneration: 4 }), schedule } as LoopStatus,
      desired({ setpoint: 22, mode: 'heat', generation: 4 }),
    );
    assert.deepEqual(view.presets, ['eco']);
    assert.deepEqual(view.profiles, ['ale']);
    assert.deepEqual(view.schedule, schedule);
    assert.equal(view.setpoint, 17, 'the setpoint in force once the loop acted on the latest desired state');
    assert.equal(loopViewSchema.safeParse(view).success, true);
  });

  test('a desired change the loop has not acted on yet shows the stored setpoint', () => {
    const view = toLoopView(
      'room',
      config,
      { ...status({ setpoint: 17, generation: 4, observedGeneration: 4 }), schedule } as LoopStatus,
      desired({ setpoint: 22, mode: 'heat', generation: 5 }),
    );
    assert.equal(view.setpoint, 22);
  });

  test('a loop without any: no presets, profiles or schedule keys', () => {
    const view = toLoopView('room', ROOM, status(), desired());
    assert.equal('presets' in view, false);
    assert.equal('profiles' in view, false);
    assert.equal('schedule' in view, false);
  });
});

describe('toLoopView: several sensors', () => {
  test('given a status with a sensor set, then the view carries it, valid for the schema', () => {
    const sensors = {
      combine: 'median' as const,
      used: ['a', 'c'],
      dropped: [
        { sensor: 'b', reason: 'Stale' as const, message: 'last reading is 400 s old (limit 300 s)' },
      ],
      summary: 'median of 2 (dropped b: stale)',
    };
    const view = toLoopView('room', ROOM, { ...status(), sensors }, desired());
    assert.deepEqual(view.sensors, sensors);
    assert.equal(loopViewSchema.safeParse(view).success, true);
  });

  test('a loop with one sensor: no sensors key', () => {
    assert.equal('sensors' in toLoopView('room', ROOM, status(), desired()), false);
  });
});
