import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  pauseProfileRun,
  profilePosition,
  rebaseProfileRun,
  resumeProfileRun,
  startProfileRun,
} from '../../../src/core/schedule/profile.js';
import type { Profile } from '../../../src/core/schedule/types.js';
import { ale, D, H } from './fixtures.js';

const S = Date.UTC(2026, 4, 1, 12); // the profile's start

describe('a running profile: holds, linear ramps and progress', () => {
  test('the end times are the same a cycle later (the remaining times are not)', () => {
    const run = startProfileRun(S);
    const now = profilePosition(ale, run, S + D)!.status;
    const later = profilePosition(ale, run, S + D + 1_000)!.status;
    assert.deepEqual([later.stepEndsAtMs, later.endsAtMs], [now.stepEndsAtMs, now.endsAtMs]);
    assert.notEqual(later.stepRemainingMs, now.stepRemainingMs);
  });

  const run = startProfileRun(S);
  const cases = [
    // elapsed, step, kind, setpoint, step left, total left, state
    [0, 0, 'hold', 18, 4 * D, 11 * D, 'running'],
    [4 * D - H, 0, 'hold', 18, H, 7 * D + H, 'running'],
    [4 * D, 1, 'ramp', 18, 2 * D, 7 * D, 'running'],
    [5 * D, 1, 'ramp', 19.5, D, 6 * D, 'running'],
    [5.5 * D, 1, 'ramp', 20.25, 0.5 * D, 5.5 * D, 'running'],
    [6 * D, 2, 'hold', 21, 3 * D, 5 * D, 'running'],
    [9 * D, 3, 'hold', 2, 2 * D, 2 * D, 'running'],
    [11 * D, 3, 'hold', 2, 0, 0, 'finished'],
    [30 * D, 3, 'hold', 2, 0, 0, 'finished'],
  ] as const;
  for (const [elapsedMs, stepIndex, stepKind, setpoint, stepRemainingMs, totalRemainingMs, state] of cases) {
    test(`after ${elapsedMs / H} h: step ${stepIndex} (${stepKind}) at ${setpoint}, ${state}`, () => {
      const position = profilePosition(ale, run, S + elapsedMs)!;
      assert.deepEqual(position.status, {
        stepIndex,
        stepCount: 4,
        stepKind,
        stepRemainingMs,
        totalRemainingMs,
        // Stable end times (the same every cycle while running), for publish-on-change.
        stepEndsAtMs: S + Math.min(elapsedMs + stepRemainingMs, 11 * D), // finished: its end
        endsAtMs: S + 11 * D,
        state,
      });
      assert.equal(position.setpoint, setpoint);
    });
  }

  test('the coming steps with their times and where each goes; none once finished', () => {
    const position = profilePosition(ale, run, S + D)!;
    assert.deepEqual(
      position.upcoming.map((u) => [u.atMs - S, u.setpoint, u.stepKind]),
      [
        [4 * D, 21, 'ramp'],
        [6 * D, 21, 'hold'],
        [9 * D, 2, 'hold'],
      ],
    );
    assert.equal(position.stepStartMs, S);
    assert.deepEqual(profilePosition(ale, run, S + 12 * D)!.upcoming, []);
    assert.equal(
      profilePosition(ale, run, S + 12 * D)!.stepStartMs,
      S + 11 * D,
      'finished: its end is the last point',
    );
  });

  test('a restart mid-profile needs nothing: the stored run and a later now give the right point', () => {
    const stored = JSON.parse(JSON.stringify(run));
    assert.equal(profilePosition(ale, stored, S + 5 * D)!.setpoint, 19.5);
    assert.equal(profilePosition(ale, stored, S + 5 * D)!.status.stepIndex, 1);
  });

  test('a start ahead of now (the clock went back) counts as now: the profile is at its beginning', () => {
    const position = profilePosition(ale, run, S - H)!;
    assert.equal(position.status.stepIndex, 0);
    assert.equal(position.status.totalRemainingMs, 11 * D);
  });
});

