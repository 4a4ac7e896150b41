/**
 * durations are capped (10 years; 1e13 s made every cycle throw "Invalid
 * time value"), and preset and profile names must be usable as payloads and HA options.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  MAX_DURATION_S,
  validatePresets,
  validateProfile,
  validateSchedule,
} from '../../../src/core/schedule/validate.js';
import { BERLIN } from './fixtures.js';

describe('durations: at most 10 years', () => {
  const P = 'loops.living.schedule';
  const Q = 'loops.fermenter.profiles.ale';
  test('manualHoldS of 1e13 s is refused with the cap in the message; 10 years exactly is fine', () => {
    assert.deepEqual(validateSchedule({ timeZone: BERLIN, manualHoldS: 1e13 }, P), [
      `${P}.manualHoldS: 10000000000000 s is longer than 315360000 s (10 years); a longer one is surely a mistake`,
    ]);
    assert.deepEqual(validateSchedule({ timeZone: BERLIN, manualHoldS: MAX_DURATION_S }, P), []);
  });

  test('a hold or a ramp of 1e13 s is refused', () => {
    const profile = {
      steps: [
        { holdS: 1e13, setpoint: 18 },
        { rampS: MAX_DURATION_S + 1, to: 20 },
        { holdS: MAX_DURATION_S, setpoint: 20 },
      ],
    };
    assert.deepEqual(validateProfile(profile, Q), [
      `${Q}.steps[0].holdS: 10000000000000 s is longer than 315360000 s (10 years); a longer one is surely a mistake`,
      `${Q}.steps[1].rampS: 315360001 s is longer than 315360000 s (10 years); a longer one is surely a mistake`,
    ]);
  });
});

describe('preset and profile names', () => {
  const cases: [why: string, name: string, error: string | undefined][] = [
    ['a plain name', 'comfort', undefined],
    ['64 characters', 'x'.repeat(64), undefined],
    ['inner spaces', 'night time', undefined],
    ['65 characters', 'x'.repeat(65), `is longer than 64 characters`],
    ['a space at the start', ' eco', 'has spaces at its start or end'],
    ['a space at the end', 'eco ', 'has spaces at its start or end'],
    ['a newline', 'e\nco', 'contains control characters'],
    ['a tab', 'e\tco', 'contains control characters'],
    ['DEL', 'eco\u007f', 'contains control characters'],
    ['none', 'none', 'is reserved (it means no %s); choose another'],
    ['None (what HA sends)', 'None', 'is reserved (it means no %s); choose another'],
    ['NONE', 'NONE', 'is reserved (it means no %s); choose another'],
  ];
  for (const [why, name, error] of cases) {
    test(`${why}: ${error === undefined ? 'accepted' : 'refused'}`, () => {
      const presetErrors = validatePresets({ [name]: { setpoint: 20 } }, 'presets');
      const profileErrors = validateProfile(
        { steps: [{ holdS: 60, setpoint: 20 }] },
        `profiles.${name}`,
        name,
      );
      if (error === undefined) {
        assert.deepEqual([presetErrors, profileErrors], [[], []]);
        return;
      }
      const shown = JSON.stringify(name);
      assert.deepEqual(presetErrors, [`presets: preset name ${shown} ${error.replace('%s', 'preset')}`]);
      assert.deepEqual(profileErrors, [`profiles: profile name ${shown} ${error.replace('%s', 'profile')}`]);
    });
  }

  test('an empty name still needs a name', () => {
    assert.deepEqual(validatePresets({ '': { setpoint: 20 } }, 'presets'), [
      'presets: a preset needs a name',
    ]);
  });
});
