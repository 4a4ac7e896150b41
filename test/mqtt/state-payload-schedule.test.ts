/**
 * The retained state JSON carries the runtime's `schedule` part beside the core's
 * status; a loop without presets, schedule or profiles has none.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ScheduleStatus } from '../../src/core/schedule/effective-desired.js';
import type { LoopStatus } from '../../src/core/status.js';
import { stateFingerprint, statePayload } from '../../src/mqtt/state-payload.js';

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
    stepEndsAt: '2026-12-01T12:00:00.000Z',
    endsAt: '2026-12-06T12:00:00.000Z',
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

describe('state fingerprint: publish on change, not every cycle', () => {
  const withProfile = (stepRemainingS: number, totalRemainingS: number, extra: object = {}) =>
    statePayload({
      ...status,
      schedule: { ...SCHEDULE, profile: { ...SCHEDULE.profile!, stepRemainingS, totalRemainingS, ...extra } },
    });

  test('two payloads a cycle apart that differ only in the seconds left have equal fingerprints', () => {
    const now = withProfile(86_400, 518_400);
    const cycleLater = withProfile(86_395, 518_395);
    assert.notDeepEqual(now, cycleLater, 'the payload still carries the countdown (the dashboard reads it)');
    assert.equal(stateFingerprint(cycleLater), stateFingerprint(now));
  });

  test('a new step, a pause (end times null) or another state is a change', () => {
    const now = stateFingerprint(withProfile(86_400, 518_400));
    assert.notEqual(stateFingerprint(withProfile(86_400, 518_400, { stepIndex: 2 })), now);
    assert.notEqual(
      stateFingerprint(withProfile(86_400, 518_400, { state: 'paused', stepEndsAt: null, endsAt: null })),
      now,
    );
  });

  const sensors = (message: string, distance: number, reason = 'Outlier') =>
    statePayload({
      ...status,
      sensors: {
        combine: 'median',
        used: ['probe-1', 'probe-3'],
        dropped: [{ sensor: 'probe-2', reason: reason as 'Outlier', message, distance }],
        summary: `median of 2 (dropped probe-2: ${Math.round(distance * 100) / 100} °C from the others)`,
      },
    });

  test("a dropped sensor's message (ages, raw values) is left out; its distance counts to hundredths", () => {
    const now = sensors('4.80123 °C from the others, read 12.3 s ago', 4.80123);
    const cycleLater = sensors('4.80456 °C from the others, read 14.1 s ago', 4.80456);
    assert.equal(stateFingerprint(cycleLater), stateFingerprint(now));
    assert.equal((statePayload(status) as { sensors?: unknown }).sensors, undefined);
  });

  test('a sensor dropped for another reason, or further off, is a change', () => {
    const now = stateFingerprint(sensors('a', 4.8));
    assert.notEqual(stateFingerprint(sensors('a', 4.8, 'Stale')), now);
    assert.notEqual(stateFingerprint(sensors('a', 5.3)), now);
  });

  test('the timestamps stay out as before; the setpoint is in', () => {
    const now = statePayload(status);
    assert.equal(
      stateFingerprint({ ...now, updatedAt: 'later', measuredAt: 'later' }),
      stateFingerprint(now),
    );
    assert.notEqual(stateFingerprint({ ...now, setpoint: 20 }), stateFingerprint(now));
  });
});
