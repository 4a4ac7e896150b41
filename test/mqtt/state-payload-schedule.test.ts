/**
 * The retained state JSON carries the runtime's `schedule` part (issue 13) beside the core's
 * status; a loop without presets, schedule or profiles has none.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LoopStatus } from '../../src/core/status.js';
import { statePayload } from '../../src/mqtt/state-payload.js';
import type { ScheduleStatus } from '../../src/runtime/effective-desired.js';

const T0 = Date.UTC(2026, 10, 30, 12);

const status: LoopStatus = {
  loop: 'fermenter',
  quantity: 'temperature',
  mode: 'heat',
  setpoint: 19.5,
  measured: 19.4,
  measuredAtMs: T0,
  output: 0.25,
  action: 'heating',
  generation: 4,
  observedGeneration: 4,
  actuators: {},
  conditions: [],
  updatedAtMs: T0,
};

const SCHEDULE: ScheduleStatus = {
  source: 'profile',
  preset: null,
  heldUntil: '2026-11-30T13:00:00.000Z',
  profile: {
    name: 'ale',
    state: 'running',
    stepIndex: 1,
    stepCount: 4,
    stepKind: 'ramp',
    stepRemainingS: 86_400,
    totalRemainingS: 518_400,
  },
  next: [{ at: '2026-12-01T12:00:00.000Z', setpoint: 21, mode: 'heat', source: 'profile' }],
};

describe('state payload: schedule', () => {
  test('given a schedule part, then the state JSON has it as it is', () => {
    assert.deepEqual(statePayload({ ...status, schedule: SCHEDULE }).schedule, SCHEDULE);
  });

  test('a loop without one has no schedule key', () => {
    assert.equal('schedule' in statePayload(status), false);
  });
});

describe('state payload: several sensors', () => {
  const SENSORS: NonNullable<LoopStatus['sensors']> = {
    combine: 'median',
    used: ['probe-1', 'probe-3'],
    dropped: [{ sensor: 'probe-2', reason: 'Outlier', message: '4.8 °C from the others', distance: 4.8 }],
    summary: 'median of 2 (dropped probe-2: 4.8 °C from the others)',
  };

  test('given a loop with several sensors, then the state JSON says which were used and dropped', () => {
    assert.deepEqual(statePayload({ ...status, sensors: SENSORS }).sensors, SENSORS);
  });

  test('a loop with one sensor has no sensors key', () => {
    assert.equal('sensors' in statePayload(status), false);
  });
});
