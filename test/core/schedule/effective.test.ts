import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { effectiveSetpoint } from '../../../src/core/schedule/effective.js';
import { withManualSetpoint, withPresetSelected } from '../../../src/core/schedule/manual.js';
import { pauseProfileRun, resumeProfileRun, startProfileRun } from '../../../src/core/schedule/profile.js';
import type { EffectiveInput, ManualBase } from '../../../src/core/schedule/types.js';
import { ale, BERLIN, D, H, home, june, presets } from './fixtures.js';

const base = (changedAtMs: number, extra: Partial<ManualBase> = {}): ManualBase => ({
  setpoint: 23,
  mode: 'heat',
  changedAtMs,
  preset: null,
  ...extra,
});
const withSchedule = (b: ManualBase, manualHoldS?: number): EffectiveInput => ({
  base: b,
  presets,
  weekly: home,
  timeZone: BERLIN,
  ...(manualHoldS === undefined ? {} : { manualHoldS }),
});

describe('the override rule against a weekly schedule (Monday 2026-06-01: 07:00 comfort, 22:30 18 °C)', () => {
  const HOLD_2H = 7_200;
  const cases = [
    // why, changedAt, manualHoldS, now, setpoint, source, heldUntil
    [
      'a change before the latest point is over: the schedule',
      june(1, 6),
      undefined,
      june(1, 8),
      21.5,
      'schedule',
      undefined,
    ],
    [
      'a change after the latest point holds…',
      june(1, 8),
      undefined,
      june(1, 9),
      23,
      'manual',
      june(1, 22, 30),
    ],
    ['…until the next point, exactly', june(1, 8), undefined, june(1, 22, 30), 18, 'schedule', undefined],
    [
      'a change at the very instant of a point does not override it',
      june(1, 7),
      undefined,
      june(1, 8),
      21.5,
      'schedule',
      undefined,
    ],
    [
      'with manualHoldS: held for exactly that long…',
      june(1, 8),
      HOLD_2H,
      june(1, 9, 59),
      23,
      'manual',
      june(1, 10),
    ],
    ['…then the schedule', june(1, 8), HOLD_2H, june(1, 10), 21.5, 'schedule', undefined],
    [
      'with manualHoldS: a point passing meanwhile does not end it',
      june(1, 22),
      HOLD_2H,
      june(1, 23),
      23,
      'manual',
      june(2, 0),
    ],
    [
      'with manualHoldS: a change before a point still holds across it',
      june(1, 6),
      HOLD_2H,
      june(1, 7, 30),
      23,
      'manual',
      june(1, 8),
    ],
  ] as const;
  for (const [why, changedAtMs, manualHoldS, nowMs, setpoint, source, heldUntilMs] of cases) {
    test(why, () => {
      const result = effectiveSetpoint(withSchedule(base(changedAtMs), manualHoldS), nowMs);
      assert.equal(result.setpoint, setpoint);
      assert.equal(result.source, source);
      assert.equal(result.heldUntilMs, heldUntilMs);
    });
  }

  test('one rule whatever the source: a setpoint and a preset selection from any client hold alike', () => {
    const start = base(june(1, 6));
    const bySetpoint = withManualSetpoint(start, 19, june(1, 8));
    const byPreset = withPresetSelected(start, 'eco', presets, june(1, 8)) as ManualBase;
    // What a client adds to its request (its name) is not part of the rule.
    const fromHa = { ...bySetpoint, source: 'homeassistant' } as ManualBase;
    const at9 = (b: ManualBase) => effectiveSetpoint(withSchedule(b), june(1, 9));
    assert.deepEqual(at9(fromHa), at9(bySetpoint));
    assert.equal(at9(bySetpoint).heldUntilMs, june(1, 22, 30));
    assert.equal(at9(byPreset).heldUntilMs, june(1, 22, 30));
    assert.deepEqual(
      [at9(byPreset).source, at9(byPreset).preset, at9(byPreset).setpoint],
      ['preset', 'eco', 17],
    );
  });

  test('a change stamped ahead of now (the clock went back) counts as made now: it holds', () => {
    const result = effectiveSetpoint(withSchedule(base(june(1, 12))), june(1, 9));
    assert.equal(result.source, 'manual');
  });
});

