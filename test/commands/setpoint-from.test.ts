/** `homeostat status` through the API: where the setpoint in force comes from. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setpointFrom } from '../../src/commands/api-inspect.js';

const desired = { setpointSource: 'http', modeSource: 'file' };
const profile = {
  name: 'ale',
  state: 'running' as const,
  stepIndex: 1,
  stepCount: 4,
  stepKind: 'ramp' as const,
  stepRemainingS: 6_600,
  totalRemainingS: 20_000,
  stepEndsAt: null,
  endsAt: null,
};

const cases: [string, Parameters<typeof setpointFrom>[0], string][] = [
  ['no schedule: the stored source', { desired }, 'http'],
  [
    'manual, held',
    {
      desired,
      schedule: { source: 'manual', preset: null, heldUntil: '2026-12-01T06:30:00.000Z', next: [] },
    },
    'http, held until 2026-12-01T06:30:00.000Z',
  ],
  [
    'a preset chosen by hand',
    { desired, schedule: { source: 'preset', preset: 'eco', next: [] } },
    'preset eco',
  ],
  [
    'the schedule, naming a preset',
    { desired, schedule: { source: 'schedule', preset: 'comfort', next: [] } },
    'the schedule (preset comfort)',
  ],
  [
    'a profile',
    { desired, schedule: { source: 'profile', preset: null, profile, next: [] } },
    'profile ale (running, step 2/4 ramp, 1 h 50 min left in the step)',
  ],
];
for (const [when, view, expected] of cases) {
  test(`setpoint from: ${when}`, () => assert.equal(setpointFrom(view), expected));
}
