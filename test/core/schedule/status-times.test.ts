/**
 * The `schedule` status part (core/schedule/effective-desired.ts) never throws on times that are not
 * dates (manualHoldS or a hold of 1e13 s made every cycle throw "Invalid
 * time value" in the status builder), and carries a profile's stable end times.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { effectiveDesired, type ScheduleConfig } from '../../../src/core/schedule/effective-desired.js';

const NOW = Date.UTC(2026, 10, 30, 12);
const H = 3_600_000;
const D = 24 * H;

describe('the status builder with durations beyond the cap (config not validated)', () => {
  test('manualHoldS 1e13: a manual change holds, heldUntil is left out, nothing throws', () => {
    const config: ScheduleConfig = {
      schedule: {
        weekly: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], at: '06:00', setpoint: 18 }],
        manualHoldS: 1e13,
      },
    };
    const result = effectiveDesired({ setpoint: 21, mode: 'heat', changedAtMs: NOW - H }, config, 'UTC', NOW);
    assert.equal(result.setpoint, 21);
    assert.equal(result.schedule?.source, 'manual');
    assert.equal(result.schedule?.heldUntil, undefined);
    assert.deepEqual(result.schedule?.next, [], 'no usable time to announce');
    assert.equal(result.nextChangeAtMs, undefined, 'nothing to wake for');
  });

  test('a hold of 1e13 s: the profile runs, its end time is null, later steps are not announced', () => {
    const config: ScheduleConfig = {
      profiles: {
        long: {
          steps: [
            { holdS: 1e13, setpoint: 18 },
            { holdS: 60, setpoint: 20 },
          ],
        },
      },
    };
    const row = {
      setpoint: 21,
      mode: 'heat' as const,
      profileRun: { name: 'long', startedAtMs: NOW - H, pausedTotalMs: 0 },
    };
    const result = effectiveDesired(row, config, 'UTC', NOW);
    assert.equal(result.setpoint, 18);
    assert.equal(result.schedule?.profile?.stepEndsAt, null);
    assert.equal(result.schedule?.profile?.endsAt, null);
    assert.deepEqual(result.schedule?.next, []);
  });
});

describe('end times of a profile', () => {
  const config: ScheduleConfig = {
    profiles: {
      ale: {
        steps: [
          { holdS: 4 * 86_400, setpoint: 18 },
          { rampS: 2 * 86_400, to: 21 },
        ],
      },
    },
  };
  test('running: the step and the profile end as ISO times, the same a cycle later', () => {
    const row = {
      setpoint: 20,
      mode: 'heat' as const,
      profileRun: { name: 'ale', startedAtMs: NOW, pausedTotalMs: 0 },
    };
    const now = effectiveDesired(row, config, 'UTC', NOW + H).schedule!.profile!;
    const later = effectiveDesired(row, config, 'UTC', NOW + H + 5_000).schedule!.profile!;
    assert.equal(now.stepEndsAt, new Date(NOW + 4 * D).toISOString());
    assert.equal(now.endsAt, new Date(NOW + 6 * D).toISOString());
    assert.deepEqual([later.stepEndsAt, later.endsAt], [now.stepEndsAt, now.endsAt]);
    assert.equal(now.stepRemainingS - later.stepRemainingS, 5, 'the countdown is still there');
  });

  test('paused: the end times are null', () => {
    const row = {
      setpoint: 20,
      mode: 'heat' as const,
      profileRun: { name: 'ale', startedAtMs: NOW, pausedAtMs: NOW + H, pausedTotalMs: 0 },
    };
    const profile = effectiveDesired(row, config, 'UTC', NOW + 2 * H).schedule!.profile!;
    assert.deepEqual([profile.state, profile.stepEndsAt, profile.endsAt], ['paused', null, null]);
  });
});
