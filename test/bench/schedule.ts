/**
 * The cost of the effective setpoint per loop per cycle (Pi Zero):
 * `npm run bench:schedule` (node --import tsx test/bench/schedule.ts [--json]).
 *
 * Each case calls what a loop's cycle calls, once per simulated cycle, with `now` moving on
 * by a cycle (1 s) each time, so memos only help as much as they would in a running daemon.
 * Prints the mean time per call in µs. Not a test: always exits 0 unless it crashes.
 */
import { nodeTimeZone } from '../../src/config/schema/schedule.js';
import { effectiveSetpoint } from '../../src/core/schedule/effective.js';
import { effectiveDesired, type ScheduleConfig } from '../../src/core/schedule/effective-desired.js';
import type { EffectiveInput, Presets, WeeklySchedule } from '../../src/core/schedule/types.js';

const CYCLE_MS = 1_000;
const CALLS = 20_000;
const START_MS = Date.UTC(2026, 10, 30, 5); // a Monday

const presets: Presets = { comfort: { setpoint: 21.5 }, eco: { setpoint: 17, mode: 'heat' } };
const workdays = ['mon', 'tue', 'wed', 'thu', 'fri'] as const;
const weekly: WeeklySchedule = [
  { days: [...workdays], at: '06:30', preset: 'comfort' },
  { days: [...workdays], at: '22:30', setpoint: 18 },
  { days: ['sat', 'sun'], at: '08:00', setpoint: 21 },
  { days: ['sun'], at: '22:00', preset: 'eco' },
];
const base = { setpoint: 20, mode: 'heat' as const, changedAtMs: 0, preset: null };
const config: ScheduleConfig = { presets, schedule: { weekly } };
const nodeWithoutZone = { node: {} };

function timePerCallUs(run: (nowMs: number) => unknown): number {
  for (let i = 0; i < 500; i++) run(START_MS - (i + 1) * CYCLE_MS); // warm up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) run(START_MS + i * CYCLE_MS);
  return Number(process.hrtime.bigint() - t0) / 1_000 / CALLS;
}

const berlin: EffectiveInput = { base, presets, weekly, timeZone: 'Europe/Berlin' };
const cases: [name: string, run: (nowMs: number) => unknown][] = [
  ['effectiveSetpoint, weekly schedule, Europe/Berlin', (nowMs) => effectiveSetpoint(berlin, nowMs)],
  [
    'effectiveSetpoint, weekly schedule, UTC',
    (nowMs) => effectiveSetpoint({ ...berlin, timeZone: 'UTC' }, nowMs),
  ],
  ['nodeTimeZone, node.timeZone unset (the system zone)', () => nodeTimeZone(nodeWithoutZone)],
  [
    "a loop's cycle: effectiveDesired(nodeTimeZone(config)), zone unset",
    (nowMs) => effectiveDesired({ setpoint: 20, mode: 'heat' }, config, nodeTimeZone(nodeWithoutZone), nowMs),
  ],
];

const rows = cases.map(([name, run]) => ({ name, usPerCall: Math.round(timePerCallUs(run) * 100) / 100 }));
if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
} else {
  process.stdout.write(`schedule bench: mean per call over ${CALLS} cycles of ${CYCLE_MS / 1000} s\n`);
  for (const row of rows) process.stdout.write(`  ${row.usPerCall.toFixed(2).padStart(9)} µs  ${row.name}\n`);
}