describe('presets chosen by hand', () => {
  test('a manual setpoint change clears the preset', () => {
    const onEco = withPresetSelected(base(0), 'eco', presets, june(1, 8)) as ManualBase;
    assert.equal(onEco.preset, 'eco');
    const changed = withManualSetpoint(onEco, 20, june(1, 9));
    assert.deepEqual(changed, { ...onEco, setpoint: 20, preset: null, changedAtMs: june(1, 9) });
    const result = effectiveSetpoint({ base: changed, presets, timeZone: BERLIN }, june(1, 10));
    assert.deepEqual([result.setpoint, result.source, result.preset], [20, 'manual', null]);
  });

  test('selecting a preset takes its setpoint and mode; an unknown one is refused with a message', () => {
    const onEco = withPresetSelected(base(0, { mode: 'cool' }), 'eco', presets, june(1, 8)) as ManualBase;
    assert.deepEqual([onEco.setpoint, onEco.mode], [17, 'heat']);
    assert.deepEqual(withPresetSelected(base(0), 'ecco', presets, june(1, 8)), {
      error: 'unknown preset "ecco" (known: comfort, eco)',
    });
  });

  test('a preset removed from the config: the stored setpoint, shown as no preset', () => {
    const result = effectiveSetpoint(
      { base: base(0, { preset: 'gone' }), presets, timeZone: BERLIN },
      june(1, 8),
    );
    assert.deepEqual([result.setpoint, result.source, result.preset], [23, 'manual', null]);
  });
});

describe('precedence: profile > weekly schedule > manual base', () => {
  const S = june(1, 12);
  const all = (run: EffectiveInput['run'], b = base(S - D)): EffectiveInput => ({
    ...withSchedule(b),
    profile: ale,
    ...(run === undefined ? {} : { run }),
  });
  const cases = [
    [
      'a running profile wins over the schedule',
      all(startProfileRun(S)),
      S + 5 * D,
      19.5,
      'profile',
      'running',
    ],
    [
      'a paused profile holds the setpoint it had when paused',
      all(pauseProfileRun(startProfileRun(S), S + 5 * D)),
      S + 6 * D,
      19.5,
      'profile',
      'paused',
    ],
    [
      'a finished profile holds its last setpoint until stopped',
      all(startProfileRun(S)),
      S + 20 * D,
      2,
      'profile',
      'finished',
    ],
    ['stopped (no run): the schedule', all(undefined), june(1, 13), 21.5, 'schedule', undefined],
    [
      'no schedule, no profile: the base',
      { base: base(0), timeZone: BERLIN },
      june(1, 13),
      23,
      'manual',
      undefined,
    ],
  ] as const;
  for (const [why, input, nowMs, setpoint, source, state] of cases) {
    test(why, () => {
      const result = effectiveSetpoint(input, nowMs);
      assert.deepEqual([result.setpoint, result.source, result.profile?.state], [setpoint, source, state]);
    });
  }

  test('a manual change during a profile step holds until the step boundary; progress stays reported', () => {
    const result = effectiveSetpoint(all(startProfileRun(S), base(S + D)), S + 2 * D);
    assert.deepEqual([result.setpoint, result.source, result.heldUntilMs], [23, 'manual', S + 4 * D]);
    assert.equal(result.profile?.stepIndex, 0);
    assert.equal(effectiveSetpoint(all(startProfileRun(S), base(S + D)), S + 4 * D).source, 'profile');
  });

  test('a profile started after a manual change wins at once, even with manualHoldS', () => {
    const input = { ...all(startProfileRun(S), base(S - H)), manualHoldS: 86_400 };
    assert.equal(effectiveSetpoint(input, S + H).source, 'profile');
  });

  test('a manual change while paused holds with no end to announce (none is due)', () => {
    const paused = pauseProfileRun(startProfileRun(S), S + D);
    const result = effectiveSetpoint(all(paused, base(S + 2 * D)), S + 3 * D);
    assert.deepEqual([result.source, result.heldUntilMs, result.next], ['manual', undefined, []]);
  });

  test('resuming puts the profile in force over a change made before; a change after the resume holds to the boundary', () => {
    const paused = pauseProfileRun(startProfileRun(S), S + D);
    const resumed = resumeProfileRun(paused, S + 2 * D); // step 0 now ends at S + 5 D
    const changedInPause = effectiveSetpoint(all(resumed, base(S + 1.5 * D)), S + 2 * D + H);
    assert.equal(changedInPause.source, 'profile');
    const changedAfter = effectiveSetpoint(all(resumed, base(S + 2.5 * D)), S + 3 * D);
    assert.deepEqual([changedAfter.source, changedAfter.heldUntilMs], ['manual', S + 5 * D]);
    const withHold = effectiveSetpoint(
      { ...all(resumed, base(S + 1.5 * D)), manualHoldS: 7 * 86_400 },
      S + 3 * D,
    );
    assert.equal(withHold.source, 'profile', 'even with manualHoldS');
  });

  test('the base keeps its mode under a profile and a plain schedule entry; a preset entry brings its own', () => {
    const cooling = base(0, { mode: 'cool' });
    assert.equal(effectiveSetpoint(all(startProfileRun(S), cooling), S + H).mode, 'cool');
    assert.equal(effectiveSetpoint(withSchedule(cooling), june(1, 23)).mode, 'cool');
    assert.equal(effectiveSetpoint(withSchedule(cooling), june(7, 23)).mode, 'heat');
  });
});