describe('pause and resume', () => {
  test('paused, elapsed is frozen: the setpoint it had when paused, the same time left', () => {
    const paused = pauseProfileRun(startProfileRun(S), S + 5 * D);
    for (const nowMs of [S + 5 * D, S + 8 * D, S + 40 * D]) {
      const position = profilePosition(ale, paused, nowMs)!;
      assert.equal(position.setpoint, 19.5);
      assert.equal(position.status.state, 'paused');
      assert.equal(position.status.stepEndsAtMs, undefined, 'paused: no end time (it moves every second)');
      assert.equal(position.status.endsAtMs, undefined);
      assert.equal(position.status.totalRemainingMs, 6 * D);
      assert.deepEqual(position.upcoming, [], 'nothing is due while paused');
    }
  });

  test('resumed, it goes on from where it paused; the pause moves every later boundary', () => {
    const paused = pauseProfileRun(startProfileRun(S), S + D);
    const resumed = resumeProfileRun(paused, S + 3 * D);
    assert.deepEqual(resumed, { startedAtMs: S, pausedTotalMs: 2 * D, resumedAtMs: S + 3 * D });
    assert.equal(profilePosition(ale, resumed, S + 7 * D)!.setpoint, 19.5);
    assert.equal(profilePosition(ale, resumed, S + 3 * D)!.upcoming[0]!.atMs, S + 6 * D);
  });

  test('pausing a paused run or resuming a running one changes nothing', () => {
    const paused = pauseProfileRun(startProfileRun(S), S + D);
    assert.equal(pauseProfileRun(paused, S + 2 * D), paused);
    const running = startProfileRun(S);
    assert.equal(resumeProfileRun(running, S + D), running);
  });
});

describe('clock steps: rebaseProfileRun', () => {
  const run = startProfileRun(S);
  const cases = [
    // real elapsed before the step, clock step, step index expected after
    ['+1 h, 30 min before a boundary: not skipped', 4 * D - 0.5 * H, H, 0],
    ['-1 h, 30 min after a boundary: not repeated', 4 * D + 0.5 * H, -H, 1],
  ] as const;
  for (const [why, elapsedMs, stepMs, stepIndex] of cases) {
    test(why, () => {
      const clockAfterMs = S + elapsedMs + stepMs + 1_000; // one real second later, on the stepped clock
      const before = profilePosition(ale, run, S + elapsedMs)!;
      const after = profilePosition(ale, rebaseProfileRun(run, stepMs), clockAfterMs)!;
      assert.equal(after.status.stepIndex, stepIndex);
      assert.equal(after.status.totalRemainingMs, before.status.totalRemainingMs - 1_000);
      // Without the rebase the same now lands in the other step: the test can tell.
      assert.notEqual(profilePosition(ale, run, clockAfterMs)!.status.stepIndex, stepIndex);
    });
  }

  test('a paused run moves its pause too; a zero or non-finite step changes nothing', () => {
    const paused = pauseProfileRun(run, S + D);
    const moved = rebaseProfileRun(paused, H);
    assert.deepEqual(moved, { startedAtMs: S + H, pausedAtMs: S + D + H, pausedTotalMs: 0 });
    const resumed = resumeProfileRun(paused, S + 2 * D);
    assert.equal(rebaseProfileRun(resumed, -H).resumedAtMs, S + 2 * D - H);
    assert.equal(profilePosition(ale, moved, S + 2 * D + H)!.status.totalRemainingMs, 10 * D);
    assert.equal(rebaseProfileRun(run, 0), run);
    assert.equal(rebaseProfileRun(run, Number.NaN), run);
  });
});

describe('odd profiles give defined results', () => {
  test('a zero-length step is never current and not announced; last in the list, it is the final setpoint', () => {
    const odd: Profile = {
      steps: [
        { holdS: 3600, setpoint: 10 },
        { holdS: 0, setpoint: 5 },
      ],
    };
    const run = startProfileRun(S);
    assert.equal(profilePosition(odd, run, S + 0.5 * H)!.status.stepIndex, 0);
    assert.deepEqual(profilePosition(odd, run, S)!.upcoming, []);
    assert.equal(profilePosition(odd, run, S + H)!.status.state, 'finished');
    assert.equal(profilePosition(odd, run, S + H)!.setpoint, 5);
  });

  test('negative and non-finite durations count as 0', () => {
    const odd: Profile = {
      steps: [
        { holdS: -5, setpoint: 1 },
        { holdS: Number.NaN, setpoint: 2 },
        { holdS: 60, setpoint: 3 },
      ],
    };
    assert.equal(profilePosition(odd, startProfileRun(S), S)!.setpoint, 3);
  });

  test('a ramp with no step before it holds its target', () => {
    const odd: Profile = { steps: [{ rampS: 3600, to: 20 }] };
    assert.equal(profilePosition(odd, startProfileRun(S), S + 0.5 * H)!.setpoint, 20);
  });

  test('no steps, or run times that are not finite: no position', () => {
    assert.equal(profilePosition({ steps: [] }, startProfileRun(S), S), undefined);
    assert.equal(profilePosition(ale, startProfileRun(Number.NaN), S), undefined);
  });
});
