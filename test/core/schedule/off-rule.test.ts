/**
 * The off rule: a loop a person set `off` (the manual base's mode) stays
 * off whatever a schedule entry, preset or profile says; a schedule or preset can turn a loop
 * off, and never turns one on that a person switched off.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { effectiveSetpoint } from '../../../src/core/schedule/effective.js';
import { withPresetSelected } from '../../../src/core/schedule/manual.js';
import { startProfileRun } from '../../../src/core/schedule/profile.js';
import type {
  EffectiveInput,
  ManualBase,
  Presets,
  WeeklySchedule,
} from '../../../src/core/schedule/types.js';
import type { Mode } from '../../../src/core/types.js';
import { ale, BERLIN, D, H, home, june, presets } from './fixtures.js';

const withAway: Presets = { ...presets, away: { setpoint: 12, mode: 'off' } };
const everyDay = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
/** 08:00 away (mode off), 18:00 eco (mode heat), 22:00 a plain 19 °C. */
const awayDays: WeeklySchedule = [
  { days: [...everyDay], at: '08:00', preset: 'away' },
  { days: [...everyDay], at: '18:00', preset: 'eco' },
  { days: [...everyDay], at: '22:00', setpoint: 19 },
];
const base = (mode: Mode, extra: Partial<ManualBase> = {}): ManualBase => ({
  setpoint: 20,
  mode,
  changedAtMs: 0, // long before every point: never an override
  preset: null,
  ...extra,
});
const schedule = (b: ManualBase, weekly: WeeklySchedule = awayDays): EffectiveInput => ({
  base: b,
  presets: withAway,
  weekly,
  timeZone: BERLIN,
});
const S = june(1, 12);

describe('the off rule', () => {
  const cases: [why: string, input: EffectiveInput, nowMs: number, mode: Mode, setpoint: number][] = [
    [
      'person off, a preset entry with mode heat (eco): stays off',
      schedule(base('off')),
      june(1, 19),
      'off',
      17,
    ],
    ['person off, a plain setpoint entry: stays off', schedule(base('off')), june(1, 23), 'off', 19],
    [
      'person off, the home schedule (comfort, eco heat): stays off',
      schedule(base('off'), home),
      june(7, 23),
      'off',
      17,
    ],
    [
      'person off, a running profile: stays off',
      { base: base('off'), profile: ale, run: startProfileRun(S), timeZone: BERLIN },
      S + H,
      'off',
      18,
    ],
    [
      'person heat, a preset entry with mode off (away): the schedule turns it off',
      schedule(base('heat')),
      june(1, 9),
      'off',
      12,
    ],
    ['person heat, after away, eco brings heat back', schedule(base('heat')), june(1, 19), 'heat', 17],
    [
      'person heat, after away, a plain entry keeps the base mode',
      schedule(base('heat')),
      june(1, 23),
      'heat',
      19,
    ],
  ];
  for (const [why, input, nowMs, mode, setpoint] of cases) {
    test(why, () => {
      const effective = effectiveSetpoint(input, nowMs);
      assert.equal(effective.mode, mode);
      assert.equal(effective.setpoint, setpoint, 'the setpoint is still shown');
    });
  }

  test('a preset with mode off selected by hand (away) keeps the loop off through later points', () => {
    const away = withPresetSelected(base('heat'), 'away', withAway, june(1, 10)) as ManualBase;
    assert.equal(away.mode, 'off');
    // 18:00 eco would switch heat on; 22:00 a plain entry.
    assert.equal(effectiveSetpoint(schedule(away), june(1, 19)).mode, 'off');
    assert.equal(effectiveSetpoint(schedule(away), june(2, 19)).mode, 'off');
  });

  test('while off, the coming changes announce off too (plan and status never promise heat)', () => {
    const effective = effectiveSetpoint(schedule(base('off')), june(1, 9));
    assert.ok(effective.next.length > 0);
    assert.deepEqual(
      effective.next.map((change) => change.mode),
      effective.next.map(() => 'off'),
    );
    const profile = effectiveSetpoint(
      { base: base('off'), profile: ale, run: startProfileRun(S), timeZone: BERLIN },
      S + D,
    );
    assert.deepEqual(
      profile.next.map((change) => change.mode),
      profile.next.map(() => 'off'),
    );
  });

  test('a manual base that is not off is left as the schedule makes it (heat under a profile)', () => {
    const effective = effectiveSetpoint(
      { base: base('heat'), profile: ale, run: startProfileRun(S), timeZone: BERLIN },
      S + H,
    );
    assert.equal(effective.mode, 'heat');
  });
});
