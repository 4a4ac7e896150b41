import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { effectiveSetpoint } from '../../../src/core/schedule/effective.js';
import { startProfileRun } from '../../../src/core/schedule/profile.js';
import type {
  EffectiveInput,
  ManualBase,
  Profile,
  WeeklySchedule,
} from '../../../src/core/schedule/types.js';
import { ale, BERLIN, D, home, june, presets } from './fixtures.js';

const base: ManualBase = { setpoint: 20, mode: 'heat', changedAtMs: 0, preset: null };
const S = june(1, 12);
const full: EffectiveInput = {
  base,
  presets,
  weekly: home,
  profile: ale,
  run: startProfileRun(S),
  timeZone: BERLIN,
};

describe('hostile input: defined results, never a throw', () => {
  test('now not a usable instant (NaN, ±Infinity, beyond Date, before 1970): the stored manual state', () => {
    for (const nowMs of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e300, -1]) {
      const result = effectiveSetpoint(full, nowMs);
      assert.deepEqual(
        result,
        { setpoint: 20, mode: 'heat', source: 'manual', preset: null, next: [] },
        String(nowMs),
      );
    }
  });

  test('a base setpoint that is not finite turns the loop off (its safe state)', () => {
    for (const setpoint of [Number.NaN, Number.POSITIVE_INFINITY]) {
      const result = effectiveSetpoint({ base: { ...base, setpoint }, timeZone: BERLIN }, june(1, 9));
      assert.equal(result.mode, 'off');
    }
  });

  test('a schedule entry or preset whose setpoint is not finite is ignored: the entry before stays', () => {
    const weekly: WeeklySchedule = [
      { days: ['mon'], at: '07:00', setpoint: 19 },
      { days: ['mon'], at: '08:00', setpoint: Number.NaN },
      { days: ['mon'], at: '09:00', preset: 'broken' },
    ];
    const broken = { broken: { setpoint: Number.POSITIVE_INFINITY } };
    const result = effectiveSetpoint({ base, presets: broken, weekly, timeZone: BERLIN }, june(1, 10));
    assert.deepEqual([result.setpoint, result.source], [19, 'schedule']);
  });

  test('a profile step whose setpoint is not finite: the profile is skipped, the schedule rules', () => {
    const profile: Profile = { steps: [{ holdS: 3600, setpoint: Number.NaN }] };
    const result = effectiveSetpoint({ ...full, profile }, june(1, 12, 30));
    assert.deepEqual([result.setpoint, result.source], [21.5, 'schedule']);
  });

  test('an empty schedule, or one that is not a list: the base', () => {
    for (const weekly of [[], undefined, 'mon 07:00' as unknown as WeeklySchedule]) {
      assert.equal(
        effectiveSetpoint({ base, presets, weekly, timeZone: BERLIN }, june(1, 10)).source,
        'manual',
      );
    }
  });

  test('an unknown time zone: the schedule cannot be placed (base), a profile still runs (it needs none)', () => {
    assert.equal(
      effectiveSetpoint({ base, weekly: home, presets, timeZone: 'Mars/Base' }, june(1, 10)).source,
      'manual',
    );
    assert.equal(effectiveSetpoint({ ...full, timeZone: 'Mars/Base' }, S + D).source, 'profile');
  });

  test('a zero-length step: skipped, the profile goes on', () => {
    const profile: Profile = {
      steps: [
        { holdS: 0, setpoint: 99 },
        { holdS: 3600, setpoint: 18 },
      ],
    };
    assert.equal(effectiveSetpoint({ ...full, profile }, S).setpoint, 18);
  });

  test('manualHoldS not a positive number is ignored (held until the next point); changedAtMs NaN never overrides', () => {
    for (const manualHoldS of [0, -5, Number.NaN]) {
      const input = {
        base: { ...base, changedAtMs: june(1, 8) },
        presets,
        weekly: home,
        timeZone: BERLIN,
        manualHoldS,
      };
      assert.equal(effectiveSetpoint(input, june(1, 9)).heldUntilMs, june(1, 22, 30), String(manualHoldS));
    }
    const nanBase = { base: { ...base, changedAtMs: Number.NaN }, presets, weekly: home, timeZone: BERLIN };
    assert.equal(effectiveSetpoint(nanBase, june(1, 9)).source, 'schedule');
  });

  test('a table of odd inputs never throws', () => {
    const odd = [Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 1e20];
    for (const x of odd) {
      const inputs: EffectiveInput[] = [
        { ...full, base: { ...base, changedAtMs: x, setpoint: x } },
        { ...full, run: { startedAtMs: x, pausedTotalMs: x, pausedAtMs: x } },
        { ...full, manualHoldS: x, profile: { steps: [{ rampS: x, to: x }] } },
        { ...full, weekly: [{ days: ['mon'], at: String(x), setpoint: x }], timeZone: String(x) },
        { ...full, profile: { steps: null as never }, weekly: [null as never] },
        { ...full, profile: { steps: [null as never, 5 as never] }, presets: { eco: null as never } },
        { ...full, run: undefined, base: { ...base, preset: 'eco' }, presets: { eco: null as never } },
        {
          ...full,
          run: undefined,
          weekly: [{ days: ['mon'], at: '07:00', preset: 'eco' }],
          presets: null as never,
        },
      ];
      for (const input of inputs) {
        for (const nowMs of [...odd, june(1, 9)]) {
          assert.doesNotThrow(() => effectiveSetpoint(input, nowMs), `${x} at ${nowMs}`);
        }
      }
    }
  });
});
