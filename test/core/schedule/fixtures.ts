/** Shared data for the schedule tests: a Berlin home schedule, presets and a fermentation profile. */
import { epochOfLocal } from '../../../src/core/schedule/local-time.js';
import type { Presets, Profile, WeeklySchedule } from '../../../src/core/schedule/types.js';

export const BERLIN = 'Europe/Berlin';
export const H = 3_600_000;
export const D = 24 * H;

/** An instant given in UTC (month 1..12). */
export const utc = (y: number, m: number, d: number, h: number, mi = 0, sec = 0): number =>
  Date.UTC(y, m - 1, d, h, mi, sec);

/** A Berlin wall time in the week of Monday 2026-06-01 (CEST all week). */
export const june = (day: number, hour: number, minute = 0): number =>
  epochOfLocal({ year: 2026, month: 6, day, hour, minute }, BERLIN)!;

export const presets: Presets = { comfort: { setpoint: 21.5 }, eco: { setpoint: 17, mode: 'heat' } };

const workdays = ['mon', 'tue', 'wed', 'thu', 'fri'] as const;
export const home: WeeklySchedule = [
  { days: [...workdays], at: '07:00', preset: 'comfort' }, // 0
  { days: [...workdays], at: '22:30', setpoint: 18 }, // 1
  { days: ['sat', 'sun'], at: '09:00', setpoint: 21 }, // 2
  { days: ['sun'], at: '22:00', preset: 'eco' }, // 3
];

const daysS = (days: number) => days * 86_400;
/** 18 °C for 4 days, ramp to 21 °C over 2 days, hold 3 days, crash to 2 °C for 2 days. */
export const ale: Profile = {
  steps: [
    { holdS: daysS(4), setpoint: 18 },
    { rampS: daysS(2), to: 21 },
    { holdS: daysS(3), setpoint: 21 },
    { holdS: daysS(2), setpoint: 2 },
  ],
};