describe('next: the coming changes, for plan', () => {
  test('schedule: the next three points with setpoint, mode and preset', () => {
    const result = effectiveSetpoint(withSchedule(base(0)), june(1, 6));
    assert.deepEqual(result.next, [
      { atMs: june(1, 7), setpoint: 21.5, mode: 'heat', preset: 'comfort', source: 'schedule' },
      { atMs: june(1, 22, 30), setpoint: 18, mode: 'heat', source: 'schedule' },
      { atMs: june(2, 7), setpoint: 21.5, mode: 'heat', preset: 'comfort', source: 'schedule' },
    ]);
  });

  test('held with manualHoldS: first the end of the hold with what is in force then', () => {
    const result = effectiveSetpoint(withSchedule(base(june(1, 8)), 7_200), june(1, 9));
    assert.deepEqual(
      result.next.map((n) => [n.atMs, n.setpoint]),
      [
        [june(1, 10), 21.5],
        [june(1, 22, 30), 18],
        [june(2, 7), 21.5],
      ],
    );
  });

  test('profile: the coming step starts, a ramp announced with where it goes', () => {
    const S = june(1, 12);
    const result = effectiveSetpoint(
      { base: base(0), profile: ale, run: startProfileRun(S), timeZone: BERLIN },
      S,
    );
    assert.deepEqual(result.next, [
      { atMs: S + 4 * D, setpoint: 21, mode: 'heat', source: 'profile', stepKind: 'ramp' },
      { atMs: S + 6 * D, setpoint: 21, mode: 'heat', source: 'profile', stepKind: 'hold' },
      { atMs: S + 9 * D, setpoint: 2, mode: 'heat', source: 'profile', stepKind: 'hold' },
    ]);
  });

  test('the base alone has nothing coming', () => {
    assert.deepEqual(effectiveSetpoint({ base: base(0), timeZone: BERLIN }, june(1, 6)).next, []);
  });
});
