import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  effectiveDesired,
  hasSchedule,
  type ScheduleConfig,
} from '../../../src/core/schedule/effective-desired.js';

// Monday 2026-03-02 in Berlin (UTC+1): 07:00 local is 06:00 UTC.
const MON_0700_BERLIN = Date.UTC(2026, 2, 2, 6, 0);
const HOUR = 3_600_000;

const CONFIG: ScheduleConfig = {
  presets: { eco: { setpoint: 17 }, comfort: { setpoint: 21.5 } },
  schedule: {
    weekly: [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], at: '06:30', preset: 'comfort' },
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], at: '22:30', setpoint: 18 },
    ],
  },
  profiles: {
    ale: {
      steps: [
        { holdS: 4 * 86_400, setpoint: 18 },
        { rampS: 2 * 86_400, to: 21 },
      ],
    },
  },
};

describe('effectiveDesired: the stored row, the loop config and now → what reconcile gets', () => {
  test('a loop without presets, schedule or profiles: the stored values, no schedule part', () => {
    const result = effectiveDesired({ setpoint: 20, mode: 'heat' }, {}, 'Europe/Berlin', MON_0700_BERLIN);
    assert.deepEqual(result, { setpoint: 20, mode: 'heat' });
    assert.equal(hasSchedule({}), false);
    assert.equal(hasSchedule({ presets: {} }), false);
  });

  test('the weekly schedule in force in the node zone, with the next change as ISO', () => {
    const result = effectiveDesired({ setpoint: 20, mode: 'heat' }, CONFIG, 'Europe/Berlin', MON_0700_BERLIN);
    assert.equal(result.setpoint, 21.5);
    assert.equal(result.mode, 'heat');
    assert.deepEqual(result.schedule?.source, 'schedule');
    assert.equal(result.schedule?.preset, 'comfort');
    assert.deepEqual(result.schedule?.next[0], {
      at: '2026-03-02T21:30:00.000Z', // 22:30 Berlin
      setpoint: 18,
      mode: 'heat',
      source: 'schedule',
    });
    assert.equal(result.nextChangeAtMs, Date.UTC(2026, 2, 2, 21, 30));
  });

  test('the same instant in another zone is another local time: New York 01:00 Monday → Friday 22:30 entry', () => {
    const result = effectiveDesired(
      { setpoint: 20, mode: 'heat' },
      CONFIG,
      'America/New_York',
      MON_0700_BERLIN,
    );
    assert.equal(result.setpoint, 18);
  });

  test('a manual change after the latest point holds until the next one (heldUntil)', () => {
    const row = { setpoint: 19, mode: 'heat' as const, changedAtMs: MON_0700_BERLIN - 60_000 };
    const result = effectiveDesired(row, CONFIG, 'Europe/Berlin', MON_0700_BERLIN);
    assert.equal(result.setpoint, 19);
    assert.equal(result.schedule?.source, 'manual');
    assert.equal(result.schedule?.heldUntil, '2026-03-02T21:30:00.000Z');
  });

  test('a stored row without a stamp (before schema 7) never overrides', () => {
    const result = effectiveDesired({ setpoint: 19, mode: 'heat' }, CONFIG, 'Europe/Berlin', MON_0700_BERLIN);
    assert.equal(result.schedule?.source, 'schedule');
  });

  test('a running profile wins, with its progress in seconds and its name', () => {
    const row = {
      setpoint: 20,
      mode: 'heat' as const,
      profileRun: { name: 'ale', startedAtMs: MON_0700_BERLIN - 5 * 24 * HOUR, pausedTotalMs: 0 },
    };
    const result = effectiveDesired(row, CONFIG, 'Europe/Berlin', MON_0700_BERLIN);
    assert.equal(result.setpoint, 19.5, 'half way up the ramp 18 → 21');
    assert.deepEqual(result.schedule?.profile, {
      name: 'ale',
      state: 'running',
      stepIndex: 1,
      stepCount: 2,
      stepKind: 'ramp',
      stepRemainingS: 86_400,
      totalRemainingS: 86_400,
      stepEndsAt: '2026-03-03T06:00:00.000Z',
      endsAt: '2026-03-03T06:00:00.000Z',
    });
    assert.equal(result.schedule?.source, 'profile');
  });

  test('a run whose profile left the config is not followed: the schedule is in force', () => {
    const row = {
      setpoint: 20,
      mode: 'heat' as const,
      profileRun: { name: 'gone', startedAtMs: MON_0700_BERLIN - HOUR, pausedTotalMs: 0 },
    };
    const result = effectiveDesired(row, CONFIG, 'Europe/Berlin', MON_0700_BERLIN);
    assert.equal(result.schedule?.source, 'schedule');
    assert.equal(result.schedule?.profile, undefined);
  });

  test('presets only: the selected preset gives its current value (an edited preset applies at once)', () => {
    const result = effectiveDesired(
      { setpoint: 17, mode: 'heat', preset: 'eco', changedAtMs: 0 },
      { presets: { eco: { setpoint: 16 } } },
      'UTC',
      MON_0700_BERLIN,
    );
    assert.deepEqual(
      { setpoint: result.setpoint, source: result.schedule?.source, preset: result.schedule?.preset },
      { setpoint: 16, source: 'preset', preset: 'eco' },
    );
    assert.deepEqual(result.schedule?.next, []);
  });
});
