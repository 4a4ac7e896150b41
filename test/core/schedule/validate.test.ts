import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Presets, Profile, WeeklySchedule } from '../../../src/core/schedule/types.js';
import { validatePresets, validateProfile, validateSchedule } from '../../../src/core/schedule/validate.js';
import { ale, BERLIN, home, presets } from './fixtures.js';

const P = 'loops.cellar.schedule';

describe('validateSchedule: errors a person can act on, with the path', () => {
  test('a valid schedule has no errors', () => {
    assert.deepEqual(validateSchedule({ weekly: home, presets, timeZone: BERLIN, manualHoldS: 3600 }, P), []);
    assert.deepEqual(validateSchedule({ timeZone: 'UTC' }, P), [], 'no weekly schedule at all is fine');
  });

  const cases: [string, WeeklySchedule, string][] = [
    [
      'an unknown preset',
      [{ days: ['mon'], at: '07:00', preset: 'ecco' }],
      `${P}.weekly[0].preset: unknown preset "ecco" (known: comfort, eco)`,
    ],
    [
      'a time that is not HH:MM',
      [{ days: ['mon'], at: '7:00', setpoint: 20 }],
      `${P}.weekly[0].at: "7:00" is not a time HH:MM (00:00–23:59)`,
    ],
    [
      'an unknown day',
      [{ days: ['monday' as 'mon'], at: '07:00', setpoint: 20 }],
      `${P}.weekly[0].days: "monday" is not one of mon, tue, wed, thu, fri, sat, sun`,
    ],
    [
      'no days',
      [{ days: [], at: '07:00', setpoint: 20 }],
      `${P}.weekly[0].days: list at least one day (mon, tue, wed, thu, fri, sat, sun)`,
    ],
    [
      'both a setpoint and a preset',
      [{ days: ['mon'], at: '07:00', setpoint: 20, preset: 'eco' }],
      `${P}.weekly[0]: give either setpoint or preset (exactly one)`,
    ],
    [
      'neither',
      [{ days: ['mon'], at: '07:00' }],
      `${P}.weekly[0]: give either setpoint or preset (exactly one)`,
    ],
    [
      'a setpoint that is not finite',
      [{ days: ['mon'], at: '07:00', setpoint: Number.NaN }],
      `${P}.weekly[0].setpoint: must be a finite number`,
    ],
    [
      'the same day and time twice',
      [
        { days: ['mon', 'tue'], at: '07:00', setpoint: 20 },
        { days: ['tue'], at: '07:00', setpoint: 21 },
      ],
      `${P}.weekly[1]: tue 07:00 is also set by weekly[0]`,
    ],
  ];
  for (const [why, weekly, error] of cases) {
    test(why, () => assert.deepEqual(validateSchedule({ weekly, presets, timeZone: BERLIN }, P), [error]));
  }

  test('an unknown time zone, a hold that is not positive', () => {
    assert.deepEqual(validateSchedule({ timeZone: 'Europe/Berlinn', manualHoldS: 0 }, P), [
      `${P}.timeZone: unknown time zone "Europe/Berlinn" (an IANA name such as Europe/Berlin, or UTC)`,
      `${P}.manualHoldS: must be a number of seconds above 0 (leave it out to hold until the next point)`,
    ]);
  });
});

describe('validatePresets', () => {
  test('setpoints must be finite, modes known', () => {
    const bad = {
      eco: { setpoint: Number.POSITIVE_INFINITY },
      away: { setpoint: 12, mode: 'vacation' },
    } as unknown as Presets;
    assert.deepEqual(validatePresets(bad, 'loops.cellar.presets'), [
      'loops.cellar.presets.eco.setpoint: must be a finite number',
      'loops.cellar.presets.away.mode: "vacation" is not one of off, heat, cool, heat_cool, humidify, dehumidify, auto',
    ]);
    assert.deepEqual(validatePresets(presets, 'p'), []);
  });
});

describe('validateProfile', () => {
  const Q = 'loops.fermenter.profiles.ale';
  test('a valid profile has no errors', () => assert.deepEqual(validateProfile(ale, Q), []));

  const cases: [string, Profile, string[]][] = [
    [
      'no steps',
      { steps: [] },
      [`${Q}.steps: list at least one step ({ holdS, setpoint } or { rampS, to })`],
    ],
    [
      'a zero-length step',
      { steps: [{ holdS: 0, setpoint: 18 }] },
      [`${Q}.steps[0].holdS: must be a number of seconds above 0`],
    ],
    [
      'a ramp first',
      { steps: [{ rampS: 60, to: 18 }] },
      [`${Q}.steps[0]: a ramp needs a step before it to start from (put a hold first)`],
    ],
    [
      'a step that is neither',
      { steps: [{ holdS: 60, setpoint: 18 }, { rampS: 60, holdS: 60, to: 2 } as never] },
      [`${Q}.steps[1]: a step is either { holdS, setpoint } or { rampS, to }`],
    ],
    [
      'values that are not finite',
      { steps: [{ holdS: Number.POSITIVE_INFINITY, setpoint: Number.NaN }] },
      [
        `${Q}.steps[0].holdS: must be a number of seconds above 0`,
        `${Q}.steps[0].setpoint: must be a finite number`,
      ],
    ],
  ];
  for (const [why, profile, errors] of cases) {
    test(why, () => assert.deepEqual(validateProfile(profile, Q), errors));
  }
});
